@launch(128)
kernel fill(Y: tensor<u8>[N]) {
  var t: tile<u8>[128] = 300
  Y[0 :+ 128] = t
}
