// start + length passes 64 bits: checked, not a signed overflow.
kernel k(A: tensor<f32>[N]) {
  var t: tile<f32>[16] = 0.0
  A[0 :+ 1] = t[5 :+ 9223372036854775807]
}
