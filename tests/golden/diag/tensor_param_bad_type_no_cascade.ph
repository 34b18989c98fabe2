@launch(128)
kernel pack(X: tensor<f32>[N], Y: tensor<f32>[N / 2]) {
  let i = ctx.block.x * 64
  Y[i :+ 64] = X[2 * i :+ 64]
}
