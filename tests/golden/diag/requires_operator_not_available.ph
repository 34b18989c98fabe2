@requires(N << 2 > 1)
kernel k(X: tensor<f32>[N]) {
  X[0 :+ 4] = X[0 :+ 4]
}
