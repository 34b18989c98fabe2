// Extents whose product passes 64 bits (2^32 * 2^32 wraps to 0): each
// extent is bounded like a tile dim, so the tile is refused, not compiled
// with its store dropped.
kernel k(A: tensor<i32>[M, N]) {
  let t = iota(4294967296, 4294967296)
  A[0 :+ 1, 0 :+ 1] = t[0 :+ 1, 0 :+ 1]
}
