@requires(N >= n)
kernel k(X: tensor<f32>[N], n: i32) {
  X[0 :+ 4] = X[0 :+ 4]
}
