// Tensor-core dots on wgmma (spec 15.5): both operands staged by tensor
// copies into swizzled panels and read by the tensor cores through matrix
// descriptors. mm's b is [K, N] (MN-major, transposed), mmt's [N, K]
// (K-major); 128 or 256 threads (one or two warpgroups), 64 or 128 rows,
// N from 32 to 192 (one to three 64-column panels), K steps of 16 to 64,
// and shapes that cut the tiles. vw rewrites a staged, swizzled var slot
// with the threads' own stores before the dot reads it (the proxy fence).
// The constants are pinned by each case.
@autotune(BM in [64], BN in [64], BK in [32], T in [128])
@launch(T)
@pipeline(2)
@dynshared
@grid(cdiv(M, BM), cdiv(N, BN))
kernel mm(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * BM
  let n0 = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k in range(0, K, BK) {
    acc += dot(A[m0 :+ BM, k :+ BK], B[k :+ BK, n0 :+ BN])
  }
  C[m0 :+ BM, n0 :+ BN] = acc
}

@autotune(BM in [64], BN in [64], BK in [32], T in [128])
@launch(T)
@pipeline(2)
@dynshared
@grid(cdiv(M, BM), cdiv(N, BN))
kernel mmt(A: tensor<bf16>[M, K], B: tensor<bf16>[N, K], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * BM
  let n0 = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k in range(0, K, BK) {
    acc += dot_t(A[m0 :+ BM, k :+ BK], B[n0 :+ BN, k :+ BK])
  }
  C[m0 :+ BM, n0 :+ BN] = acc
}

@launch(128)
@padstage
@grid(cdiv(M, 64), cdiv(N, 64))
kernel vw(A: tensor<bf16>[M, 64], B: tensor<bf16>[64, N], C: tensor<f32>[M, N], s: f32) {
  let m0 = ctx.block.x * 64
  let n0 = ctx.block.y * 64
  let a = A[m0 :+ 64, :]
  var b = B[:, n0 :+ 64]
  if s > 1.0 {
    b = bf16(b * s)
  }
  C[m0 :+ 64, n0 :+ 64] = dot(a, b) * (1.0 / s)
}

// f16 operands (wgmma's .f16 form), the scores' shape of attention: a
// [BM, 64] tile against a [BN, 64] one, K-major both
@autotune(BM in [64], BN in [64], T in [128])
@launch(T)
@dynshared
@grid(cdiv(M, BM), cdiv(N, BN))
kernel mmh(A: tensor<f16>[M, 64], B: tensor<f16>[N, 64], C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * BM
  let n0 = ctx.block.y * BN
  C[m0 :+ BM, n0 :+ BN] = dot_t(A[m0 :+ BM, :], B[n0 :+ BN, :])
}
