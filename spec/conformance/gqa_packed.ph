// GQA attention with the query heads of a KV head packed into one tile: Q
// [B, S, HQ, D], K and V [B, T, HKV, D], O [B, S, HQ, D]. Each KV head
// serves NQ = HQ / HKV query heads. (The example's prefill kernel until
// 2026-12-06; examples/gqa_attention/gqa_attention.ph now takes one query
// head a CTA, 128 rows of real positions instead of 16 positions of NQ
// padded to 8 heads. Kept here for what it tests: a tile axis of 7 padded
// to 8 and masked, Q and O through rank-5 tensor maps.)
//
// One CTA takes BQ query positions of one batch entry and one KV head, with
// all NQ query heads of that group: the Q tile is [BQ, NQ, D], so K and V
// are read once per group instead of once per query head. NQ need not be a
// power of two (7 for Hq 28 / Hkv 4); the compiler pads the tile's NQ axis
// to one and masks the slack, the kernel never mentions the padding.
//
// Online softmax (FlashAttention-2 style): a running max m and sum l per
// row, the accumulator rescaled when the max moves. Causal masking is
// bottom-right aligned, so query i sees keys j <= i + (T - S), and key
// blocks past the last visible key are not visited. The key loop is
// written twice: the blocks every row sees whole, without a mask (in the
// first loop every row has seen a key, so its max is finite: no -inf
// guard), and then the diagonal and the cut end of T, masked.
//
// The Q tile and the K and V stages take more than the 48 KB of static
// shared memory, so the kernel asks for the device's opt-in limit.
//
// BQ = 16 positions of NQ padded to 8 heads: a Q tile of 128 rows. On
// sm_90a the dots run on wgmma (spec 15.5): a warpgroup (4 warps) takes 64
// rows a step, Q, K and V read by the tensor cores straight from the tensor
// copies' swizzled panels, P fed from registers. WG warpgroups a CTA:
// with WG 2 each warp holds one 16-row tile, so the accumulator is 64
// registers, and BK 64 keys a step (wgmma m64n64 for the scores) fits in
// 128 registers, two CTAs an SM (@launch's second argument): 417.8 TFLOP/s
// full against 310.8 for WG 1 (two row tiles a warp, BK 32, one CTA's
// wgmma latency exposed while the other's softmax runs; 11-30c call 4).
// WG 1 stays in the list for NQ 4 (64 rows: one tile a warp at 4 warps),
// and for sm_80, where the dots take mma.sync and ldmatrix. NQ 1 and 2
// give fewer row tiles than warps and take the flat layout, correct but
// slower. K and V stream through staged rings (@pipeline: tensor copies a
// stage ahead, one mbarrier a stage, spec 15.9). The query positions are
// made inside the loop, where they are used, so they hold no registers
// across it.
// For decode (a few query positions, many keys) see gqa_decode.ph.
//
// NQ and D are single-point @autotune lists: defaults that -D overrides
// (phobosc -D NQ=4 -D D=64 ...), one cubin per group size and head dim.
@autotune(NQ in [7], D in [128], BQ in [16], WG in [2, 1], BK in [64, 32], PIPE in [2])
@launch(BQ * 8 * WG, WG)
@pipeline(PIPE)
@padstage
@dynshared
@grid(cdiv(S, BQ), HKV, B)
kernel gqa_attention(Q: tensor<bf16>[B, S, HQ, D],
                     K: tensor<bf16>[B, T, HKV, D],
                     V: tensor<bf16>[B, T, HKV, D],
                     O: tensor<bf16>[B, S, HQ, D],
                     scale: f32,
                     causal: bool) {
  // blocks in reverse: under the causal mask the last query blocks see the
  // most keys, so they start first and the short ones fill the tail
  let s0 = (cdiv(S, BQ) - 1 - ctx.block.x) * BQ
  let h = ctx.block.y
  let b = ctx.block.z

  let q = Q[b, s0 :+ BQ, h * NQ :+ NQ, :]          // [BQ, NQ, D]
  var acc: tile<f32>[BQ, NQ, D] = 0.0
  var m: tile<f32>[BQ, NQ, 1] = -inf
  var l: tile<f32>[BQ, NQ, 1] = 0.0
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
    var sc: tile<f32>[BQ, NQ, BK] = dot_t(q, k) * sl2

    // the running max moves only when a row's max grows by more than 8
    // (a factor 256 in p): corr is then exactly 1 in most key blocks, and
    // acc * corr is skipped (spec 15.5)
    let mrow = tmax(m, rowmax(sc))
    var mnew: tile<f32>[BQ, NQ, 1] = where(mrow > m + 8.0, mrow, m)
    var p: tile<f32>[BQ, NQ, BK] = exp2(sc - mnew)
    var corr: tile<f32>[BQ, NQ, 1] = exp2(m - mnew)
    l = l * corr + rowsum(p)
    acc = acc * corr + dot(bf16(p), v)
    m = mnew
  }
  for t0 in range(t_full, t_end, BK) {
    let qpos = s0 + (T - S) + iota(BQ, NQ, BK, axis = 0)
    let k = K[b, t0 :+ BK, h, :]
    let v = V[b, t0 :+ BK, h, :]
    var sc: tile<f32>[BQ, NQ, BK] = dot_t(q, k) * sl2
    let kpos = t0 + iota(BQ, NQ, BK, axis = 2)
    sc = where(kpos < T && (!causal || kpos <= qpos), sc, -inf)

    let mrow = tmax(m, rowmax(sc))
    var mnew: tile<f32>[BQ, NQ, 1] = where(mrow > m + 8.0, mrow, m)
    // a row with no visible key yet keeps m = -inf; subtract 0 there, not -inf
    let msafe = where(mnew == -inf, 0.0, mnew)
    var p: tile<f32>[BQ, NQ, BK] = exp2(sc - msafe)
    var corr: tile<f32>[BQ, NQ, 1] = exp2(m - msafe)
    l = l * corr + rowsum(p)
    acc = acc * corr + dot(bf16(p), v)
    m = mnew
  }

  O[b, s0 :+ BQ, h * NQ :+ NQ, :] = bf16(acc / l)
}
