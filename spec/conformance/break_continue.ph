// break and continue (spec 10.4): the whole CTA leaves the loop, or its
// iteration, together (conditions are scalars). Row sums of X over blocks
// of 32 columns: a block whose first element in row 0 is negative is
// skipped (continue), and the walk stops at the first block at or past
// `stop` columns (break); a while loop counts the blocks summed the same way.
@autotune(BR in [4])
@grid(cdiv(R, BR))
kernel walk(X: tensor<f32>[R, N], Y: tensor<f32>[R, 1], C: tensor<i32>[R, 1], stop: i32) {
  let r0 = ctx.block.x * BR
  var acc: tile<f32>[BR, 1] = 0.0
  for c0 in range(0, N, 32) {
    if c0 >= stop {
      break
    }
    if X[0, c0] < 0.0 {
      continue
    }
    acc += rowsum(X[r0 :+ BR, c0 :+ 32])
  }
  Y[r0 :+ BR, :] = acc
  var n = 0
  var c = 0
  while c < N {
    c += 32
    if c - 32 >= stop {
      break
    }
    if X[0, c - 32] < 0.0 {
      continue
    }
    n += 1
  }
  C[r0 :+ BR, :] = 0 * iota(BR, 1) + n
}
