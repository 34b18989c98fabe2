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
// exp(LSE - max LSE). The caller picks NS (OP's and LSE's split dim) and
// holds the partials; gqa_decode, below, is the one call whose split count
// and partials are the library's.
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
// splits go NSM at a time with a running maximum (each chunk's weights
// taken against it, the sums so far rescaled when it grows), so NS has no
// ceiling: a B 1 long context may split its keys hundreds of ways. Splits
// past NS weigh nothing. Each chunk's LSE and OP loads are issued together
// (one memory latency a chunk; one chunk for NS <= 32).
@autotune(D in [128], NSM in [32])
@launch(D)
@grid(HQ, S, B)
kernel gqa_decode_merge(OP: tensor<f32>[B, S, HQ, NS, D],
                        LSE: tensor<f32>[B, S, HQ, NS],
                        O: tensor<bf16>[B, S, HQ, D]) {
  let hq = ctx.block.x
  let s = ctx.block.y
  let b = ctx.block.z
  var m: tile<f32>[1, 1] = -inf
  var num: tile<f32>[1, D] = 0.0
  var den: tile<f32>[1, 1] = 0.0
  for j0 in range(0, NS, NSM) {
    let lraw = LSE[b, s, hq :+ 1, j0 :+ NSM]                         // [1, NSM]
    let o = OP[b, s, hq, j0 :+ NSM, :]                               // [NSM, D]
    let split = j0 + iota(1, NSM, axis = 1)
    let lse = where(split < NS, lraw, -inf)
    let mn = tmax(m, rowmax(lse))
    let ms = where(mn == -inf, 0.0, mn)
    let c = exp(m - ms)
    let w = exp(lse - ms)
    num = num * c + dot(w, o)
    den = den * c + rowsum(w)
    m = mn
  }
  O[b, s, hq :+ 1, :] = bf16(num / den)
}

// gqa_decode: the whole decode in one call. The caller passes Q, K, V, O,
// scale and causal; the partials (OP, LSE) and the counters are the
// library's (@scratch, spec 11.3), and the number of key splits NS is an
// @autotune list, so libphobos picks it per shape and device (a B 1 long
// context wants many splits, B 64 few) where the host used to compute it.
// Each CTA runs gqa_decode_split's online softmax over its chunk of the
// keys and stores its partial; then the splits merge in the same launch
// (arrive, spec 9.5), in two levels: the splits come in groups of GS =
// min(NS, 16), and the last CTA of a group to arrive merges the group's
// partials into one (in OP and LSE, at slot NS + its group: the scratch has
// NG slots past the splits'); the last group to finish merges the NG = NS /
// GS group partials into O. With NS <= 16 there is one group, whose merge
// writes O.
//
// Why two levels: a merge is one warp's, an L2 round trip every two
// splits (four [NQ, D] partials in flight a step spilled 264 bytes a
// thread), so one level made the merge grow with NS and held the list to
// 32 splits: a B 1 decode over 32768 keys ran 128 one-warp CTAs, one an
// SM, at 0.70 TB/s (95.9 us against cuDNN's 42.0, H100, 12-07 third
// session, call 1). Two levels take GS / 2 + NG / 2 steps (16 at NS 256)
// where one took NS / 2 (128). Measured (H100, same session, calls 2-3):
// B 1 T 32768 90.2 us (the library took NS 64), B 1 T 131072 153.8, B 16
// T 8192 121.2 as before; but each merge step still costs about 4 us (the
// pinned NS 64, 128, 256: 108.3, 116.3, 132.0 us at T 32768; ncu: this
// kernel 97.7 us where the pair's split kernel takes 41.7 and its merge
// kernel, a CTA a head, 9.2), so the pair (split, then gqa_decode_merge)
// is still twice as fast for B 1. Taken apart (12-07 fourth session, call
// 1, H100, B 1 T 32768, NS 64 pinned: 93.2 us): without the merges 43.1,
// the first level alone 71.6, one step of it and the second level 76.7,
// so a level's first step costs about 16 us and each one after it about
// 1.8: the merge is the fetch of its code (some 1200 instructions a step,
// run once, cold), not its loads or its exchanges (--row-broadcasts, which
// removes every exchange, ran 95.2). So both levels run one body (a loop
// of two rounds over the slots it merges, its loads reading OP and LSE at
// either level), which the second level finds fetched: B 1 T 32768 88.9 ->
// 82.0 us, B 1 T 131072 153.4 -> 146.2; B 16 T 8192 and B 64 T 4096, where
// the library takes one level, 123.8 / 124.4 and 212.1 / 214.0 (the same;
// H100, 12-07 fourth session, calls 6-8). BK is the split kernel's measured best,
// 32 (64 measured the same, call 3): a 64-key tile at 4 stages is 128 KB
// of ring, one of these one-warp CTAs an SM.
// (the merges take splits and groups two at a time, and groups of 16 whole:
// NS even, and a multiple of 16 above 16; @requires leaves other points out)
@autotune(NQ in [7], D in [128], BQ in [2], BK in [32], PIPE in [4, 2], NS in [4, 8, 16, 32, 64, 128, 256])
@requires(NS % 2 == 0, NS % min(NS, 16) == 0)
@launch(32)
@pipeline(PIPE)
@padstage
@dynshared
@grid(NS, HKV, B * cdiv(S, BQ))
@scratch(OP: tensor<f32>[B, S, HQ, NS + cdiv(NS, min(NS, 16)), D], LSE: tensor<f32>[B, S, HQ, NS + cdiv(NS, min(NS, 16))],
         Cnt1: tensor<i32>[B * cdiv(S, BQ), HKV, cdiv(NS, min(NS, 16))] = 0,
         Cnt: tensor<i32>[B * cdiv(S, BQ), HKV] = 0)
