kernel r(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  Y[(7 - ctx.block.x) * 16 :+ 16] = X[0 :+ 16]
}
