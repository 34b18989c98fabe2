// Ported from the shape of the Liger-Kernel SwiGLU forward: one program a row,
// the whole row in one 1-D block (-D BN=...), c = silu(a) * b, bf16.
// bench-build: BN=16384 BN=8192
@autotune(NT in [128, 1024])
@launch(NT)
@grid(R)
kernel swiglu(A: tensor<bf16>[R, N], B: tensor<bf16>[R, N], C: tensor<bf16>[R, N]) {
  let row = program_id(0)
  let a = f32(A[row, 0 :+ BN])
  let b = f32(B[row, 0 :+ BN])
  C[row, 0 :+ BN] = bf16(a / (1.0 + exp(-a)) * b)
}
