// The @padstage page's minimal kernel: K[0 :+ 8, 0 :+ 128] in f16 has rows of
// 256 bytes, a multiple of 128, so its staging tile is allocated [8, 136]
// (272-byte stride).
@padstage
@grid(1)
kernel stage(K: tensor<f16>[64, 128], O: tensor<f16>[8, 128]) {
  var k = K[0 :+ 8, 0 :+ 128]
  O[0 :+ 8, 0 :+ 128] = k
}
