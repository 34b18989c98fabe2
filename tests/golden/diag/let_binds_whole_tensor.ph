@launch(128)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  let x = X
  Y[i :+ 128] = x[i :+ 128]
}
