// SGEMM without @aligned: M, N and K need not be multiples of the tiles; the
// slices past the ends read zero (also along K, so the products vanish) and
// the stores past the ends are skipped.
@autotune(TM in [16, 32], TN in [16, 32], TK in [8])
@launch(128)
@grid(cdiv(M, TM), cdiv(N, TN))
kernel sgemm_ragged(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N],
                    alpha: f32, beta: f32) {
  let pm = ctx.block.x
  let pn = ctx.block.y
  var acc: tile<f32>[TM, TN] = 0.0
  for kt in range(0, K, TK) {
    acc += dot(A[pm * TM :+ TM, kt :+ TK], B[kt :+ TK, pn * TN :+ TN])
  }
  C[pm * TM :+ TM, pn * TN :+ TN] = alpha * acc + beta * C[pm * TM :+ TM, pn * TN :+ TN]
}
