@launch(128)
@no_tma(1)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = X[i :+ 128]
}
