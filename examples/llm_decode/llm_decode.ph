// The kernels of one decode step of a Qwen2-shaped transformer with Q8_0
// weights (examples/llm_decode/README.md, issue 24): B sequences, one new
// token each, a residual stream X [B, H] in f32.
//
//   X = embed(TOK)                                  embed_q8
//   for each layer:
//     Y = rmsnorm(X) * g1                           rmsnorm
//     QKV = Y @ Wqkv                                q8_gemv
//     q, k = rope(QKV + bias, POS); cache[POS] = k, v   rope_append
//     O = attention(q, cache[0 .. POS])             gqa_split_len, gqa_merge_len
//     X += O @ Wo                                   q8_gemv_add
//     Y = rmsnorm(X) * g2                           rmsnorm
//     GU = Y @ Wgate_up                             q8_gemv
//     X += (silu(G) * U) @ Wdown                    silu_mul, q8_gemv_add
//   logits = rmsnorm(X) * gf @ Wlm                  rmsnorm, q8_gemv
//   TOK = argmax(logits); POS += 1                  argmax_step
//
// Everything that changes from one token to the next lives in device
// memory: the tokens (TOK), the positions (POS, where this step's key and
// value go; the keys 0 .. POS[b] are attended), the caches. The dims are
// the model's and the caches' capacity, so one captured CUDA graph of the
// step replays token after token with nothing from the host: argmax_step
// writes the next tokens and moves the positions on.
//
// Q8_0 here is the q8_matvec example's layout: a weight W [K, N] of int8
// (K the input dim, N the output), and a scale a block of 32 rows of a
// column, S [K / 32, N]. Activations stay f32. The embedding table, read a
// row at a time, is held the other way, E [V, H / 32, 32] and ES [V, H /
// 32, 1] (GGUF's block_q8_0 order: a block's 32 bytes, then the next's).

// X[b, :] = the dequantized row TOK[b] of E: one CTA a block of RB rows of
// 32 of the hidden dim of one sequence. The host passes X as [B, H / 32, 32].
@autotune(RB in [32])
@launch(256)
@grid(cdiv(HB, RB), B)
kernel embed_q8(TOK: tensor<i32>[B],
                E: tensor<i8>[V, HB, 32],
                ES: tensor<f32>[V, HB, 1],
                X: tensor<f32>[B, HB, 32]) {
  let b = ctx.block.y
  let r0 = ctx.block.x * RB
  let t = TOK[b]
  let e = E[t, r0 :+ RB, :]                       // [RB, 32]
  let s = ES[t, r0 :+ RB, :]                      // [RB, 1]
  X[b, r0 :+ RB, :] = f32(e) * s
}

// Y[b, :] = X[b, :] * rsqrt(mean(X[b, :]^2) + eps) * G: one CTA a sequence,
// the row walked twice in chunks of TH (the second pass from L2), or where
// TH covers H (the model's 3584 in one chunk of 4096) loaded once (the
// compiler's one-pass copy, NAME__vK_once): one memory round trip where
// chunks of 1024 took eight in a row. The autotuner picks.
@autotune(TH in [1024, 4096])
@launch(256)
@grid(B)
kernel rmsnorm(X: tensor<f32>[B, H],
               G: tensor<f32>[1, H],
               Y: tensor<f32>[B, H],
               eps: f32) {
  let b = ctx.block.x
  var ss: tile<f32>[1, 1] = 0.0
  for c in range(0, H, TH) {
    let x = X[b :+ 1, c :+ TH]
    ss += rowsum(x * x)
  }
  let r = rsqrt(ss / H + eps)
  for c in range(0, H, TH) {
    let x = X[b :+ 1, c :+ TH]
    let g = G[0 :+ 1, c :+ TH]
    Y[b :+ 1, c :+ TH] = x * r * g
  }
}

