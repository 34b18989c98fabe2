@launch(128)
kernel unpack(X: tensor<f32>[2 * N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 64
  Y[i :+ 64] = X[2 * i :+ 64]
}
