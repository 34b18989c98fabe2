// Q8_0 matvec with the K loop split across CTAs, for when N alone does not
// give the GPU enough CTAs to keep its memory system busy (N / TN below a
// few thousand CTAs): CTA (x, y) takes TN columns and the y-th of KSPLIT
// chunks of K, and writes its partial sums to row y of P. Then it arrives
// at column block x's counter in Cnt (spec 9.5); the KSPLIT-th CTA to
// arrive adds the KSPLIT rows into C, in the same launch (q8_reduce, below,
// did that in a second one: as fast, 28.7 against 28.8 us at 4096 x 14336,
// call 4 of the fourth session of 2026-11-30, and one launch).
//
// P and Cnt are the library's (@scratch, spec 11.3): the caller passes A,
// W, S and C; libphobos sizes P (KSPLIT rows) and Cnt (a counter a column
// block) for the variant it launches, zeroes Cnt once, and keeps them
// between launches (each launch leaves the counters at zero). KSPLIT is an
// @autotune list like TN's: the autotuner picks the split per shape (the
// host formula picked 36 at 4096 x 14336 where 16 was fastest, 2026-12-01).
//
// Inside, the loop is the seed's with TN / 4 threads: each thread owns four
// neighbouring columns of the [32, TN] weight tile (one 4-byte load per
// row), and dot(a, wf) contracts within the thread. The weight and scale
// loads come before the activations' staging so that they are in flight
// while the CTA waits at the staging barrier. @launch asks for OCC / TN
// CTAs per SM: OCC 4096 holds ptxas to 64 registers a thread, OCC 2048
// gives it 128 and half the warps; the autotuner picks per shape (on the
// H200 each wins somewhere; TN 256 makes the most CTAs and wins at 4096 x
// 14336, call 4 of 2026-11-30, 28.6 against 29.1 us; TN 2048 never won). (With
// @pipeline the tiles would stream through rings of bulk copies; on the
// H200 that is slower here than the threads' own loads: see
// spec/conformance/pipeline.ph and spec/LANGUAGE.md 15.9.)
//
// What the launch must give (spec 11.2, checked by libphobos before each
// launch): a scale for every block of 32 rows of W (a missing one would
// read as zero and silently zero those rows' products).
@autotune(KSPLIT in [8, 16, 32, 64, 128], TN in [256, 512, 1024], OCC in [2048, 4096])
@launch(TN / 4, OCC / TN)
@grid(cdiv(N, TN), KSPLIT)
@requires(KB >= cdiv(K, 32))
@scratch(P: tensor<f32>[KSPLIT, N], Cnt: tensor<i32>[cdiv(N, TN)] = 0)
kernel q8_matvec_split(A: tensor<f32>[1, K],
                       W: tensor<i8>[K, N],
                       S: tensor<f32>[KB, N],
                       C: tensor<f32>[1, N]) {
  let pn = ctx.block.x
  let chunk = cdiv(K, KSPLIT * 32) * 32
  let k0 = ctx.block.y * chunk
  let k1 = min(K, k0 + chunk)
  var acc: tile<f32>[1, TN] = 0.0
  for k in range(k0, k1, 32) {
    let w = W[k :+ 32, pn * TN :+ TN]
    let s = S[k / 32 :+ 1, pn * TN :+ TN]
    let a = A[0 :+ 1, k :+ 32]
    var wf: tile<f32>[32, TN] = f32(w)
    var part: tile<f32>[1, TN] = dot(a, wf)
    acc += part * s
  }
  P[ctx.block.y :+ 1, pn * TN :+ TN] = acc
  // the last CTA of the column block sums its KSPLIT partial rows, eight
  // loads in flight at a time (rows past KSPLIT load as zero)
  let last = arrive(Cnt[pn], KSPLIT)
  if last {
    var c: tile<f32>[1, TN] = 0.0
    for r in range(0, KSPLIT, 8) {
      let p0 = P[r :+ 1, pn * TN :+ TN]
      let p1 = P[r + 1 :+ 1, pn * TN :+ TN]
      let p2 = P[r + 2 :+ 1, pn * TN :+ TN]
      let p3 = P[r + 3 :+ 1, pn * TN :+ TN]
      let p4 = P[r + 4 :+ 1, pn * TN :+ TN]
      let p5 = P[r + 5 :+ 1, pn * TN :+ TN]
      let p6 = P[r + 6 :+ 1, pn * TN :+ TN]
      let p7 = P[r + 7 :+ 1, pn * TN :+ TN]
      c += ((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))
    }
    C[0 :+ 1, pn * TN :+ TN] = c
  }
}

// C[1, N] = the sum of P's KSPLIT rows, as a kernel of its own (for P from
// elsewhere; q8_matvec_host's clean L2 flush runs it). Sixteen rows per iteration, each
// its own load and all loaded before the first add, so sixteen loads per
// thread are in flight at once (one at a time would make the sum as slow
// as KSPLIT memory latencies); rows past KSPLIT load as zero. Threads own
// four neighbouring columns (16-byte loads) and CTAs are small, so that
// even N = 4096 gives the GPU enough of them.
@autotune(TN in [128, 256])
@launch(TN / 4)
@grid(cdiv(N, TN))
kernel q8_reduce(P: tensor<f32>[KSPLIT, N], C: tensor<f32>[1, N]) {
  let c = ctx.block.x * TN
  var acc: tile<f32>[1, TN] = 0.0
  for r in range(0, KSPLIT, 16) {
    let p0 = P[r :+ 1, c :+ TN]
    let p1 = P[r + 1 :+ 1, c :+ TN]
    let p2 = P[r + 2 :+ 1, c :+ TN]
    let p3 = P[r + 3 :+ 1, c :+ TN]
    let p4 = P[r + 4 :+ 1, c :+ TN]
    let p5 = P[r + 5 :+ 1, c :+ TN]
    let p6 = P[r + 6 :+ 1, c :+ TN]
    let p7 = P[r + 7 :+ 1, c :+ TN]
    let p8 = P[r + 8 :+ 1, c :+ TN]
    let p9 = P[r + 9 :+ 1, c :+ TN]
    let p10 = P[r + 10 :+ 1, c :+ TN]
    let p11 = P[r + 11 :+ 1, c :+ TN]
    let p12 = P[r + 12 :+ 1, c :+ TN]
    let p13 = P[r + 13 :+ 1, c :+ TN]
    let p14 = P[r + 14 :+ 1, c :+ TN]
    let p15 = P[r + 15 :+ 1, c :+ TN]
    acc += (((p0 + p1) + (p2 + p3)) + ((p4 + p5) + (p6 + p7))) +
           (((p8 + p9) + (p10 + p11)) + ((p12 + p13) + (p14 + p15)))
  }
  C[0 :+ 1, c :+ TN] = acc
}
