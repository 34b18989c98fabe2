@launch(128)
kernel big(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  var t: tile<f32>[1 << 64] = 0.0
  Y[0 :+ 64] = t
}
