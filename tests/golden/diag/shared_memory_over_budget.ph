// Two 128 x 128 f32 staging tiles need 128 KB; without @dynshared the
// static limit is 48 KB.
@grid(cdiv(M, 128))
kernel big(A: tensor<f32>[M, 128], B: tensor<f32>[128, 128], C: tensor<f32>[M, 128]) {
  var a = A[ctx.block.x * 128 :+ 128, :]
  var b = B[:, :]
  C[ctx.block.x * 128 :+ 128, :] = dot(a, b)
}
