// qdot_t and qmma_t (spec 9.7): the Q8_0 contraction with the block scales
// folded in. Each CTA walks K in steps of four blocks of 32; M, N and K are
// ragged (a step past K reads zero bytes and zero scales).

@grid(cdiv(M, 16), cdiv(N, 16))
kernel qdot_blocks(A: tensor<i8>[M, K], AS: tensor<f32>[M, KB], W: tensor<i8>[N, K], WS: tensor<f32>[N, KB],
                   C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 16
  let n0 = ctx.block.y * 16
  var acc: tile<f32>[16, 16] = 0.0
  for k in range(0, K, 128) {
    acc += qdot_t(A[m0 :+ 16, k :+ 128], AS[m0 :+ 16, k / 32 :+ 4], W[n0 :+ 16, k :+ 128], WS[n0 :+ 16, k / 32 :+ 4])
  }
  C[m0 :+ 16, n0 :+ 16] = acc
}

// qmma_t: the weight scales indexed [block, out]
@grid(cdiv(M, 16), cdiv(N, 16))
kernel qmma_blocks(A: tensor<i8>[M, K], AS: tensor<f32>[M, KB], W: tensor<i8>[N, K], WS: tensor<f32>[KB, N],
                   C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 16
  let n0 = ctx.block.y * 16
  var acc: tile<f32>[16, 16] = 0.0
  for k in range(0, K, 128) {
    acc += qmma_t(A[m0 :+ 16, k :+ 128], AS[m0 :+ 16, k / 32 :+ 4], W[n0 :+ 16, k :+ 128], WS[k / 32 :+ 4, n0 :+ 16])
  }
  C[m0 :+ 16, n0 :+ 16] = acc
}

// Phobos's qdot_t over a K known only at launch: whole rows of A and W,
// ':' over K and over the scales' blocks; phobosc walks K in steps of
// eight blocks (spec 9.7).
@grid(cdiv(M, 4), cdiv(N, 16))
kernel qdot_rows(A: tensor<i8>[M, K], AS: tensor<f32>[M, KB], W: tensor<i8>[N, K], WS: tensor<f32>[N, KB],
                 C: tensor<f32>[M, N]) {
  let m0 = ctx.block.x * 4
  let n0 = ctx.block.y * 16
  C[m0 :+ 4, n0 :+ 16] = qdot_t(A[m0 :+ 4, :], AS[m0 :+ 4, :], W[n0 :+ 16, :], WS[n0 :+ 16, :])
}
