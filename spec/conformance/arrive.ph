// arrive (spec 9.5): the last-block pattern. Column sums of X [R, N] split
// over KS chunks of rows: CTA (x, y) sums its chunk of rows into P[y, :],
// then arrives at column block x's counter; the KS-th CTA to arrive adds
// P's KS rows into C. Cnt starts at zero and is left at zero.
@autotune(TN in [64, 128], KS in [4])
@launch(64)
@grid(cdiv(N, TN), KS)
kernel colsum(X: tensor<f32>[R, N], P: tensor<f32>[KS, N], Cnt: tensor<i32>[NB], C: tensor<f32>[1, N]) {
  let c0 = ctx.block.x * TN
  let chunk = cdiv(R, KS)
  var acc: tile<f32>[1, TN] = 0.0
  for r in range(ctx.block.y * chunk, min(R, (ctx.block.y + 1) * chunk)) {
    acc += X[r :+ 1, c0 :+ TN]
  }
  P[ctx.block.y :+ 1, c0 :+ TN] = acc
  let last = arrive(Cnt[ctx.block.x], KS)
  if last {
    var s: tile<f32>[1, TN] = 0.0
    for y in range(0, KS) {
      s += P[y :+ 1, c0 :+ TN]
    }
    C[0 :+ 1, c0 :+ TN] = s
  }
}
