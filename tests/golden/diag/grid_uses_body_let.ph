@launch(128)
@grid(blocks)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let blocks = cdiv(N, 128)
  let i = ctx.block.x * 128
  Y[i :+ 128] = X[i :+ 128]
}
