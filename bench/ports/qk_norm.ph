// A per-head RMSNorm over the head dim (the q/k norm of Qwen3-style
// attention), as a user ports it: a block of BT tokens by BH heads (BH the
// next power of two of the head count, -D BH=...) by the head dim, a rank-3
// tile of a [T, H, D] tensor; bf16 in and out, f32 inside.
// bench-build: BH=32
@autotune(BT in [1, 2], NT in [128, 256])
@launch(NT)
@grid(cdiv(T, BT))
kernel qk_norm(X: tensor<bf16>[T, H, D], W: tensor<bf16>[D], Y: tensor<bf16>[T, H, D], eps: f32) {
  let t0 = program_id(0) * BT
  let x = f32(X[t0 :+ BT, 0 :+ BH, 0 :+ 128])
  let rstd = 1.0 / sqrt(rowsum(x * x) / f32(D) + eps)
  Y[t0 :+ BT, 0 :+ BH, 0 :+ 128] = bf16(x * rstd * f32(W[0 :+ 128]))
}
