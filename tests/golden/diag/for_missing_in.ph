@launch(128)
kernel copy(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  for i range(0, N, 128) {
    Y[i :+ 128] = X[i :+ 128]
  }
}
