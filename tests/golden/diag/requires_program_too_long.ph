@requires(N >= N + N + N + N + N + N + N + N + N + N + N + N + N + N + N + N + N + N)
kernel k(X: tensor<f32>[N]) {
  X[0 :+ 4] = X[0 :+ 4]
}
