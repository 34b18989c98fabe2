// phobosc: -D BM=1.5
@launch(128)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  var t: tile<f32>[BM] = X[0 :+ BM]
  Y[0 :+ BM] = t
}
