@launch(128)
kernel row_max(X: tensor<f32>[M, 64], Y: tensor<f32>[M, 1]) {
  let r = ctx.block.x * 16
  Y[r :+ 16, :] = rowmax(X[r :+ 16, :], axis = 1)
}
