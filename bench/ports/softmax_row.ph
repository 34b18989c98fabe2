// Ported from the shape of Triton's fused-softmax tutorial: one program a row,
// the whole row in one 1-D block of BN = next_power_of_2(N) columns (pinned
// with -D BN=... when built, as the tutorial picks BLOCK_SIZE at launch), the
// slack read as -inf, max, exp, sum, divide, store.
// bench-build: BN=1024 BN=4096 BN=65536
@autotune(NT in [128, 1024])
@launch(NT)
@grid(R)
kernel softmax(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let row = program_id(0)
  let cols = iota(BN)
  let x = where(cols < N, X[row, 0 :+ BN], -inf)
  let z = x - rowmax(x)
  let num = exp(z)
  let den = rowsum(num)
  Y[row, 0 :+ BN] = num / den
}
