@launch(128)
kernel drain(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  var left = N
  while left > 0
    left -= 128
}
