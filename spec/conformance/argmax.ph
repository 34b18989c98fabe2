// rowargmax (spec 9.3): the index of each row's largest element, the first
// where several tie (a greedy decode's next token). Columns past N are
// masked to -inf first, as for rowmax.
@autotune(BR in [4], BN in [256])
@grid(cdiv(R, BR))
kernel argmax_rows(X: tensor<f32>[R, N], I: tensor<i32>[R, 1]) {
  let r0 = ctx.block.x * BR
  let cols = iota(BR, BN)
  let x = where(cols < N, X[r0 :+ BR, 0 :+ BN], -inf)
  I[r0 :+ BR, :] = rowargmax(x)
}

// The same written by hand as -rowmax(-x) over i32, as a user without
// rowargmax or rowmin would: the negations wrap at -2^31, and the backend
// must not hand ptxas a max identity it folds through them (12-05).
@autotune(BR in [4], BN in [256])
@grid(cdiv(R, BR))
kernel argmax_rows_by_hand(X: tensor<f32>[R, N], I: tensor<i32>[R, 1]) {
  let r0 = ctx.block.x * BR
  let cols = iota(BR, BN)
  let x = where(cols < N, X[r0 :+ BR, 0 :+ BN], -inf)
  I[r0 :+ BR, :] = -rowmax(-where(x < rowmax(x), 2147483647, cols))
}
