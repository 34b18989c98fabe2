// GQA attention for decode: few query positions (S = 1 for a decode step)
// against a long cache of T keys. Q [B, S, HQ, D], K and V [B, T, HKV, D],
// O [B, S, HQ, D], NQ = HQ / HKV query heads per KV head.
//
// gqa_attention.ph gives each CTA BQ query positions and walks all T keys:
// with S = 1 that is B * HKV CTAs (64 for B 16, HKV 4), half the H200 idle,
// each walking 8192 keys alone. Here the keys are split across CTAs too:
// CTA (x, y, z) takes the x-th of NS chunks of the keys for KV head y and
// the z-th block of BQ positions, runs the same online softmax over its
// chunk, and writes its normalized partial output to OP and its log-sum-exp
// to LSE. gqa_decode_merge then weighs the NS partials of each row by
// exp(LSE - max LSE). The host picks NS (OP's and LSE's split dim) from the
// shape, as q8_matvec's host picks KSPLIT.
//
// One warp a CTA: the [BQ, NQ, D] tile is BQ * 8 = 16 rows for BQ 2 (NQ 7
// is padded to 8 and masked), one row tile of the tensor-core layout, and
// small CTAs let many share an SM, so that many key tiles are in flight.
// K and V stream through staged rings (@pipeline: cp.async 1 to 3 tiles
// ahead); BK and the stage count are tuned. BK 16 (10 CTAs an SM, so 20
// splits in one wave) measured no faster than BK 32 at 10 splits (94.5
// against 94.3 us, call 13 of 2026-11-30) and is left out.
@autotune(NQ in [7], D in [128], BQ in [2], BK in [32, 64], PIPE in [4, 3, 2])
@launch(32)
@pipeline(PIPE)
@padstage
@dynshared
@grid(NS, HKV, B * cdiv(S, BQ))
kernel gqa_decode_split(Q: tensor<bf16>[B, S, HQ, D],
                        K: tensor<bf16>[B, T, HKV, D],
                        V: tensor<bf16>[B, T, HKV, D],
                        OP: tensor<f32>[B, S, HQ, NS, D],
                        LSE: tensor<f32>[B, S, HQ, NS],
                        scale: f32,
                        causal: bool) {
  let nsb = cdiv(S, BQ)
  let b = ctx.block.z / nsb
  let s0 = (ctx.block.z % nsb) * BQ
  let h = ctx.block.y
  let x = ctx.block.x

  let q = Q[b, s0 :+ BQ, h * NQ :+ NQ, :]          // [BQ, NQ, D]
  var acc: tile<f32>[BQ, NQ, D] = 0.0
  var m: tile<f32>[BQ, NQ, 1] = -inf
  var l: tile<f32>[BQ, NQ, 1] = 0.0
  // scores in base 2: exp(x - m) is exp2(x log2(e) - m log2(e)), so the scale
  // takes the factor once and each exponential is one ex2
  let sl2 = scale * 1.4426950408889634

  // this CTA's keys: a whole number of BK-key tiles, cut at the last key
  // any row of the block may see (bottom-right aligned when causal)
  var t_end = T
  if causal {
    t_end = min(T, s0 + BQ + T - S)
  }
  let chunk = cdiv(cdiv(T, NS), BK) * BK
  let k0 = x * chunk
  let k1 = min(t_end, k0 + chunk)
  // whole key tiles that every row sees need no mask (as in
  // gqa_attention.ph): those before t_full; the rest are masked
  var t_full = max(k0, k0 + (k1 - k0) / BK * BK)
  if causal {
    t_full = min(t_full, max(k0, max(0, s0 + T - S + 1) / BK * BK))
  }
  // the running max moves only when it grows by more than 8 (as in
  // gqa_attention.ph): acc * corr is skipped in most key blocks
  for t0 in range(k0, t_full, BK) {
    let k = K[b, t0 :+ BK, h, :]                   // [BK, D]
    let v = V[b, t0 :+ BK, h, :]
    var sc: tile<f32>[BQ, NQ, BK] = dot_t(q, k) * sl2

    let mrow = tmax(m, rowmax(sc))
    var mnew: tile<f32>[BQ, NQ, 1] = where(mrow > m + 8.0, mrow, m)
    var p: tile<f32>[BQ, NQ, BK] = exp2(sc - mnew)
    var corr: tile<f32>[BQ, NQ, 1] = exp2(m - mnew)
    l = l * corr + rowsum(p)
    acc = acc * corr + dot(bf16(p), v)
    m = mnew
  }
  for t0 in range(t_full, k1, BK) {
    let qpos = s0 + (T - S) + iota(BQ, NQ, BK, axis = 0)
    let k = K[b, t0 :+ BK, h, :]
    let v = V[b, t0 :+ BK, h, :]
    var sc: tile<f32>[BQ, NQ, BK] = dot_t(q, k) * sl2
    let kpos = t0 + iota(BQ, NQ, BK, axis = 2)
    sc = where(kpos < k1 && (!causal || kpos <= qpos), sc, -inf)

    let mrow = tmax(m, rowmax(sc))
    var mnew: tile<f32>[BQ, NQ, 1] = where(mrow > m + 8.0, mrow, m)
    let msafe = where(mnew == -inf, 0.0, mnew)
    var p: tile<f32>[BQ, NQ, BK] = exp2(sc - msafe)
    var corr: tile<f32>[BQ, NQ, 1] = exp2(m - msafe)
    l = l * corr + rowsum(p)
    acc = acc * corr + dot(bf16(p), v)
    m = mnew
  }

  // a chunk with no visible key has l = 0: its partial is 0 with weight 0
  let lsafe = where(l == 0.0, 1.0, l)
  // one reciprocal a row, not a division an element: the CTA runs this
  // store once, from code fetched cold, so every instruction of it counts
  OP[b, s0 :+ BQ, h * NQ :+ NQ, x, :] = acc * (1.0 / lsafe)
  // (m is in base 2: ln 2 brings it back to the natural log the merge weighs by)
  LSE[b, s0 :+ BQ, h * NQ :+ NQ, x :+ 1] = m * 0.6931471805599453 + log(lsafe)
}

// O[b, s, hq, :] = sum over the NS splits of w * OP[b, s, hq, split, :] /
// sum w, w = exp(LSE - max LSE): one CTA a row, one thread a column. The
// tiles are NSM splits wide (NS <= NSM, the host's bound); splits past NS
// weigh nothing.
@autotune(D in [128], NSM in [32])
@launch(D)
@grid(HQ, S, B)
kernel gqa_decode_merge(OP: tensor<f32>[B, S, HQ, NS, D],
                        LSE: tensor<f32>[B, S, HQ, NS],
                        O: tensor<bf16>[B, S, HQ, D]) {
  let hq = ctx.block.x
  let s = ctx.block.y
  let b = ctx.block.z
  // LSE's loads are issued first and used after o's copy is waited for,
  // so the two reads overlap (one memory latency instead of two)
  let lraw = LSE[b, s, hq :+ 1, 0 :+ NSM]                            // [1, NSM]
  let o = OP[b, s, hq, 0 :+ NSM, :]                                  // [NSM, D]
  let split = iota(1, NSM, axis = 1)
  let lse = where(split < NS, lraw, -inf)
  let mx = rowmax(lse)
  let w = exp(lse - where(mx == -inf, 0.0, mx))
  O[b, s, hq :+ 1, :] = bf16(dot(w, o) / rowsum(w))
}
