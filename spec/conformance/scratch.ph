// @scratch (spec 11): tensors the runtime allocates and passes. A sum over
// K split across KSPLIT CTAs a column block: each writes its partial row
// to P, arrives at its column block's counter, and the last to arrive adds
// the rows into C. P's rows and the counters' count come from the variant
// (KSPLIT, TN) and the launch's dims; the counters start at zero and every
// launch leaves them there (arrive wraps). The caller passes A and C.
@autotune(TN in [64, 128], KSPLIT in [3, 5, 8])
@grid(cdiv(N, TN), KSPLIT)
@scratch(P: tensor<f32>[KSPLIT, N], Cnt: tensor<i32>[cdiv(N, TN)] = 0)
kernel split_colsum(A: tensor<f32>[K, N], C: tensor<f32>[1, N]) {
  let pn = ctx.block.x
  let chunk = cdiv(K, KSPLIT)
  let k0 = ctx.block.y * chunk
  let k1 = min(K, k0 + chunk)
  var acc: tile<f32>[1, TN] = 0.0
  for k in range(k0, k1) {
    acc += A[k :+ 1, pn * TN :+ TN]
  }
  P[ctx.block.y :+ 1, pn * TN :+ TN] = acc
  let last = arrive(Cnt[pn], KSPLIT)
  if last {
    var c: tile<f32>[1, TN] = 0.0
    for r in range(0, KSPLIT) {
      c += P[r :+ 1, pn * TN :+ TN]
    }
    C[0 :+ 1, pn * TN :+ TN] = c
  }
}
