// Fused residual add + RMSNorm, as in a transformer block:
//   H = X + Res             (rounded to bf16, as the unfused torch code does)
//   Res = H                 (the new residual, written back in place)
//   Y = H / sqrt(mean(H^2) + eps) * W
// rows of any length N. One CTA takes BR rows; the first pass sums H^2 over
// column blocks of BN, the second recomputes H, writes it back into Res and
// writes Y. (Res is read in the second pass before it is overwritten; the
// first pass only reads it.)
// NT threads a CTA, a tuning point beside BR and BN: a row spread over fewer
// warps holds more columns a thread in flight and meets across fewer warps.
@autotune(BR in [1, 8], BN in [1024, 8192], NT in [128, 256])
@launch(NT)
@dynshared
@grid(cdiv(R, BR))
kernel rmsnorm_residual(X: tensor<bf16>[R, N], Res: tensor<bf16>[R, N], W: tensor<bf16>[N],
                        Y: tensor<bf16>[R, N], eps: f32) {
  let r0 = ctx.block.x * BR
  var ss: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let h = f32(bf16(X[r0 :+ BR, c0 :+ BN] + Res[r0 :+ BR, c0 :+ BN]))
    ss += rowsum(h * h)
  }
  let rstd = 1.0 / sqrt(ss / f32(N) + eps)
  for c0 in range(0, N, BN) {
    let h = bf16(X[r0 :+ BR, c0 :+ BN] + Res[r0 :+ BR, c0 :+ BN])
    Res[r0 :+ BR, c0 :+ BN] = h
    Y[r0 :+ BR, c0 :+ BN] = bf16(h * rstd * W[c0 :+ BN])
  }
}
