// pow (spec 9.2): x^y elementwise, from exp2 and log as the backend has
// them, with C's rules where the base is negative or zero: an odd integer
// exponent keeps the sign, an even one drops it, pow(x, 0) is 1 and
// pow(0, y) is 0 for y > 0. A bf16 base and an integer literal exponent
// give bf16.
@grid(R)
kernel powers(X: tensor<f32>[R, N], Y: tensor<f32>[R, N], Z: tensor<f32>[R, N], P: tensor<f32>[R, N],
              Q: tensor<f32>[R, N], O: tensor<f32>[R, N], H: tensor<bf16>[R, N]) {
  let r = ctx.block.x
  let x = X[r :+ 1, 0 :+ 128]
  let y = Y[r :+ 1, 0 :+ 128]
  let z = Z[r :+ 1, 0 :+ 128]
  P[r :+ 1, 0 :+ 128] = pow(abs(x) + 0.5, y)
  Q[r :+ 1, 0 :+ 128] = pow(x, round(y * 2.0))
  O[r :+ 1, 0 :+ 128] = pow(x, z) + pow(z, abs(y) + 0.5)
  H[r :+ 1, 0 :+ 128] = pow(bf16(x), 3)
}
