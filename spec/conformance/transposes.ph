// Transposes of blocked register tiles through a padded shared tile
// (spec 15.4): of a computed value, of a bf16 load converted to f32, and
// in a loop that reuses the tile each step.

// Y = (2 X + 1)^T over [BM, BN] tiles, X bf16, Y f32.
@autotune(BM in [16, 64], BN in [32, 128])
@launch(128)
@grid(cdiv(N, BN), cdiv(M, BM))
kernel transpose_affine(X: tensor<bf16>[M, N], Y: tensor<f32>[N, M]) {
  let m0 = ctx.block.y * BM
  let n0 = ctx.block.x * BN
  Y[n0 :+ BN, m0 :+ BM] = transpose(f32(X[m0 :+ BM, n0 :+ BN]) * 2.0 + 1.0)
}

// Y = sum over k of X[k]^T: the transpose's shared tile is written again
// each step, after every thread has read the last one.
@autotune(B in [32, 64])
@launch(256)
@grid(cdiv(N, B), cdiv(M, B))
kernel transpose_sum(X: tensor<f32>[K, M, N], Y: tensor<f32>[N, M]) {
  let m0 = ctx.block.y * B
  let n0 = ctx.block.x * B
  var acc: tile<f32>[B, B] = 0.0
  for k in range(0, K) {
    acc = acc + transpose(X[k, m0 :+ B, n0 :+ B])
  }
  Y[n0 :+ B, m0 :+ B] = acc
}
