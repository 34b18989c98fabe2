@launch(128)
kernel flags(X: tensor<f32>[N], Y: tensor<bool>[N]) {
  let i = ctx.block.x * 128
  let pos = X[i :+ 128] > 0.0
  Y[i :+ 128] = pos == 1
}