// C[M, N] = A[M, K] @ dequant(W, S), M the batch (1 to a few): the
// q8_matvec_split example's kernel with M rows of activations. CTA (x, y)
// takes TN columns and the y-th of KSPLIT chunks of K, so that even N 3584
// gives the GPU enough CTAs; the last CTA of each column block to arrive
// sums the KSPLIT partials into C, eight loads in flight at a time (in two
// levels from 64 splits: below). P, P2 and the counters are the library's
// (@scratch); KSPLIT (8 to 128, as the q8_matvec
// example's), TN and OCC are tuned per shape: a CTA's loop issues one
// [32, TN] tile's loads at a time, so the bytes in flight are the CTAs
// resident, and until 12-06 (KSPLIT at most 32, the partials four at a
// time) the QKV and O projections (3584 x 4608, 3584 x 3584) ran at
// 0.8-1.0 TB/s and the down projection (18944 x 3584) at 1.7: with these
// lists 2-7% faster at B 1 (H100, 12-06b call 6: down 1196 -> 1118 us a
// step launched one by one), the step 1.7% faster; B 4 within its spread. MR is the rows a variant holds,
// 1, 2 or 4 (a two-value list doubles from the first to the second, as
// Phobos reads it): the variants with MR >= M fit, so one sequence takes
// the example's own one-row kernel and four read the weights once for all.
@autotune(MR in [1, 4], KSPLIT in [8, 128], TN in [256, 512], OCC in [2048, 4096])
@launch(TN / 4, OCC / TN)
@grid(cdiv(N, TN), KSPLIT)
@requires(KB >= cdiv(K, 32), M <= MR)
@scratch(P: tensor<f32>[KSPLIT, M, N], P2: tensor<f32>[8, M, N],
         Cnt1: tensor<i32>[cdiv(N, TN), 8] = 0, Cnt: tensor<i32>[cdiv(N, TN)] = 0)
kernel q8_gemv(A: tensor<f32>[M, K],
               W: tensor<i8>[K, N],
               S: tensor<f32>[KB, N],
               C: tensor<f32>[M, N]) {
  let pn = ctx.block.x
  let chunk = cdiv(K, KSPLIT * 32) * 32
  let k0 = ctx.block.y * chunk
  let k1 = min(K, k0 + chunk)
  var acc: tile<f32>[MR, TN] = 0.0
  for k in range(k0, k1, 32) {
    let w = W[k :+ 32, pn * TN :+ TN]
    let s = S[k / 32 :+ 1, pn * TN :+ TN]
    let a = A[0 :+ MR, k :+ 32]                    // rows past M read zero
    var wf: tile<f32>[32, TN] = f32(w)
    var part: tile<f32>[MR, TN] = dot(a, wf)
    acc += part * s
  }
  P[ctx.block.y, 0 :+ MR, pn * TN :+ TN] = acc     // rows past M are not stored
  // KSPLIT partials summed in one level up to 32 (the last CTA to arrive, eight
  // loads in flight a step), in two above: groups of KSPLIT / 8 splits, the
  // last CTA of each summing its group into P2, the last group the eight
  // group sums (3 steps at KSPLIT 128, where one level took 16, each step an
  // L2 round trip that the CTA alone waits on). H100, 12-07 fourth session,
  // call 1: the down projection 1121 -> 1043 us a step launched one by one,
  // the step 4545 -> 4448 us (B 1, context 4096)
  var GS = KSPLIT
  if KSPLIT >= 64 {
    GS = KSPLIT / 8
  }
  let g = ctx.block.y / GS
  let last = arrive(Cnt1[pn, g], GS)
  if last {
    var c: tile<f32>[MR, TN] = 0.0
    for r in range(g * GS, g * GS + GS, 8) {
      let p0 = P[r, 0 :+ MR, pn * TN :+ TN]
      let p1 = P[r + 1, 0 :+ MR, pn * TN :+ TN]
      let p2 = P[r + 2, 0 :+ MR, pn * TN :+ TN]
      let p3 = P[r + 3, 0 :+ MR, pn * TN :+ TN]
      let p4 = P[r + 4, 0 :+ MR, pn * TN :+ TN]
      let p5 = P[r + 5, 0 :+ MR, pn * TN :+ TN]
      let p6 = P[r + 6, 0 :+ MR, pn * TN :+ TN]
      let p7 = P[r + 7, 0 :+ MR, pn * TN :+ TN]
      c += ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))
    }
    if GS == KSPLIT {
      C[0 :+ MR, pn * TN :+ TN] = c
    } else {
      P2[g, 0 :+ MR, pn * TN :+ TN] = c
      let last2 = arrive(Cnt[pn], 8)
      if last2 {
        var c2: tile<f32>[MR, TN] = 0.0
        let p0 = P2[0, 0 :+ MR, pn * TN :+ TN]
        let p1 = P2[1, 0 :+ MR, pn * TN :+ TN]
        let p2 = P2[2, 0 :+ MR, pn * TN :+ TN]
        let p3 = P2[3, 0 :+ MR, pn * TN :+ TN]
        let p4 = P2[4, 0 :+ MR, pn * TN :+ TN]
        let p5 = P2[5, 0 :+ MR, pn * TN :+ TN]
        let p6 = P2[6, 0 :+ MR, pn * TN :+ TN]
        let p7 = P2[7, 0 :+ MR, pn * TN :+ TN]
        c2 += ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))
        C[0 :+ MR, pn * TN :+ TN] = c2
      }
    }
  }
}

