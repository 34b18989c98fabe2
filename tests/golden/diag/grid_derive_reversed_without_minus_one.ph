kernel rev(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  Y[(ctx.grid.x - ctx.block.x) * 4 :+ 4] = X[0 :+ 4]
}
