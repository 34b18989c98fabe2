// A 2-D elementwise kernel as a user writes one: tanh GELU over [M, N] bf16,
// a [BM, BN] block a program.
@autotune(BM in [1, 8], BN in [512, 2048])
@grid(cdiv(N, BN), cdiv(M, BM))
kernel gelu(X: tensor<bf16>[M, N], Y: tensor<bf16>[M, N]) {
  let m0 = program_id(1) * BM
  let n0 = program_id(0) * BN
  let x = f32(X[m0 :+ BM, n0 :+ BN])
  Y[m0 :+ BM, n0 :+ BN] = bf16(0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x))))
}
