// Slices that run past a tensor's end and tiles with extents that are not
// powers of two.

// A 2-D copy in [16, 16] tiles of a tensor whose dims are no multiple of
// 16: the stores past the ends are skipped.
@grid(cdiv(M, 16), cdiv(N, 16))
kernel ragged_copy(X: tensor<f32>[M, N], Y: tensor<f32>[M, N]) {
  let r0 = ctx.block.x * 16
  let c0 = ctx.block.y * 16
  Y[r0 :+ 16, c0 :+ 16] = X[r0 :+ 16, c0 :+ 16] * 2.0 + 1.0
}

// Loads past the end read zero: rowsum over a [8, 16] slice of a tensor
// with 10 columns sums only the 10, and the [8, 16] slice read back from
// column 4 on holds zeros past column 9 (S[i, j] = X[i, 4 + j] or 0).
@grid(cdiv(M, 8))
kernel ragged_load_zero(X: tensor<f32>[M, N], R: tensor<f32>[M, 1], S: tensor<f32>[M, 16]) {
  let r0 = ctx.block.x * 8
  R[r0 :+ 8, :] = rowsum(X[r0 :+ 8, 0 :+ 16])
  S[r0 :+ 8, :] = X[r0 :+ 8, 4 :+ 16] + 0.0
}

// Tiles [BR, BC] with BR in 3, 5, 7 and BC in 5, 12, 96 (padded to 4, 8, 8
// and 8, 16, 128): Y = X * 3 - 2.
@autotune(BR in [3, 5, 7], BC in [5, 12, 96])
@grid(cdiv(M, BR), cdiv(N, BC))
kernel npot_tiles(X: tensor<f32>[M, N], Y: tensor<f32>[M, N]) {
  let r0 = ctx.block.x * BR
  let c0 = ctx.block.y * BC
  Y[r0 :+ BR, c0 :+ BC] = X[r0 :+ BR, c0 :+ BC] * 3.0 - 2.0
}

// A row sum over a [3, 96] tile and a column sum over a [7, 5] tile through
// transpose (physical [4, 128] and [8, 8]).
@grid(cdiv(M, 21))
kernel npot_reduce(X: tensor<f32>[M, 96], R: tensor<f32>[M, 1], C: tensor<f32>[G, 5]) {
  let r0 = ctx.block.x * 21
  for i in range(0, 7) {
    R[r0 + 3 * i :+ 3, :] = rowsum(X[r0 + 3 * i :+ 3, :])
  }
  let cs = rowsum(transpose(X[r0 :+ 7, 0 :+ 5]))
  C[ctx.block.x :+ 1, :] = transpose(cs)
}
