// Ported from the shape of the Liger-Kernel RMSNorm forward: one program a
// row, the whole row in one 1-D block of BN = next_power_of_2(N) (-D BN=...),
// mean of squares, rsqrt, times the weight; bf16 in and out, f32 inside.
// bench-build: BN=4096 BN=8192
@autotune(NT in [128, 1024])
@launch(NT)
@grid(R)
kernel rms_norm(X: tensor<bf16>[R, N], W: tensor<bf16>[N], Y: tensor<bf16>[R, N], eps: f32) {
  let row = program_id(0)
  let x = f32(X[row, 0 :+ BN])
  let rstd = 1.0 / sqrt(rowsum(x * x) / f32(N) + eps)
  Y[row, 0 :+ BN] = bf16(x * rstd * f32(W[0 :+ BN]))
}
