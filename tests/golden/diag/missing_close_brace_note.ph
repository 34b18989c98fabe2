@launch(128)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let i = ctx.block.x * 128
  for j in range(0, 4) {
    Y[i + j * 32 :+ 32] = X[i + j * 32 :+ 32]
  }
