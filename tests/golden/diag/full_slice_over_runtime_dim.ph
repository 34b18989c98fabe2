@launch(128)
kernel row_sum(X: tensor<f32>[M, K], Y: tensor<f32>[M, 1]) {
  let r = ctx.block.x * 16
  Y[r :+ 16, :] = rowsum(X[r :+ 16, :])
}
