// Sum of a whole tensor (flattened to rank 1): Out[0] = sum of X.
//
// NB CTAs (the host picks NB, P's extent) each sum one chunk of X in blocks
// of BLK elements into a [BLK] accumulator, reduce it to one partial, store
// it in P, and arrive at the counter Cnt (spec 9.5); the last CTA to arrive
// adds the NB partials and writes Out. Cnt is zeroed once by the host and
// left at zero by every launch.
@autotune(BLK in [1024, 4096])
@launch(256)
@grid(NB)
kernel sum_all(X: tensor<f32>[N], P: tensor<f32>[NB], Cnt: tensor<i32>[1], Out: tensor<f32>[1]) {
  let chunk = cdiv(cdiv(N, NB), BLK) * BLK
  let k0 = ctx.block.x * chunk
  let k1 = min(N, k0 + chunk)
  var acc: tile<f32>[BLK] = 0.0
  for k in range(k0, k1, BLK) {
    // the last block of a chunk may reach into the next chunk: mask it
    let idx = k + iota(BLK)
    acc += where(idx < k1, X[k :+ BLK], 0.0)
  }
  P[ctx.block.x :+ 1] = rowsum(acc)
  let last = arrive(Cnt[0], NB)
  if last {
    var t: tile<f32>[BLK] = 0.0
    for i in range(0, NB, BLK) {
      t += P[i :+ BLK]
    }
    Out[0 :+ 1] = rowsum(t)
  }
}
