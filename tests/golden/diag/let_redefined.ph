@launch(128)
kernel axpy(X: tensor<f32>[N], Y: tensor<f32>[N], a: f32) {
  let i = ctx.block.x * 128
  let x = X[i :+ 128]
  let x = a * x + Y[i :+ 128]
  Y[i :+ 128] = x
}
