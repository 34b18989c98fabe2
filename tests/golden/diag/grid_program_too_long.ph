// 33 postfix steps: libphobos evaluates at most 32 (MF_MAX_GRID_OPS).
@grid(N + N + N + N + N + N + N + N + N + N + N + N + N + N + N + N + N)
kernel k(A: tensor<f32>[N]) {
  A[0] = 1.0
}
