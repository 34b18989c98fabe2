// Slices that start before a tensor (spec 8): a causal convolution's halo,
// X[t0 - 2 :+ 64] at t0 = 0, reads the elements before the start as zeros,
// as it reads those past the end.
@grid(cdiv(N, 64))
kernel conv(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  let t0 = ctx.block.x * 64
  let a = X[t0 - 2 :+ 64]
  let b = X[t0 - 1 :+ 64]
  let c = X[t0 :+ 64]
  Y[t0 :+ 64] = a + b + c
}
