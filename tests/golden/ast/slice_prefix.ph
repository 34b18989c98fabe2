@grid(1)
kernel k(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  Y[:64] = X[:64] * 2.0
}
