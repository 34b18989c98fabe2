@launch(128)
kernel scale(X: tensor<f32>[N], Y: tensor<f32>[N], N: i32) {
  let i = ctx.block.x * 128
  Y[i :+ 128] = 2.0 * X[i :+ 128]
}
