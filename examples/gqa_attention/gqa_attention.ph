// GQA attention, first draft: Q [B, S, HQ, D], K and V [B, T, HKV, D],
// O [B, S, HQ, D]. Each KV head serves NQ = HQ / HKV query heads.
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
// BQ = 16 over 128 threads (4 warps): with NQ padded to 8 the tile has 128
// rows, two 16-row tiles of the tensor-core layout per warp, so the scores,
// the accumulator and the softmax's running max and sum stay in the mma
// registers (spec/LANGUAGE.md 15.1, 15.5), and each K or V fragment a warp
// reads from shared memory serves both of its row tiles (8 warps of one
// tile each read K and V twice as often: 206.7 against 217.9 TFLOP/s full,
// call 9 of 2026-11-30). NQ 4 gives one row tile a warp; NQ 1 and 2 give
// fewer row tiles than warps and take the flat layout, correct but slower.
// BK (16 or 32 keys a step; 64 would spill at 4 warps) and the @pipeline
// depth are tuned; K and V stream through staged rings (cp.async a stage or
// two ahead, spec 15.9) with @padstage's padded rows, which ldmatrix reads
// without bank conflicts. The query positions are made inside the loop,
// where they are used, so they hold no registers across it. BK 16 asks
// for two CTAs an SM (@launch's second argument: 128 registers a thread).
// For decode (a few query positions, many keys) see gqa_decode.ph.
//
// NQ and D are single-point @autotune lists: defaults that -D overrides
// (phobosc -D NQ=4 -D D=64 ...), one cubin per group size and head dim.
@autotune(NQ in [7], D in [128], BQ in [16], BK in [16, 32], PIPE in [3, 2])
@launch(128, max(1, 32 / BK))
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
  let s0 = ctx.block.x * BQ
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

    var mnew: tile<f32>[BQ, NQ, 1] = tmax(m, rowmax(sc))
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

    var mnew: tile<f32>[BQ, NQ, 1] = tmax(m, rowmax(sc))
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
