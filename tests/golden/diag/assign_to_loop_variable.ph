@launch(128)
kernel skip_odd(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  for i in range(0, N, 128) {
    Y[i :+ 128] = X[i :+ 128]
    i = i + 128
  }
}
