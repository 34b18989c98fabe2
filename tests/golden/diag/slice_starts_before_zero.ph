@launch(128)
kernel shift_left(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  Y[0 :+ 128] = X[-1 :+ 128]
}
