@launch(128)
kernel matvec(A: tensor<f32>[1, K], W: tensor<i8>[K, N], C: tensor<f32>[1, N]) {
  let n = ctx.block.x * 64
  let a = A[0 :+ 1, 0 :+ 32]
  let w = W[0 :+ 32, n :+ 64]
  C[0 :+ 1, n :+ 64] = dot(a, w)
}
