// flat(t) (spec 9.3): a tile's elements as one row. Quantizing an
// activation as Phobos's spec describes it: blocks of 32 are rows, so
// rowmax gives each block's scale, and the quantized blocks are then one
// row again. Rows that are not a power of two long (24) and a rank-3 tile
// show the row-major order through the padding.
@launch(128)
@grid(1)
kernel quant_flat(X: tensor<f32>[1, 128], W: tensor<f32>[3, 24], Q: tensor<i8>[1, 128], S: tensor<f32>[4, 1], T: tensor<f32>[1, 72],
                  U: tensor<f32>[1, 144]) {
  var x: tile<f32>[4, 32] = 0.0
  for b in range(0, 4) {
    x[b :+ 1, :] = X[0 :+ 1, b * 32 :+ 32]
  }
  let s = rowmax(abs(x)) / 127.0
  let q = i8(round(x / where(s > 0.0, s, 1.0)))
  Q[0 :+ 1, :] = flat(q)
  S[:, :] = s
  let y = W[0 :+ 3, 0 :+ 24] * 2.0
  T[0 :+ 1, :] = flat(y)
  let z = f32(iota(2, 3, 24)) + f32(iota(2, 3, 24, axis = 1)) * 100.0 + f32(iota(2, 3, 24, axis = 0)) * 1000.0
  U[0 :+ 1, :] = flat(z)
}
