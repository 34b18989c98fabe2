// phobosc: -D N=-5
kernel k(A: tensor<f32>[N]) {
  A[0] = 1.0
}
