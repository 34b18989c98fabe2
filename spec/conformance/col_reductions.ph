// Column and whole-tile reductions (spec 9.3): colsum, colmax and colmin
// reduce a [R, C] tile over its rows to [1, C]; sum reduces it whole to
// [1, 1]; round rounds to the nearest integer, ties to even. A tile of 48
// columns (64 physical, the slack masked) and 32 rows.
@grid(1)
kernel cols(X: tensor<f32>[32, 48], S: tensor<f32>[1, 48], MX: tensor<f32>[1, 48], MN: tensor<f32>[1, 48],
            T: tensor<f32>[1, 1], RD: tensor<f32>[32, 48], IS: tensor<i32>[1, 48]) {
  let x = X[0 :+ 32, 0 :+ 48]
  S[0 :+ 1, 0 :+ 48] = colsum(x)
  MX[0 :+ 1, 0 :+ 48] = colmax(x)
  MN[0 :+ 1, 0 :+ 48] = colmin(x)
  T[0 :+ 1, 0 :+ 1] = sum(x)
  RD[0 :+ 32, 0 :+ 48] = round(x * 4.0)
  IS[0 :+ 1, 0 :+ 48] = colsum(i8(round(x * 4.0)))
}
