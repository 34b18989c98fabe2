// Statements, one kernel each: let, var (with and without an initializer),
// assignment and the compound assignments, stores into tensor slices and
// into slices of a var tile, for with 2 and 3 range arguments, if / else if
// / else on uniform scalar conditions, nested loops. while is in
// while_loop.ph.

// let (a view and a typed value), var with an initializer, plain assignment.
@grid(cdiv(M, 8))
kernel let_var_assign(X: tensor<f32>[M, 12], Y: tensor<f32>[M, 12]) {
  let r0 = ctx.block.x * 8
  let a = X[r0 :+ 8, :]
  let b: tile<f32>[8, 12] = a * 2.0
  var t = b + 1.0
  t = t * a
  Y[r0 :+ 8, :] = t
}

// +=, -=, *=, /= on a var tile.
@grid(cdiv(M, 4))
kernel compound_tile(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], Z: tensor<f32>[M, N]) {
  let r0 = ctx.block.x * 4
  var t: tile<f32>[4, 16] = X[r0 :+ 4, 0 :+ 16]
  t += Y[r0 :+ 4, 0 :+ 16]
  t *= 3.0
  t -= X[r0 :+ 4, 0 :+ 16]
  t /= Y[r0 :+ 4, 0 :+ 16]
  Z[r0 :+ 4, 0 :+ 16] = t
}

// +=, -=, *=, /= on a tensor slice: each reads, computes and stores.
@grid(cdiv(M, 4))
kernel compound_tensor(X: tensor<f32>[M, N], C: tensor<f32>[M, N]) {
  let r0 = ctx.block.x * 4
  C[r0 :+ 4, 0 :+ 16] += X[r0 :+ 4, 0 :+ 16]
  C[r0 :+ 4, 0 :+ 16] *= 2.0
  C[r0 :+ 4, 0 :+ 16] -= 0.5
  C[r0 :+ 4, 0 :+ 16] /= 4.0
}

// var without an initializer, filled row by row in a 2-argument for loop
// with point-subscripted slice writes.
@grid(cdiv(M, 5))
kernel var_rows(X: tensor<f32>[M, 12], Y: tensor<f32>[M, 12]) {
  let r0 = ctx.block.x * 5
  var t: tile<f32>[5, 12]
  for r in range(0, 5) {
    t[r, :] = X[r0 + r, :] * f32(r + 1)
  }
  Y[r0 :+ 5, :] = t
}

// var without an initializer, filled by column blocks in a 3-argument for
// loop (':+' writes into the var tile), then single elements overwritten
// with point writes.
@grid(cdiv(M, 4))
kernel var_cols(X: tensor<f32>[M, 12], Y: tensor<f32>[M, 12]) {
  let r0 = ctx.block.x * 4
  var t: tile<f32>[4, 12]
  for c in range(0, 12, 3) {
    t[:, c :+ 3] = X[r0 :+ 4, c :+ 3] + f32(c)
  }
  t[0, 0] = 100.0
  t[3, 11] = t[0, 0] + t[3, 10]
  Y[r0 :+ 4, :] = t
}

// for over range(start, end) and range(start, end, step) with run-time
// bounds: Y[0] sums rows 1..N-1, Y[1] sums rows 2, 5, 8, ...
@grid(1)
kernel for_ranges(X: tensor<f32>[N, 8], Y: tensor<f32>[2, 8]) {
  var s: tile<f32>[1, 8] = 0.0
  for i in range(1, N) {
    s += X[i :+ 1, :]
  }
  Y[0 :+ 1, :] = s
  var e: tile<f32>[1, 8] = 0.0
  for i in range(2, N, 3) {
    e += X[i :+ 1, :]
  }
  Y[1 :+ 1, :] = e
}

