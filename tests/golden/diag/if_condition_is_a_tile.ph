@launch(128)
kernel relu(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  let x = X[i :+ 128]
  if x > 0.0 {
    Y[i :+ 128] = x
  }
}
