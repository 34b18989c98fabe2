// Backend hazards: values the PTX backend could get wrong by taking a fast
// path where it does not apply (found in review, 2026-11-30).

// A staged var tied to a tensor-core dot's result: C = A @ B + Z. The sum
// must not read Z's tile as if it were in the fragment layout.
@grid(1)
@launch(32)
kernel frag_plus_staged(A: tensor<f16>[16, 16], B: tensor<f16>[16, 8], Z: tensor<f32>[16, 8], C: tensor<f32>[16, 8]) {
  var z: tile<f32>[16, 8] = Z[0 :+ 16, 0 :+ 8]
  C[0 :+ 16, 0 :+ 8] = dot(A[0 :+ 16, :], B[:, 0 :+ 8]) + z
}

// A staged row value tied to a row reduction of a dot's result:
// C = max(rowmax(A @ B), M0).
@grid(1)
@launch(32)
kernel rowmax_staged(A: tensor<bf16>[16, 16], B: tensor<bf16>[16, 16], M0: tensor<f32>[16, 1], C: tensor<f32>[16, 1]) {
  var m0: tile<f32>[16, 1] = M0[0 :+ 16, :]
  C[0 :+ 16, :] = tmax(rowmax(dot(A[0 :+ 16, :], B[:, 0 :+ 16])), m0)
}

// Point writes into a staged var right after its load (cp.async on the GPU,
// whose 16-byte chunks belong to other threads than the elements written):
// Y = 3 X with the diagonal 0.
@grid(1)
kernel point_writes_staged(X: tensor<f32>[4, 4], Y: tensor<f32>[4, 4]) {
  var t: tile<f32>[4, 4] = X[0 :+ 4, 0 :+ 4]
  t[0, 0] = 0.0
  t[1, 1] = 0.0
  t[2, 2] = 0.0
  t[3, 3] = 0.0
  Y[0 :+ 4, 0 :+ 4] = t * 3.0
}

// A tile staged, then its tensor overwritten: B = A as it was.
@grid(cdiv(M, 16))
kernel stage_then_store(A: tensor<f16>[M, 32], C: tensor<f16>[M, 32], B: tensor<f16>[M, 32]) {
  let r = ctx.block.x * 16
  var a: tile<f16>[16, 32] = A[r :+ 16, :]
  A[r :+ 16, :] = C[r :+ 16, :]
  B[r :+ 16, :] = a
}

// A tensor stored, then a tile of it staged: B = C.
@grid(cdiv(M, 16))
kernel store_then_stage(A: tensor<f16>[M, 32], C: tensor<f16>[M, 32], B: tensor<f16>[M, 32]) {
  let r = ctx.block.x * 16
  A[r :+ 16, :] = C[r :+ 16, :]
  var a: tile<f16>[16, 32] = A[r :+ 16, :]
  B[r :+ 16, :] = a
}
