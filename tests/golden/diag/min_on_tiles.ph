@launch(128)
kernel clamp(X: tensor<f32>[N], Y: tensor<f32>[N], hi: f32) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = min(X[i :+ 128], hi)
}
