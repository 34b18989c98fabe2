// Subscripts: point subscripts that give scalars (of a tensor and of a
// tile), sub-tiles of a tile value, rank-3 and rank-4 tensor slices with
// points reducing the rank.

// Scalars from point subscripts: S[b, 2] of a tensor and t[1, 3] of a tile
// value, used in tile arithmetic: Y = t * S[b, 2] + t[1, 3].
@grid(cdiv(M, 5))
kernel point_subscript(X: tensor<f32>[M, 12], S: tensor<f32>[G, 4], Y: tensor<f32>[M, 12]) {
  let b = ctx.block.x
  let r0 = b * 5
  let t = X[r0 :+ 5, :]
  let s = S[b, 2]
  let p = t[1, 3]
  Y[r0 :+ 5, :] = t * s + p
}

// Sub-tiles of a [8, 12] tile value: a fixed [5, 7] window t[2 :+ 5, 3 : 10],
// a row t[i, :] and a [3, 12] window at a run-time start t[j :+ 3, :].
@grid(cdiv(M, 8))
kernel extract_subtile(X: tensor<f32>[M, 12], A: tensor<f32>[G, 5, 7], R: tensor<f32>[G, 12],
                       W: tensor<f32>[G, 3, 12], k: i32) {
  let b = ctx.block.x
  let t: tile<f32>[8, 12] = X[b * 8 :+ 8, :] * 2.0
  A[b, :, :] = t[2 :+ 5, 3 : 10]
  let i = b % 8
  R[b :+ 1, :] = t[i :+ 1, :]
  let j = (b + k) % 6
  W[b, :, :] = t[j :+ 3, :]
}

// Rank-3 tensor slices: a [4, 12] tile at a point of the first dim (rank
// reduced) and a rank-3 [2, 4, 6] tile, both stored into rank-3 tensors.
@grid(cdiv(S, 4), B)
kernel rank3_slices(X: tensor<f32>[B, S, 12], Y: tensor<f32>[B, S, 12], Z: tensor<f32>[2, S, 6]) {
  let s0 = ctx.block.x * 4
  let b = ctx.block.y
  Y[b, s0 :+ 4, :] = X[b, s0 :+ 4, :] * 3.0
  if b == 0 {
    Z[:, s0 :+ 4, :] = X[0 :+ 2, s0 :+ 4, 6 :+ 6] - 1.0
  }
}

// Rank-4 tensor slices: X[a, :, c0 :+ 4, :] is a rank-3 [3, 4, 12] tile,
// X[a, 1, c0 :+ 4, :] a [4, 12] tile broadcast against it, X[a, 2, c, j]
// scalars and X[a, 0, c, :] rank-1 rows.
@grid(cdiv(C, 4), A)
kernel rank4_slices(X: tensor<f32>[A, 3, C, 12], Y: tensor<f32>[A, 3, C, 12], R: tensor<f32>[A, C, 12]) {
  let c0 = ctx.block.x * 4
  let a = ctx.block.y
  Y[a, :, c0 :+ 4, :] = X[a, :, c0 :+ 4, :] + X[a, 1, c0 :+ 4, :] * 10.0
  for c in range(c0, min(c0 + 4, C)) {
    R[a, c, :] = X[a, 0, c, :] * X[a, 2, c, 5]
  }
}
