@launch(128)
kernel row_sum(X: tensor<f32>[M, K], Y: tensor<f32>[M, 1]) {
  let r = ctx.block.x * 16
  var t: tile<f32>[16, K] = X[r :+ 16, 0 :+ 64]
  Y[r :+ 16, :] = rowsum(t)
}
