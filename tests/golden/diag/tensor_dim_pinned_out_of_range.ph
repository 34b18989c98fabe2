// phobosc: -D N=5000000000
// A dim pinned by a constant must be a possible extent, 1 to 2^31 - 1.
kernel k(A: tensor<f32>[N]) {
  A[0] = 1.0
}
