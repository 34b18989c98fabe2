@launch(128)
kernel inner(X: tensor<f32>[N], Y: tensor<f32>[N], O: tensor<f32>[1]) {
  let x = X[0 :+ 128]
  let y = Y[0 :+ 128]
  O[0 :+ 1] = dot(x, y)
}
