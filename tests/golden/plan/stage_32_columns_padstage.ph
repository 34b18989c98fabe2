// Rows of 32 f16 are 64 bytes, not a multiple of 128: @padstage leaves the
// staging tile [8, 32] as declared.
@padstage
@grid(1)
kernel stage(K: tensor<f16>[64, 128], O: tensor<f16>[8, 32]) {
  var k = K[0 :+ 8, 0 :+ 32]
  O[0 :+ 8, 0 :+ 32] = k
}
