// LayerNorm over the last dim: Y = (X - mean) / sqrt(var + eps) * W + B,
// rows of any length N, bf16 in and out, statistics in f32.
//
// One CTA takes BR rows. The first pass sums x and x^2 over column blocks of
// BN (columns past N load as zero, so they add nothing); the second pass
// normalizes and applies the weight and bias. var = E[x^2] - mean^2.
// NT threads a CTA, a tuning point beside BR and BN: a row spread over fewer
// warps holds more columns a thread in flight and meets across fewer warps.
@autotune(BR in [1, 8], BN in [1024, 8192], NT in [128, 256])
@launch(NT)
@dynshared
@grid(cdiv(R, BR))
kernel layernorm(X: tensor<bf16>[R, N], W: tensor<bf16>[N], B: tensor<bf16>[N],
                 Y: tensor<bf16>[R, N], eps: f32) {
  let r0 = ctx.block.x * BR
  var s1: tile<f32>[BR, 1] = 0.0
  var s2: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, BN) {
    let x = f32(X[r0 :+ BR, c0 :+ BN])
    s1 += rowsum(x)
    s2 += rowsum(x * x)
  }
  let mean = s1 / f32(N)
  let var_ = tmax(s2 / f32(N) - mean * mean, 0.0)
  let rstd = 1.0 / sqrt(var_ + eps)
  for c0 in range(0, N, BN) {
    let x = X[r0 :+ BR, c0 :+ BN]
    let w = W[c0 :+ BN]
    let b = B[c0 :+ BN]
    Y[r0 :+ BR, c0 :+ BN] = bf16((x - mean) * rstd * w + b)
  }
}
