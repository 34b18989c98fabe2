@launch(128)
kernel zero(Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = f32()
}
