@launch(128)
kernel stage_all(X: tensor<f32>[N], Y: tensor<f32>[N]) {
  var t: tile<f32>[4194304] = X[0 :+ 4194304]
  Y[0 :+ 4194304] = t
}
