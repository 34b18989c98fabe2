@launch(128)
kernel sample(X: tensor<f32>[N], Y: tensor<f32>[N], pos: f32) {
  let i = ctx.block.x * 128
  Y[i] = X[pos * 2.0]
}
