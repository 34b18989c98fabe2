// Attention with its two dots issued together (spec 15.5, "Waiting at the
// first use"): key block j's scores Q K^T and block j-1's P V are issued one
// after the other; with phobosc --late-waits (PHOBOS_LATE_WAITS=1 in the
// harness) the scores are waited for before the softmax reads them
// (wgmma.wait_group 1: P V still running) and P V before acc is rescaled,
// by default each at its issue.
// One query head a CTA, BQ positions; the key block before's P is kept in
// bf16 for the next iteration. Causal masking is bottom-right aligned.
@autotune(D in [64, 128], BQ in [64, 128], BK in [32, 64])
@launch(BQ * 2)
@pipeline(2)
@dynshared
@grid(HQ, cdiv(S, BQ), B)
kernel heads_overlap(Q: tensor<bf16>[B, S, HQ, D],
                     K: tensor<bf16>[B, T, HKV, D],
                     V: tensor<bf16>[B, T, HKV, D],
                     O: tensor<bf16>[B, S, HQ, D],
                     scale: f32,
                     causal: bool) {
  let s0 = ctx.block.y * BQ
  let hq = ctx.block.x
  let h = hq / (HQ / HKV)
  let b = ctx.block.z
  let q = Q[b, s0 :+ BQ, hq, :]
  var acc: tile<f32>[BQ, D] = 0.0
  var m: tile<f32>[BQ, 1] = -inf
  var l: tile<f32>[BQ, 1] = 0.0
  var pp: tile<bf16>[BQ, BK] = 0.0
  var t_end = T
  if causal {
    t_end = min(T, s0 + BQ + T - S)
  }
  for t0 in range(0, t_end, BK) {
    let k = K[b, t0 :+ BK, h, :]
    let vp = V[b, t0 - BK :+ BK, h, :]   // before 0: zeros, under pp = 0
    let s = dot_t(q, k)
    acc += dot(pp, vp)
    let qpos = s0 + (T - S) + iota(BQ, BK, axis = 0)
    let kpos = t0 + iota(BQ, BK, axis = 1)
    var sc: tile<f32>[BQ, BK] = where(kpos < T && (!causal || kpos <= qpos), s * scale, -inf)
    let mnew = tmax(m, rowmax(sc))
    let msafe = where(mnew == -inf, 0.0, mnew)
    var p: tile<f32>[BQ, BK] = exp(sc - msafe)
    var corr: tile<f32>[BQ, 1] = exp(m - msafe)
    l = l * corr + rowsum(p)
    pp = bf16(p)
    acc = acc * corr
    m = mnew
  }
  let tl = max(cdiv(t_end, BK) - 1, 0) * BK
  acc += dot(pp, V[b, tl :+ BK, h, :])
  O[b, s0 :+ BQ, hq, :] = bf16(acc / l)
}
