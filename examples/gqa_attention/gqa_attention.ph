// GQA attention (prefill): Q [B, S, HQ, D], K and V [B, T, HKV, D], O [B, S,
// HQ, D]. Each KV head serves NQ = HQ / HKV query heads: query head hq reads
// KV head hq / NQ.
//
// One CTA takes BQ query positions of one query head of one batch entry: a
// Q tile of BQ real rows. (Until 2026-12-06 a CTA took 16 positions of all
// NQ heads of a group, a [16, NQ, D] tile padded to 8 heads, so K and V were
// read once a group; for NQ 7 an eighth of every dot was padding. K and V
// are now read by each of the NQ heads' CTAs, which the grid order below
// keeps side by side, so the repeats come from the L2: prefill is bound by
// the tensor cores, not by the reads. The packed kernel is
// spec/conformance/gqa_packed.ph.)
//
// Online softmax (FlashAttention-2 style): a running max m and sum l per
// row, the accumulator rescaled when the max moves. Causal masking is
// bottom-right aligned, so query i sees keys j <= i + (T - S), and key
// blocks past the last visible key are not visited. The key loop is
// written twice: the blocks every row sees whole, without a mask (in the
// first loop every row has seen a key, so its max is finite: no -inf
// guard), and then the diagonal and the cut end of T, masked.
//
// On sm_90a the dots run on wgmma (spec 15.5): a warpgroup (4 warps) takes
// 64 rows, Q, K and V read by the tensor cores straight from the tensor
// copies' swizzled panels, P fed from registers. BQ 128 is two warpgroups,
// one 16-row tile a warp: the accumulator is 64 registers, and BK 64 keys a
// step (wgmma m64n64 for the scores) fits in 128 registers, two CTAs an SM
// (@launch's second argument). BQ 64 (one warpgroup) gives short
// sequences more CTAs. K and V stream through staged rings (@pipeline:
// tensor copies a stage ahead, one mbarrier a stage, spec 15.9). The Q
// tile and the stages take more than the 48 KB of static shared memory, so
// the kernel asks for the device's opt-in limit.
//
// Grid order: block.x walks the query heads, fastest, so the NQ CTAs that
// share a KV head run side by side (one read of each K and V block from
// DRAM, the rest from the L2); block.y walks the query blocks last first:
// under the causal mask the last blocks see the most keys, so they start
// first and the short ones fill the tail.
//
// NQ and D are single-point @autotune lists: defaults that -D overrides
// (phobosc -D NQ=4 -D D=64 ...), one cubin per group size and head dim;
// the runtime refuses a launch whose heads do not match (@requires).
// For decode (a few query positions, many keys) see gqa_decode.ph.
@autotune(NQ in [7], D in [128], BQ in [128, 64], BK in [64, 32], PIPE in [2])
@launch(BQ * 2, 2)
@pipeline(PIPE)
@padstage
@dynshared
@grid(HQ, cdiv(S, BQ), B)
@requires(HQ == NQ * HKV)
kernel gqa_attention(Q: tensor<bf16>[B, S, HQ, D],
                     K: tensor<bf16>[B, T, HKV, D],
                     V: tensor<bf16>[B, T, HKV, D],
                     O: tensor<bf16>[B, S, HQ, D],
                     scale: f32,
                     causal: bool) {
  let hq = ctx.block.x
  let h = hq / NQ
  let s0 = (cdiv(S, BQ) - 1 - ctx.block.y) * BQ
  let b = ctx.block.z

  let q = Q[b, s0 :+ BQ, hq, :]                   // [BQ, D]
  var acc: tile<f32>[BQ, D] = 0.0
  var m: tile<f32>[BQ, 1] = -inf
  var l: tile<f32>[BQ, 1] = 0.0
  // scores in base 2: exp(x - m) is exp2(x log2(e) - m log2(e)), so the scale
  // takes the factor once and each exponential is one ex2
  let sl2 = scale * 1.4426950408889634

  // the last key any row of this block may see
  var t_end = T
  // key blocks before t_full are visible to every row of this block (inside
  // T and, when causal, at or before the first row's diagonal): they need no
  // mask. The blocks from t_full to t_end (the diagonal, the cut end of T)
  // run the same step with the mask.
  var t_full = T / BK * BK
  if causal {
    t_end = min(T, s0 + BQ + T - S)
    t_full = min(t_full, max(0, s0 + T - S + 1) / BK * BK)
  }
  for t0 in range(0, t_full, BK) {
    let k = K[b, t0 :+ BK, h, :]                   // [BK, D]
    let v = V[b, t0 :+ BK, h, :]
    var sc: tile<f32>[BQ, BK] = dot_t(q, k) * sl2

    // the running max moves only when a row's max grows by more than 8
    // (a factor 256 in p): corr is then exactly 1 in most key blocks, and
    // acc * corr is skipped (spec 15.5)
    let mrow = tmax(m, rowmax(sc))
    var mnew: tile<f32>[BQ, 1] = where(mrow > m + 8.0, mrow, m)
    var p: tile<f32>[BQ, BK] = exp2(sc - mnew)
    var corr: tile<f32>[BQ, 1] = exp2(m - mnew)
    l = l * corr + rowsum(p)
    acc = acc * corr + dot(bf16(p), v)
    m = mnew
  }
  for t0 in range(t_full, t_end, BK) {
    let qpos = s0 + (T - S) + iota(BQ, BK, axis = 0)
    let k = K[b, t0 :+ BK, h, :]
    let v = V[b, t0 :+ BK, h, :]
    var sc: tile<f32>[BQ, BK] = dot_t(q, k) * sl2
    let kpos = t0 + iota(BQ, BK, axis = 1)
    sc = where(kpos < T && (!causal || kpos <= qpos), sc, -inf)

    let mrow = tmax(m, rowmax(sc))
    var mnew: tile<f32>[BQ, 1] = where(mrow > m + 8.0, mrow, m)
    // a row with no visible key yet keeps m = -inf; subtract 0 there, not -inf
    let msafe = where(mnew == -inf, 0.0, mnew)
    var p: tile<f32>[BQ, BK] = exp2(sc - msafe)
    var corr: tile<f32>[BQ, 1] = exp2(m - msafe)
    l = l * corr + rowsum(p)
    acc = acc * corr + dot(bf16(p), v)
    m = mnew
  }

  O[b, s0 :+ BQ, hq, :] = bf16(acc / l)
}
