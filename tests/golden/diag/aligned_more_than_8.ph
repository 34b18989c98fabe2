// KernelInfo keeps 8 @aligned dims: a ninth was dropped without a word.
@aligned(A = 1, B = 1, C = 1, D = 1, E = 1, F = 1, G = 1, H = 1, I = 1)
kernel k(X: tensor<f32>[A, B, C, D, E], Y: tensor<f32>[F, G, H, I]) {
  X[0, 0, 0, 0, 0] = 1.0
}
