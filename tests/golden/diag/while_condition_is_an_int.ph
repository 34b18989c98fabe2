@launch(128)
kernel drain(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  var left = N
  while left {
    Y[left - 128 :+ 128] = X[left - 128 :+ 128]
    left -= 128
  }
}
