// Atomics that give the old value back (spec 9.6) and grid_barrier with
// @persistent (spec 9.8): results that do not depend on the order the CTAs
// run in, nor on how many of them a persistent grid has.

// Tickets: each CTA takes one (atomic_add, Phobos's form, the old value
// back) and marks it; after the grid barrier every CTA reads the count,
// which is then the whole grid's. atomic_cas on each CTA's own flag
// succeeds once (the old 0 back) and then fails (its own value back); a
// 64-bit swap into a column (Phobos's form, the value dropped); an f32 add
// whose old value is never negative. After the barrier every CTA reads its
// two slots: the count back at 0, the generation one on.
@launch(64)
@grid(G)
kernel atomic_tickets(Cnt: tensor<i32>[4], Seen: tensor<i32>[G], Flags: tensor<i32>[G], First: tensor<i32>[G],
                      Second: tensor<i32>[G], Wide: tensor<i64>[G, 1], F: tensor<f32>[1], Total: tensor<i32>[G],
                      Bar: tensor<i32>[2], Gen: tensor<i32>[G]) {
  let b = ctx.block.x
  let t = atomic_add(Cnt, 0, 1)
  Seen[t] = 1
  let p = atomic_cas(Flags[b], 0, b + 1)
  First[b] = p
  let q = atomic_cas(Flags, b, 0, 99)
  Second[b] = q
  atomic_cas(Wide, b, 0, i64(b + 1) * 4294967296)
  let f = atomic_add(F[0], 0.5)
  atomic_add(Cnt, 1, where(f >= 0.0, 1, 0))
  grid_barrier(Bar)
  Total[b] = Cnt[0]
  Gen[b] = Bar[1] * 10 + Bar[0]
}

// A persistent kernel in rounds: its CTAs walk the rows ctx.grid.x apart,
// and each round reads every row's neighbours, so its two phases are kept
// apart by grid barriers (six of them, one pair of slots). CTA 0 then sums
// the rows.
@persistent
@launch(128)
@grid(R)
kernel grid_rounds(A: tensor<f32>[R, 64], B: tensor<f32>[R, 64], Bar: tensor<i32>[2], S: tensor<f32>[1, 64]) {
  for it in range(0, 3) {
    for r in range(ctx.block.x, R, ctx.grid.x) {
      let up = A[max(r - 1, 0) :+ 1, :]
      let down = A[min(r + 1, R - 1) :+ 1, :]
      B[r :+ 1, :] = (up + down) * 0.5
    }
    grid_barrier(Bar)
    for r in range(ctx.block.x, R, ctx.grid.x) {
      A[r :+ 1, :] = B[r :+ 1, :]
    }
    grid_barrier(Bar)
  }
  if ctx.block.x == 0 {
    var s: tile<f32>[1, 64] = 0.0
    for q in range(0, R) {
      s += A[q :+ 1, :]
    }
    S[0 :+ 1, :] = s
  }
}
