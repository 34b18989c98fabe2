// A GEMM epilogue in registers: a bias row vector broadcast over the
// accumulators (the `columns of` the fragment layout, no exchange), an
// elementwise chain over them (emitted two registers at a time), and the
// fragment's pair stores (f32 and bf16). y = x x / 4 + x, x = A B + bias.
// The constants are pinned by each case (wgmma and mma.sync).
@autotune(BM in [64], BN in [64], BK in [32], T in [128])
@launch(T)
@pipeline(2)
@dynshared
@grid(cdiv(M, BM), cdiv(N, BN))
kernel mm_bias_f32(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], Bias: tensor<f32>[N], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * BM
  let n0 = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k in range(0, K, BK) {
    acc += dot(A[m0 :+ BM, k :+ BK], B[k :+ BK, n0 :+ BN])
  }
  let x = acc + Bias[n0 :+ BN]
  C[m0 :+ BM, n0 :+ BN] = x * x * 0.25 + x
}

// The bias as a [1, N] row of a bf16 tensor, the output bf16.
@autotune(BM in [64], BN in [64], BK in [32], T in [128])
@launch(T)
@pipeline(2)
@dynshared
@grid(cdiv(M, BM), cdiv(N, BN))
kernel mm_bias_bf16(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], Bias: tensor<bf16>[1, N], C: tensor<bf16>[M, N]) {
  let m0 = ctx.block.x * BM
  let n0 = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k in range(0, K, BK) {
    acc += dot(A[m0 :+ BM, k :+ BK], B[k :+ BK, n0 :+ BN])
  }
  let x = acc + f32(Bias[0 :+ 1, n0 :+ BN])
  C[m0 :+ BM, n0 :+ BN] = bf16(x * x * 0.25 + x)
}
