@launch(128)
kernel scale(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  let x = X[i :+ 128]
  Y[i :+ 128] = x × 2.0
}
