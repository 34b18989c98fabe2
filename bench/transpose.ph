// Y = X^T for a [M, N] f32 matrix. One CTA takes a [BM, BN] tile of X and
// stores its transpose into Y's [BN, BM] tile; the edges are masked.
@autotune(BM in [32, 64], BN in [32, 64])
@launch(256)
@grid(cdiv(N, BN), cdiv(M, BM))
kernel transpose(X: tensor<f32>[M, N], Y: tensor<f32>[N, M]) {
  let m0 = ctx.block.y * BM
  let n0 = ctx.block.x * BN
  Y[n0 :+ BN, m0 :+ BM] = transpose(X[m0 :+ BM, n0 :+ BN])
}
