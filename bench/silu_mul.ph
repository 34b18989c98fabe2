// SiLU-and-multiply (the gated MLP's activation): O = silu(G) * U with
// silu(g) = g / (1 + exp(-g)), elementwise over [M, N] bf16 tensors.
// One CTA takes a [BM, BN] tile; edges past M and N are masked by the slices.
@autotune(BM in [1, 4], BN in [1024, 2048])
@launch(256)
@grid(cdiv(N, BN), cdiv(M, BM))
kernel silu_mul(G: tensor<bf16>[M, N], U: tensor<bf16>[M, N], O: tensor<bf16>[M, N]) {
  let m0 = ctx.block.y * BM
  let n0 = ctx.block.x * BN
  let g = f32(G[m0 :+ BM, n0 :+ BN])
  let u = U[m0 :+ BM, n0 :+ BN]
  O[m0 :+ BM, n0 :+ BN] = bf16(g / (1.0 + exp(-g)) * u)
}
