@launch(128)
kernel clamp_rows(X: tensor<f32>[M, 64], F: tensor<f32>[32], Y: tensor<f32>[M, 64]) {
  let r = ctx.block.x * 16
  let x = X[r :+ 16, :]
  let floor = F[:]
  Y[r :+ 16, :] = tmax(x, floor)
}