// C[M, N] += A[M, K] @ dequant(W, S): q8_gemv adding into C, for the
// projections that end in the residual stream (attention's output and the
// MLP's down projection). Each CTA adds its partial into C itself
// (atomic_add: a red.global.add.v4.f32 a thread's four columns), so the
// residual add costs no pass of its own and the split-K sum no tail: no
// partials written and read back, no arrival, no CTA that waits on the
// others. (Until 12-07 the last CTA of a column block to arrive summed the
// partials in two levels and added them to C, the q8_gemv way: H100, 12-07
// sixth session, call 2, the O and down projections 494 -> 307 and 1080 ->
// 913 us a step launched one by one, the step 4185 -> 3858 us at B 1. The
// order of the adds is the CTAs', so C's last bits may differ from run to
// run.)
@autotune(MR in [1, 4], KSPLIT in [8, 128], TN in [256, 512], OCC in [2048, 4096])
@launch(TN / 4, OCC / TN)
@grid(cdiv(N, TN), KSPLIT)
@requires(KB >= cdiv(K, 32), M <= MR)
kernel q8_gemv_add(A: tensor<f32>[M, K],
                   W: tensor<i8>[K, N],
                   S: tensor<f32>[KB, N],
                   C: tensor<f32>[M, N]) {
  let pn = ctx.block.x
  let chunk = cdiv(K, KSPLIT * 32) * 32
  let k0 = ctx.block.y * chunk
  let k1 = min(K, k0 + chunk)
  var acc: tile<f32>[MR, TN] = 0.0
  for k in range(k0, k1, 32) {
    let w = W[k :+ 32, pn * TN :+ TN]
    let s = S[k / 32 :+ 1, pn * TN :+ TN]
    let a = A[0 :+ MR, k :+ 32]
    var wf: tile<f32>[32, TN] = f32(w)
    var part: tile<f32>[MR, TN] = dot(a, wf)
    acc += part * s
  }
  atomic_add(C[0 :+ MR, pn * TN :+ TN], acc)     // rows past M are not added
}

// The attention inputs of this step, from the QKV projection QKV [B, HQ +
// 2 HKV, D] (the host's view of [B, (HQ + 2 HKV) D]) and its bias BIAS [1,
// HQ + 2 HKV, D]: the query heads rotated (RoPE, the halves of a head
// paired, as Qwen2 and Llama rotate) into Qr [B, 1, HQ, D] (bf16, the
// attention's operand), the key heads
// rotated and the value heads as they are into the caches at position
// POS[b], in bf16. ROT [TC, 2, D / 2] holds cos then sin of each
// position's angles (the host's table: pos / theta^(2 i / D)). CTA (h, b)
// takes KV head h of sequence b: its NQ query heads, its key and its
// value. The head counts and dims are pinned (Qwen2-7B's; -D others).
// Until 12-07 one CTA took a whole sequence, 28 query heads' [28, 64]
// halves at 14 elements a thread, unrolled: ~2400 instructions run once,
// 8.9 us a launch (H100, one by one); a KV head's [7, 64] is 4 a thread.
@autotune(HQ in [28], HKV in [4], NQ in [7], D in [128], D2 in [64])
@launch(128)
@grid(HKV, B)
@requires(D == 2 * D2, NH == HQ + 2 * HKV, HQ == NQ * HKV)
kernel rope_append(QKV: tensor<f32>[B, NH, D],
                   BIAS: tensor<f32>[1, NH, D],
                   POS: tensor<i32>[B],
                   ROT: tensor<f32>[TC, 2, D2],
                   Qr: tensor<bf16>[B, 1, HQ, D],
                   Kc: tensor<bf16>[B, TC, HKV, D],
                   Vc: tensor<bf16>[B, TC, HKV, D]) {
  let h = ctx.block.x
  let b = ctx.block.y
  let p = POS[b]
  let c = ROT[p, 0 :+ 1, :]                       // [1, D2]
  let s = ROT[p, 1 :+ 1, :]
  let q0 = h * NQ
  let q1 = QKV[b, q0 :+ NQ, 0 :+ D2] + BIAS[0, q0 :+ NQ, 0 :+ D2]        // [NQ, D2]
  let q2 = QKV[b, q0 :+ NQ, D2 :+ D2] + BIAS[0, q0 :+ NQ, D2 :+ D2]
  Qr[b, 0, q0 :+ NQ, 0 :+ D2] = bf16(q1 * c - q2 * s)
  Qr[b, 0, q0 :+ NQ, D2 :+ D2] = bf16(q2 * c + q1 * s)
  let kh = HQ + h
  let k1 = QKV[b, kh :+ 1, 0 :+ D2] + BIAS[0, kh :+ 1, 0 :+ D2]          // [1, D2]
  let k2 = QKV[b, kh :+ 1, D2 :+ D2] + BIAS[0, kh :+ 1, D2 :+ D2]
  Kc[b, p, h :+ 1, 0 :+ D2] = bf16(k1 * c - k2 * s)
  Kc[b, p, h :+ 1, D2 :+ D2] = bf16(k2 * c + k1 * s)
  let vh = HQ + HKV + h
  let v = QKV[b, vh :+ 1, :] + BIAS[0, vh :+ 1, :]                      // [1, D]
  Vc[b, p, h :+ 1, :] = bf16(v)
}

