// Row kernels whose rows span a little more than one block (spec 15.13):
// where BN < N <= 2 BN each loop over the row runs exactly twice, and the
// copy over two blocks holds both blocks of the first pass for the later
// ones. The cases give N past 2 BN (only the variant runs), in (BN, 2 BN]
// (the copy over two blocks runs beside it) and at most BN (the one-pass
// copy runs, the copy over two blocks must not).

// Triton's layer-norm tutorial, as its users write it: a program a row,
// three loops over the row (the mean, the variance of x - mean, then
// normalize with weight and bias).
@autotune(BS in [32, 128])
@grid(R)
kernel layer_norm3(X: tensor<f32>[R, N], W: tensor<f32>[N], B: tensor<f32>[N], Y: tensor<f32>[R, N]) {
  let row = program_id(0)
  var acc: tile<f32>[BS] = 0.0
  for off in range(0, N, BS) {
    acc += X[row, off :+ BS]
  }
  let mean = rowsum(acc) / f32(N)
  var acc2: tile<f32>[BS] = 0.0
  for off in range(0, N, BS) {
    let cols = off + iota(BS)
    let d = where(cols < N, X[row, off :+ BS] - mean, 0.0)
    acc2 += d * d
  }
  let rstd = 1.0 / sqrt(rowsum(acc2) / f32(N) + 0.00001)
  for off in range(0, N, BS) {
    let y = (X[row, off :+ BS] - mean) * rstd * W[off :+ BS] + B[off :+ BS]
    Y[row, off :+ BS] = y
  }
}
