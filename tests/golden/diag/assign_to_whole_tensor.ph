@launch(128)
kernel clear(Y: tensor<f32>[N]) {
  Y = 0.0
}