kernel gqa_decode(Q: tensor<bf16>[B, S, HQ, D],
                  K: tensor<bf16>[B, T, HKV, D],
                  V: tensor<bf16>[B, T, HKV, D],
                  O: tensor<bf16>[B, S, HQ, D],
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
  let sl2 = scale * 1.4426950408889634

  var t_end = T
  if causal {
    t_end = min(T, s0 + BQ + T - S)
  }
  let chunk = cdiv(cdiv(T, NS), BK) * BK
  let k0 = x * chunk
  let k1 = min(t_end, k0 + chunk)
  var t_full = max(k0, k0 + (k1 - k0) / BK * BK)
  if causal {
    t_full = min(t_full, max(k0, max(0, s0 + T - S + 1) / BK * BK))
  }
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

  let lsafe = where(l == 0.0, 1.0, l)
  OP[b, s0 :+ BQ, h * NQ :+ NQ, x, :] = acc * (1.0 / lsafe)
  LSE[b, s0 :+ BQ, h * NQ :+ NQ, x :+ 1] = m * 0.6931471805599453 + log(lsafe)

  // the last CTA of this split's group (GS splits: x / GS) merges them:
  // sum_x w_x OP_x / sum_x w_x with w_x = exp(LSE_x - the running max), a
  // position at a time ([NQ, D] tiles: for a decode step's one position
  // the block's second row is slack and costs nothing), two splits a step
  // with all four loads issued before any is used (GS is even)
  let GS = min(NS, 16)
  let NG = NS / GS
  let g = x / GS
  let last = arrive(Cnt1[ctx.block.z, h, g], GS)
  if last {
    // one body for both levels, so that its code is fetched once: level 0
    // merges this group's GS splits into slot NS + g of OP and LSE (into O
    // when NG is 1), level 1 the NG group slots after NS into O
    var first = g * GS
    var count = GS
    var dst = NS + g
    var final = NG == 1
    var more = true
    for lv in range(0, 2) {
      if more {
        for s in range(s0, min(S, s0 + BQ)) {
          var mx: tile<f32>[NQ, 1] = -inf
          var num: tile<f32>[NQ, D] = 0.0
          var den: tile<f32>[NQ, 1] = 0.0
          for j in range(first, first + count, 2) {
            let o0 = OP[b, s, h * NQ :+ NQ, j, :]                          // [NQ, D]
            let o1 = OP[b, s, h * NQ :+ NQ, j + 1, :]
            let l0 = LSE[b, s, h * NQ :+ NQ, j :+ 1]                       // [NQ, 1]
            let l1 = LSE[b, s, h * NQ :+ NQ, j + 1 :+ 1]
            let mn = tmax(mx, tmax(l0, l1))
            // a split without keys (LSE -inf) weighs 0; rows with none yet keep 0
            let ms = where(mn == -inf, 0.0, mn)
            let c = exp(mx - ms)
            let w0 = exp(l0 - ms)
            let w1 = exp(l1 - ms)
            num = num * c + (o0 * w0 + o1 * w1)
            den = den * c + (w0 + w1)
            mx = mn
          }
          if final {
            O[b, s, h * NQ :+ NQ, :] = bf16(num / den)
          } else {
            // the group's partial and log-sum-exp (a group without keys: 0
            // and -inf, which the next level weighs 0)
            let dsafe = where(den == 0.0, 1.0, den)
            OP[b, s, h * NQ :+ NQ, dst, :] = num * (1.0 / dsafe)
            LSE[b, s, h * NQ :+ NQ, dst :+ 1] = where(den == 0.0, -inf, mx + log(dsafe))
          }
        }
        more = false
        if !final {
          // the last group of this (position block, KV head) to finish
          // goes on to level 1
          let last2 = arrive(Cnt[ctx.block.z, h], NG)
          if last2 {
            more = true
            first = NS
            count = NG
            final = true
          }
        }
      }
    }
  }
}
