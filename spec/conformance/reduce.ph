// Row reductions over ragged tiles: the slack of a padded tile must take the
// reduction's identity (-inf for rowmax, 0 for rowsum), never a stray value.

// rowmax and rowsum of a [5, 12] tile (physical [8, 16]).
@grid(cdiv(M, 5))
kernel rowmax_rowsum(X: tensor<f32>[M, 12], MX: tensor<f32>[M, 1], SM: tensor<f32>[M, 1]) {
  let r0 = ctx.block.x * 5
  let x = X[r0 :+ 5, :]
  MX[r0 :+ 5, :] = rowmax(x)
  SM[r0 :+ 5, :] = rowsum(x)
}

// rowmax of a [3, 7] tile (physical [4, 8]) and of a [5, 12] tile: with
// every value negative, a slack lane taken as 0 would win the max.
@grid(cdiv(M, 5))
kernel rowmax_neg(X: tensor<f32>[M, 12], A: tensor<f32>[M, 1], B: tensor<f32>[M, 1]) {
  let r0 = ctx.block.x * 5
  B[r0 :+ 5, :] = rowmax(X[r0 :+ 5, :])
  A[r0 :+ 3, :] = rowmax(X[r0 :+ 3, 0 :+ 7])
  A[r0 + 3 :+ 2, :] = rowmax(X[r0 + 3 :+ 2, 0 :+ 7])
}

// rowsum of an i8 tile is i32: the sums of 12 bytes do not wrap at 8 bits.
// rowmax of the same tile stays i8.
@grid(cdiv(M, 5))
kernel rowsum_i8(X: tensor<i8>[M, 12], S: tensor<i32>[M, 1], MX: tensor<i8>[M, 1]) {
  let r0 = ctx.block.x * 5
  let x = X[r0 :+ 5, :]
  S[r0 :+ 5, :] = rowsum(x)
  MX[r0 :+ 5, :] = rowmax(x)
}

// rowmax and rowsum of a rank-3 [2, 5, 7] tile (physical [2, 8, 8]) reduce
// the last dim: [2, 5, 1].
@grid(cdiv(B, 2))
kernel reduce_rank3(X: tensor<f32>[B, 5, 7], MX: tensor<f32>[B, 5, 1], SM: tensor<f32>[B, 5, 1]) {
  let b0 = ctx.block.x * 2
  let x = X[b0 :+ 2, :, :]
  MX[b0 :+ 2, :, :] = rowmax(x)
  SM[b0 :+ 2, :, :] = rowsum(x)
}

// Reductions of computed values whose slack lanes are not zero: exp(0) = 1
// in the slack of exp(x), and -(x * x) - 1 is -1 in slack lanes while
// every real lane is below -1 (|x| >= 0.25). Tiles [5, 12] and [3, 7].
@grid(cdiv(M, 5))
kernel reduce_computed(X: tensor<f32>[M, 12], SE: tensor<f32>[M, 1], MQ: tensor<f32>[M, 1],
                       MS: tensor<f32>[M, 1]) {
  let r0 = ctx.block.x * 5
  let x = X[r0 :+ 5, :]
  SE[r0 :+ 5, :] = rowsum(exp(x))
  MQ[r0 :+ 5, :] = rowmax(-(x * x) - 1.0)
  let y = X[r0 :+ 3, 0 :+ 7]
  MS[r0 :+ 3, :] = rowmax(-(y * y) - 1.0) + rowsum(exp(y))
  let z = X[r0 + 3 :+ 2, 0 :+ 7]
  MS[r0 + 3 :+ 2, :] = rowmax(-(z * z) - 1.0) + rowsum(exp(z))
}

// rowmax of an unsigned byte tile: its identity is 0, not the most
// negative i32 (which max.u32 would take for the largest), and rowsum of
// it is i32.
@grid(cdiv(M, 5))
kernel rowmax_u8(X: tensor<u8>[M, 12], S: tensor<i32>[M, 1], MX: tensor<u8>[M, 1]) {
  let r0 = ctx.block.x * 5
  let x = X[r0 :+ 5, :]
  S[r0 :+ 5, :] = rowsum(x)
  MX[r0 :+ 5, :] = rowmax(x)
}

// A [16, 1] load added to a row sum takes the row layout of the blocked
// tile reduced (spec 15.12): it must be loaded in that layout, not in the
// flat chunks (the transpose keeps the flat chunk at one element, where
// the flat rows path would otherwise have taken the load).
@launch(128)
@grid(cdiv(M, 16))
kernel rowsum_plus_col(X: tensor<f32>[M, 64], C: tensor<f32>[M, 1], Y: tensor<f32>[M, 1],
                       T: tensor<f32>[4, 4], U: tensor<f32>[4, 4]) {
  let r0 = ctx.block.x * 16
  let x = X[r0 :+ 16, :]
  Y[r0 :+ 16, :] = rowsum(x) + C[r0 :+ 16, :]
  if ctx.block.x == 0 {
    U[:, :] = transpose(T[:, :])
  }
}