// if / else if / else on ctx.block.x: block 0 adds 1, odd blocks double,
// the other even blocks negate.
@grid(cdiv(M, 4))
kernel if_chain(X: tensor<f32>[M, 8], Y: tensor<f32>[M, 8]) {
  let r0 = ctx.block.x * 4
  let x = X[r0 :+ 4, :]
  if ctx.block.x == 0 {
    Y[r0 :+ 4, :] = x + 1.0
  } else if ctx.block.x % 2 == 1 {
    Y[r0 :+ 4, :] = x * 2.0
  } else {
    Y[r0 :+ 4, :] = -x
  }
}

// if on a bool parameter, then if / else if / else on an i32 parameter.
@grid(cdiv(M, 4))
kernel if_param(X: tensor<f32>[M, 8], Y: tensor<f32>[M, 8], flag: bool, mode: i32) {
  let r0 = ctx.block.x * 4
  var t: tile<f32>[4, 8] = X[r0 :+ 4, :]
  if flag {
    t = t * t
  }
  if mode < 0 {
    t = t - 1.0
  } else if mode == 0 {
    t = t + 10.0
  } else {
    t = t * -3.0
  }
  Y[r0 :+ 4, :] = t
}

// Nested loops: C = A @ B as rank-1 updates, an outer loop over K blocks of 8
// and an inner loop over the block's columns up to min(kb + 8, K); the
// [4, 1] column of A broadcasts against the [1, 8] row of B.
@grid(cdiv(M, 4), cdiv(N, 8))
kernel nested_loops(A: tensor<f32>[M, K], B: tensor<f32>[K, N], C: tensor<f32>[M, N]) {
  let r0 = ctx.block.x * 4
  let c0 = ctx.block.y * 8
  var acc: tile<f32>[4, 8] = 0.0
  for kb in range(0, K, 8) {
    for k in range(kb, min(kb + 8, K)) {
      acc += A[r0 :+ 4, k :+ 1] * B[k :+ 1, c0 :+ 8]
    }
  }
  C[r0 :+ 4, c0 :+ 8] = acc
}

// A grid-stride loop: the step ctx.grid.x * 4 is known only at run time;
// each CTA takes every ctx.grid.x-th block of 4 rows.
@grid(3)
kernel grid_stride(X: tensor<f32>[M, 8], Y: tensor<f32>[M, 8]) {
  for r in range(ctx.block.x * 4, M, ctx.grid.x * 4) {
    Y[r :+ 4, :] = X[r :+ 4, :] * 0.5 + f32(ctx.block.x)
  }
}

// Scalar vars: an f32 and an i32 accumulated with += and *= in a loop from
// point subscripts, stored with point stores. Y[i] = [sum_j X[i, j],
// prod_j (1 + X[i, j] / 8), count of j with X[i, j] > 0].
@grid(M)
kernel scalar_vars(X: tensor<f32>[M, N], Y: tensor<f32>[M, 3], C: tensor<i32>[M]) {
  let i = ctx.block.x
  var s: f32 = 0.0
  var p: f32 = 1.0
  var n = 0
  for j in range(0, N) {
    let x = X[i, j]
    s += x
    p *= 1.0 + x / 8.0
    if x > 0.0 {
      n += 1
    }
  }
  Y[i, 0] = s
  Y[i, 1] = p
  Y[i, 2] = f32(n)
  C[i] = n
}

// A staged tile filled inside an if (cp.async on the GPU where its rows are
// 16-byte chunks) and read after it: the copies must be waited for on the
// branch that issued them, not at a barrier of the other branch.
// Y = 2 X when flag, else 2.
@grid(cdiv(M, 4))
kernel if_stage(X: tensor<f32>[M, 8], Y: tensor<f32>[M, 8], flag: bool) {
  let r0 = ctx.block.x * 4
  var t: tile<f32>[4, 8] = 0.0
  if flag {
    t = X[r0 :+ 4, :]
  } else {
    t = t + 1.0
  }
  Y[r0 :+ 4, :] = t * 2.0
}
