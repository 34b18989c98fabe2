// The same kernel without @padstage: the staging tile stays [8, 128].

@grid(1)
kernel stage(K: tensor<f16>[64, 128], O: tensor<f16>[8, 128]) {
  var k = K[0 :+ 8, 0 :+ 128]
  O[0 :+ 8, 0 :+ 128] = k
}
