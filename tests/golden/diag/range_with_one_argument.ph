@launch(128)
kernel row_sum(X: tensor<f32>[M, 256], Y: tensor<f32>[M, 1]) {
  let r = ctx.block.x * 16
  var acc: tile<f32>[16, 1] = 0.0
  for c in range(4) {
    acc += rowsum(X[r :+ 16, c * 64 :+ 64])
  }
  Y[r :+ 16, :] = acc
}
