// @pipeline(3): the loop's [8, 64] f32 load takes a ring of three stages
// (bulk copies); the staged [1, 32] load stays plain and says why.
@pipeline(3)
@launch(64)
@grid(cdiv(N, 64))
kernel pipe(X: tensor<f32>[M, N], A: tensor<f32>[1, 32], Y: tensor<f32>[M, N]) {
  let c0 = ctx.block.x * 64
  for r in range(0, M, 8) {
    let a = A[0 :+ 1, 0 :+ 32]
    Y[r :+ 8, c0 :+ 64] = X[r :+ 8, c0 :+ 64] * 2.0 + dot(a, X[r :+ 32, c0 :+ 64])
  }
}
