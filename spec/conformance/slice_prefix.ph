// Phobos's A[:e] (spec 8): the elements from 0 up to e, as A[0 : e]. The
// block of 128 columns runs past rows of 100: its slack reads zero and is
// not stored.
@grid(R)
kernel prefix(X: tensor<f32>[R, N], Y: tensor<f32>[R, N]) {
  let r = ctx.block.x
  Y[r :+ 1, :128] = X[r :+ 1, :128] * 2.0 + 1.0
}
