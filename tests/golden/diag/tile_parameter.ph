@launch(128)
kernel scale(X: tile<f32>[128], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = 2.0 * X
}
