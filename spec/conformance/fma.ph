// fma(a, b, c) (spec 9): a * b + c rounded once. E = fma(x, x, -(x * x)) is
// the rounding error of x * x, which a multiply and an add would make 0; a
// row value and a scalar broadcast; a bf16 result rounds once more.
@grid(R)
kernel fma_rows(X: tensor<f32>[R, N], W: tensor<f32>[R, 1], H: tensor<bf16>[R, N], s: f32,
                Y: tensor<f32>[R, N], E: tensor<f32>[R, N], Z: tensor<bf16>[R, N]) {
  let r = ctx.block.x
  let x = X[r :+ 1, 0 :+ 256]
  Y[r :+ 1, 0 :+ 256] = fma(x, W[r :+ 1, 0 :+ 1], s)
  E[r :+ 1, 0 :+ 256] = fma(x, x, -(x * x))
  let h = H[r :+ 1, 0 :+ 256]
  Z[r :+ 1, 0 :+ 256] = fma(h, h, h)
}
