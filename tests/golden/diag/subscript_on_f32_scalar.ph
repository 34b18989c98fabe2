@launch(128)
kernel scale(X: tensor<f32>[N], Y: tensor<f32>[N], w: f32) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = w[0] * X[i :+ 128]
}
