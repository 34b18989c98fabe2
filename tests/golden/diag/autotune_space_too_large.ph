@autotune(BM in [1, 65536], BN in [1, 65536], BK in [1, 65536])
@launch(128)
kernel mm(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N]) {
  let r = ctx.block.x * BM
  let c = ctx.block.y * BN
  var acc: tile<f32>[BM, BN] = 0.0
  for k in range(0, K, BK) {
    acc += dot(A[r :+ BM, k :+ BK], B[k :+ BK, c :+ BN])
  }
  C[r :+ BM, c :+ BN] = acc
}
