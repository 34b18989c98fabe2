// The length of 'start : end' is end - start as a linear form; here a
// coefficient, 2^62 * 4, overflows 64 bits (it wrapped to 0, and the slice
// passed as 8 long).
kernel k(A: tensor<f32>[N]) {
  let i = i64(ctx.block.x)
  let x = A[i * 4611686018427387904 * 4 : i * 4611686018427387904 * 4 + 8]
  A[0 :+ 8] = x
}
