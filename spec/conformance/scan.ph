// cumsum and tril (spec 9.2): Phobos's chunkwise-attention builtins.
// cumsum is the inclusive prefix sum down a tile's first dim, a scan
// through the exchange area; tril keeps t[i, j] where j <= i.

// Y[:, c0 :+ BN] = cumsum(X[:, c0 :+ BN]) for up to BR rows: each CTA a
// block of columns, every row at once (rows past R are slack, after the
// real ones).
@autotune(BR in [64], BN in [16, 32])
@grid(cdiv(N, BN))
kernel cumsum_cols(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let c0 = ctx.block.x * BN
  Y[0 :+ BR, c0 :+ BN] = cumsum(X[0 :+ BR, c0 :+ BN])
}

// a running count over a rank-1 tile of integers
@autotune(BN in [256])
@grid(1)
kernel cumsum_vec(X: tensor<i32>[N], Y: tensor<i32>[N]) {
  Y[0 :+ BN] = cumsum(X[0 :+ BN])
}

// the causal mask of a square block, and its row sums after the mask
@autotune(B in [64])
@grid(1)
kernel tril_block(X: tensor<f32>[R, R], Y: tensor<f32>[R, R], S: tensor<f32>[R, 1]) {
  let t = tril(X[0 :+ B, 0 :+ B])
  Y[0 :+ B, 0 :+ B] = t
  S[0 :+ B, :] = rowsum(t)
}
