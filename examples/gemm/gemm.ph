// GEMM for C programs: C = epilogue(A @ B), A [M, K] and B [K, N] in bf16 or
// f16 (B not transposed: as a weight is laid out for x @ W), the products
// accumulated in f32, C in the input type. M, N and K may be any sizes: the
// slices past the ends read zero and their stores are skipped.
//
// Each kernel is the plain tile loop a user writes, one CTA a [BM, BN] tile of
// C; the compiler streams the operands through TMA rings (@pipeline) into
// wgmma, keeps the accumulator in registers and runs the epilogue there
// (spec 15.5, 15.6). The autotuner picks the tile shape per problem size.
@autotune(BM in [64, 128], BN in [64, 128, 256], BK in [32, 64])
@launch(256)
@pipeline(3)
@dynshared
@grid(cdiv(N, BN), cdiv(M, BM))
kernel gemm_bf16(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<bf16>[M, N]) {
  let m0 = ctx.block.y * BM
  let n0 = ctx.block.x * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k0 in range(0, K, BK) {
    acc += dot(A[m0 :+ BM, k0 :+ BK], B[k0 :+ BK, n0 :+ BN])
  }
  C[m0 :+ BM, n0 :+ BN] = bf16(acc)
}

// C = gelu(A @ B + bias): an MLP's up-projection, GELU in its tanh form.
@autotune(BM in [64, 128], BN in [64, 128, 256], BK in [32, 64])
@launch(256)
@pipeline(3)
@dynshared
@grid(cdiv(N, BN), cdiv(M, BM))
kernel gemm_bias_gelu_bf16(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], Bias: tensor<bf16>[N],
                           C: tensor<bf16>[M, N]) {
  let m0 = ctx.block.y * BM
  let n0 = ctx.block.x * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k0 in range(0, K, BK) {
    acc += dot(A[m0 :+ BM, k0 :+ BK], B[k0 :+ BK, n0 :+ BN])
  }
  let x = acc + Bias[n0 :+ BN]
  C[m0 :+ BM, n0 :+ BN] = bf16(0.5 * x * (1.0 + tanh(0.7978845608 * (x + 0.044715 * x * x * x))))
}

@autotune(BM in [64, 128], BN in [64, 128, 256], BK in [32, 64])
@launch(256)
@pipeline(3)
@dynshared
@grid(cdiv(N, BN), cdiv(M, BM))
kernel gemm_f16(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N]) {
  let m0 = ctx.block.y * BM
  let n0 = ctx.block.x * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k0 in range(0, K, BK) {
    acc += dot(A[m0 :+ BM, k0 :+ BK], B[k0 :+ BK, n0 :+ BN])
  }
  C[m0 :+ BM, n0 :+ BN] = f16(acc)
}

// C = relu(A @ B + bias) in f16.
@autotune(BM in [64, 128], BN in [64, 128, 256], BK in [32, 64])
@launch(256)
@pipeline(3)
@dynshared
@grid(cdiv(N, BN), cdiv(M, BM))
kernel gemm_bias_relu_f16(A: tensor<f16>[M, K], B: tensor<f16>[K, N], Bias: tensor<f16>[N],
                          C: tensor<f16>[M, N]) {
  let m0 = ctx.block.y * BM
  let n0 = ctx.block.x * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k0 in range(0, K, BK) {
    acc += dot(A[m0 :+ BM, k0 :+ BK], B[k0 :+ BK, n0 :+ BN])
  }
  C[m0 :+ BM, n0 :+ BN] = f16(tmax(acc + Bias[n0 :+ BN], 0.0))
}
