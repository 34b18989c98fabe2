kernel g(X: tensor<f32>[N], Y: tensor<f32>[N], Idx: tensor<i32>[N]) {
  Y[Idx[ctx.block.x] :+ 1] = X[0 :+ 1]
}
