// Ported from the shape of Triton's layer-norm tutorial (forward): one program
// a row, three loops over the row in 1-D blocks of BS: the mean, the variance
// of (x - mean), then normalize with the weight and bias. bf16 in and out,
// statistics in f32.
@autotune(BS in [512, 4096])
@grid(R)
kernel layer_norm(X: tensor<bf16>[R, N], Y: tensor<bf16>[R, N], W: tensor<bf16>[N],
                  B: tensor<bf16>[N], eps: f32) {
  let row = program_id(0)
  var acc: tile<f32>[BS] = 0.0
  for off in range(0, N, BS) {
    acc += f32(X[row, off :+ BS])
  }
  let mean = rowsum(acc) / f32(N)
  var acc2: tile<f32>[BS] = 0.0
  for off in range(0, N, BS) {
    let cols = off + iota(BS)
    let d = where(cols < N, f32(X[row, off :+ BS]) - mean, 0.0)
    acc2 += d * d
  }
  let rstd = 1.0 / sqrt(rowsum(acc2) / f32(N) + eps)
  for off in range(0, N, BS) {
    let x = f32(X[row, off :+ BS])
    let y = (x - mean) * rstd * f32(W[off :+ BS]) + f32(B[off :+ BS])
    Y[row, off :+ BS] = bf16(y)
  }
}
