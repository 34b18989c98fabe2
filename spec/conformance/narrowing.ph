// Implicit narrowing as Phobos has it (spec 7.4): a store or an assignment
// narrows a float, rounded to nearest even as the explicit conversion does.

// f32 values stored into an f16 tensor: B = 3 A.
@autotune(BN in [64, 128])
@grid(cdiv(N, BN))
kernel narrow_store(A: tensor<f32>[N], B: tensor<f16>[N]) {
  let n0 = ctx.block.x * BN
  B[n0 :+ BN] = A[n0 :+ BN] * 3.0
}

// dot(a, b) accumulated into an f16 tile: the f32 sum rounded at each K step.
@grid(cdiv(N, 32), cdiv(M, 32))
kernel narrow_acc(A: tensor<f16>[M, K], B: tensor<f16>[K, N], C: tensor<f16>[M, N]) {
  let m0 = ctx.block.y * 32
  let n0 = ctx.block.x * 32
  var acc: tile<f16>[32, 32] = 0.0
  for k0 in range(0, K, 32) {
    acc += dot(A[m0 :+ 32, k0 :+ 32], B[k0 :+ 32, n0 :+ 32])
  }
  C[m0 :+ 32, n0 :+ 32] = acc
}
