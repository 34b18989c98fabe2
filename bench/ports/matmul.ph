// Ported from the shape of Triton's matmul tutorial: f16 A [M, K] times
// B [K, N], f32 accumulator, f16 out, a [BM, BN] block a program, the plain
// K loop.
@autotune(BM in [64, 128], BN in [64, 256], BK in [32, 64])
@launch(256)
@pipeline(3)
@dynshared
@grid(cdiv(N, BN), cdiv(M, BM))
kernel matmul(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N]) {
  let m0 = program_id(1) * BM
  let n0 = program_id(0) * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k0 in range(0, K, BK) {
    acc += dot(A[m0 :+ BM, k0 :+ BK], B[k0 :+ BK, n0 :+ BN])
  }
  C[m0 :+ BM, n0 :+ BN] = f16(acc)
}
