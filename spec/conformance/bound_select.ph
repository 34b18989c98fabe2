// Bounds selects, where(start + iota(..) < k, x, fill): the select tests
// each element's coordinate itself (no iota, add or bool tile), and a
// blocked thread whose columns are all below k moves x (spec 15.12). k is
// a parameter that cuts the tiles where the tensor does not.
@autotune(BR in [1, 8], BN in [64, 256])
@launch(128)
@grid(cdiv(M, BR), cdiv(N, BN))
kernel bound_cols(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], k: i32) {
  let r0 = ctx.block.x * BR
  let c0 = ctx.block.y * BN
  Y[r0 :+ BR, c0 :+ BN] = where(c0 + iota(BR, BN) < k, X[r0 :+ BR, c0 :+ BN], -1.0)
}

@autotune(BR in [1, 8], BN in [64, 256])
@launch(128)
@grid(cdiv(M, BR), cdiv(N, BN))
kernel bound_rows(X: tensor<f32>[M, N], Y: tensor<f32>[M, N], k: i32) {
  let r0 = ctx.block.x * BR
  let c0 = ctx.block.y * BN
  Y[r0 :+ BR, c0 :+ BN] = where(iota(BR, BN, axis = 0) + r0 < k, X[r0 :+ BR, c0 :+ BN], -1.0)
}

// in the fragment layout: the accumulators of columns at or past k zeroed
@launch(128)
@pipeline(2)
@dynshared
@grid(cdiv(M, 64), cdiv(N, 64))
kernel bound_mm(A: tensor<bf16>[M, K], B: tensor<bf16>[K, N], C: tensor<f32>[M, N], k: i32) {
  let m0 = ctx.block.x * 64
  let n0 = ctx.block.y * 64
  var acc: tile<f32>[64, 64] = 0.0
  for k0 in range(0, K, 32) {
    acc += dot(A[m0 :+ 64, k0 :+ 32], B[k0 :+ 32, n0 :+ 64])
  }
  C[m0 :+ 64, n0 :+ 64] = where(n0 + iota(64, 64) < k, acc, 0.0)
}