// Attention of each sequence's new query over its cache, in two launches.
// gqa_split_len attends each of NS chunks of sequence b's keys 0 .. POS[b]
// (POS in device memory: POS[b] + 1 keys, the one rope_append just wrote
// the last, so the shapes, and a captured graph, stay the same token after
// token) and writes the chunk's normalized output and its log-sum-exp;
// gqa_merge_len weighs the NS partials of each query head into O. CTA (x,
// h, b) of the split takes the x-th chunk for KV head h. The tiles are
// gqa_decode's, [BQ 2, NQ, .]: Qr's position dim has extent 1, so the
// second row block reads zeros and stores nothing, and the NQ 7 heads
// padded to 8 fill a 16-row tensor-core tile whose softmax stays in the
// fragment layout (a [NQ, D] tile of 8 rows would go through shared memory
// at every row reduction). NS is OP's dim: the host sizes it so that the
// one-warp CTAs fill the device. Until 12-06 this was one kernel whose last
// CTA to arrive merged, one warp walking the partials two a step, an L2
// round trip every two splits: the autotuner took 8 splits, 32 one-warp
// CTAs for B 1, 65 us a layer at context 4096 (ncu, H100, 12-06b call 1).
@autotune(NQ in [7], D in [128], BQ in [2], BK in [32, 64], PIPE in [4, 2])
@launch(32)
@pipeline(PIPE)
@padstage
@dynshared
@grid(NS, HKV, B)
@requires(HQ == NQ * HKV)
kernel gqa_split_len(Qr: tensor<bf16>[B, 1, HQ, D],
                     Kc: tensor<bf16>[B, TC, HKV, D],
                     Vc: tensor<bf16>[B, TC, HKV, D],
                     POS: tensor<i32>[B],
                     OP: tensor<f32>[B, 1, HQ, NS, D],
                     LSE: tensor<f32>[B, 1, HQ, NS],
                     scale: f32) {
  let b = ctx.block.z
  let h = ctx.block.y
  let x = ctx.block.x
  let t_end = POS[b] + 1

  let q = Qr[b, 0 :+ BQ, h * NQ :+ NQ, :]         // [BQ, NQ, D], rows past the first zero
  var acc: tile<f32>[BQ, NQ, D] = 0.0
  var m: tile<f32>[BQ, NQ, 1] = -inf
  var l: tile<f32>[BQ, NQ, 1] = 0.0
  let sl2 = scale * 1.4426950408889634

  let chunk = cdiv(cdiv(t_end, NS), BK) * BK
  let k0 = x * chunk
  let k1 = min(t_end, k0 + chunk)
  let t_full = max(k0, k0 + (k1 - k0) / BK * BK)
  for t0 in range(k0, t_full, BK) {
    let k = Kc[b, t0 :+ BK, h, :]                 // [BK, D]
    let v = Vc[b, t0 :+ BK, h, :]
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
    let k = Kc[b, t0 :+ BK, h, :]
    let v = Vc[b, t0 :+ BK, h, :]
    var sc: tile<f32>[BQ, NQ, BK] = dot_t(q, k) * sl2
    let kpos = t0 + iota(BQ, NQ, BK, axis = 2)
    sc = where(kpos < k1, sc, -inf)
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
  OP[b, 0 :+ BQ, h * NQ :+ NQ, x, :] = acc * (1.0 / lsafe)
  // (m is in base 2: ln 2 brings it back to the natural log the merge weighs by)
  LSE[b, 0 :+ BQ, h * NQ :+ NQ, x :+ 1] = m * 0.6931471805599453 + log(lsafe)
}

// O[b, 0, hq, :] = the NS partials of query head hq weighed by exp(LSE -
// max LSE), over the weights' sum: gqa_decode.ph's gqa_decode_merge, one
// CTA a query head, one thread a column, NSM splits a step with a running
// max (so NS has no ceiling), each step's loads issued together; O in f32
// for the O projection. A split without keys has LSE -inf: it weighs
// nothing, and split 0 always has one.
@autotune(D in [128], NSM in [32, 64])
@launch(128)
@grid(HQ, B)
kernel gqa_merge_len(OP: tensor<f32>[B, 1, HQ, NS, D],
                     LSE: tensor<f32>[B, 1, HQ, NS],
                     O: tensor<f32>[B, 1, HQ, D]) {
  let hq = ctx.block.x
  let b = ctx.block.y
  var m: tile<f32>[1, 1] = -inf
  var num: tile<f32>[1, D] = 0.0
  var den: tile<f32>[1, 1] = 0.0
  for j0 in range(0, NS, NSM) {
    let lraw = LSE[b, 0, hq :+ 1, j0 :+ NSM]                         // [1, NSM]
    let o = OP[b, 0, hq, j0 :+ NSM, :]                               // [NSM, D]
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
  O[b, 0, hq :+ 1, :] = num / den
}

// Hh[b, :] = silu(GU[b, 0 .. F]) * GU[b, F .. 2F]: the gate and up
// projections come out of one q8_gemv, side by side.
@autotune(TF in [1024])
@launch(256)
@grid(cdiv(F, TF), B)
kernel silu_mul(GU: tensor<f32>[B, F2],
                Hh: tensor<f32>[B, F]) {
  let b = ctx.block.y
  let c = ctx.block.x * TF
  let g = GU[b :+ 1, c :+ TF]
  let u = GU[b :+ 1, F + c :+ TF]
  Hh[b :+ 1, c :+ TF] = g * sigmoid(g) * u
}

// TOK[b] = argmax(L[b, :]) (the least index among ties), then POS[b] += 1:
// greedy sampling, and the step's end. CTA (x, b) takes TV logits and
// stores its maximum and where it is; the last of the row's CTAs to
// arrive picks among them.
@autotune(TV in [2048], NCM in [128])
@launch(256)
@grid(cdiv(V, TV), B)
@scratch(PV: tensor<f32>[B, cdiv(V, TV)], PI: tensor<i32>[B, cdiv(V, TV)], Cnt: tensor<i32>[B] = 0)
kernel argmax_step(L: tensor<f32>[B, V],
                   TOK: tensor<i32>[B],
                   POS: tensor<i32>[B]) {
  let b = ctx.block.y
  let c0 = ctx.block.x * TV
  let col = c0 + iota(1, TV, axis = 1)
  let l = where(col < V, L[b :+ 1, c0 :+ TV], -inf)
  PV[b :+ 1, ctx.block.x :+ 1] = rowmax(l)
  PI[b :+ 1, ctx.block.x :+ 1] = c0 + rowargmax(l)
  let nc = cdiv(V, TV)
  let last = arrive(Cnt[b], nc)
  if last {
    var best: tile<f32>[1, 1] = -inf
    var at: tile<i32>[1, 1] = 0
    for j0 in range(0, nc, NCM) {
      let j = j0 + iota(1, NCM, axis = 1)
      let v = where(j < nc, PV[b :+ 1, j0 :+ NCM], -inf)
      let i = PI[b :+ 1, j0 :+ NCM]
      let vm = rowmax(v)
      // the least index of the chunk's maximum; an earlier chunk's keeps ties
      let im = rowmin(where(v == vm, i, 2147483647))
      at = where(vm > best, im, at)
      best = tmax(best, vm)
    }
    TOK[b] = at[0, 0]
    POS[b] = POS[b] + 1
  }
}

// The read-only roof of the step's bytes: the sum of a buffer of R rows of
// C 32-bit words (the host's one allocation of all the weights, viewed so),
// a CTA a block of TR rows, four rows a step with each thread's words in
// flight together; it writes one word a CTA. What it reaches is the
// bandwidth those bytes can be read at, the denominator of the example's
// roof (llm_decode_host --bench).
@autotune(C in [1024], TR in [256])
@launch(256)
@grid(cdiv(R, TR))
kernel read_roof(Wd: tensor<i32>[R, C], Out: tensor<i32>[NB, 1]) {
  let r0 = ctx.block.x * TR
  var acc: tile<i32>[4, C] = 0
  for r in range(r0, min(R, r0 + TR), 4) {
    acc += Wd[r :+ 4, :]
  }
  Out[ctx.block.x :+ 1, 0 :+ 1] = rowsum(transpose(rowsum(acc)))
}
