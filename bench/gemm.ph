// bf16 GEMM, C = A @ B, accumulated in f32: A [M, K], B [K, N], C [M, N].
// The plain tile loop: one CTA a [BM, BN] tile of C, K in steps of BK, the
// operands' tiles streamed by @pipeline. M, N and K need not be multiples of
// the tiles: slices past the ends read zero and their stores are skipped.
@autotune(BM in [64, 128], BN in [64, 128, 256], BK in [32, 64])
@launch(256)
@pipeline(3)
@dynshared
@grid(cdiv(N, BN), cdiv(M, BM))
kernel gemm(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<bf16>[M, N]) {
  let m0 = ctx.block.y * BM
  let n0 = ctx.block.x * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k0 in range(0, K, BK) {
    acc += dot(A[m0 :+ BM, k0 :+ BK], B[k0 :+ BK, n0 :+ BN])
  }
  C[m0 :+ BM, n0 :+ BN] = bf16(acc)
}

// The same loop with a fused epilogue: C = gelu(A @ B + bias), GELU in its
// tanh form 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))).
@autotune(BM in [64, 128], BN in [64, 128, 256], BK in [32, 64])
@launch(256)
@pipeline(3)
@dynshared
@grid(cdiv(N, BN), cdiv(M, BM))
kernel gemm_bias_gelu(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], Bias: tensor<bf16>[N],
                      C: tensor<bf16>[M, N]) {
  let m0 = ctx.block.y * BM
  let n0 = ctx.block.x * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k0 in range(0, K, BK) {
    acc += dot(A[m0 :+ BM, k0 :+ BK], B[k0 :+ BK, n0 :+ BN])
  }
  let x = acc + Bias[n0 :+ BN]
  let y = 0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x)))
  C[m0 :+ BM, n0 :+ BN] = bf16(y)
}
