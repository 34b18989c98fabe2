@grid(where(N > 64, N, 64))
kernel k(A: tensor<f32>[N]) {
  A[0] = 1.0
}
