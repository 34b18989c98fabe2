// @scratch (spec 11.3): tensors the runtime allocates and passes. The
// column sums of P [K, N], K split across KSPLIT CTAs a column block: each
// writes its partial row to Part, arrives at its column block's counter,
// and the last to arrive adds the rows into C. Part's rows and the
// counters' count come from the variant (KSPLIT, TN) and the launch's dims;
// the counters start at zero and every launch leaves them there (arrive
// wraps). The caller passes P and C.
@autotune(TN in [64, 128], KSPLIT in [3, 5, 8])
@grid(cdiv(N, TN), KSPLIT)
@scratch(Part: tensor<f32>[KSPLIT, N], Cnt: tensor<i32>[cdiv(N, TN)] = 0)
kernel split_colsum(P: tensor<f32>[K, N], C: tensor<f32>[1, N]) {
  let pn = ctx.block.x
  let chunk = cdiv(K, KSPLIT)
  let k0 = ctx.block.y * chunk
  let k1 = min(K, k0 + chunk)
  var acc: tile<f32>[1, TN] = 0.0
  for k in range(k0, k1) {
    acc += P[k :+ 1, pn * TN :+ TN]
  }
  Part[ctx.block.y :+ 1, pn * TN :+ TN] = acc
  let last = arrive(Cnt[pn], KSPLIT)
  if last {
    var c: tile<f32>[1, TN] = 0.0
    for r in range(0, KSPLIT) {
      c += Part[r :+ 1, pn * TN :+ TN]
    }
    C[0 :+ 1, pn * TN :+ TN] = c
  }
}
