kernel t(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  Y[ctx.block.x * 16 + ctx.block.y * 4 :+ 4] = X[0 :+ 4]
}
