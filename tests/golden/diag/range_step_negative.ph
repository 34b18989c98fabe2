@launch(128)
kernel row_sum(X: tensor<f32>[M, K], Y: tensor<f32>[M, 1]) {
  let r = ctx.block.x * 16
  var acc: tile<f32>[16, 1] = 0.0
  for k in range(K - 64, 0, -64) {
    acc += rowsum(X[r :+ 16, k :+ 64])
  }
  Y[r :+ 16, :] = acc
}
