// @pipeline on a kernel with no loop that loads from a tensor.
@pipeline
kernel flat(X: tensor<f32>[64], Y: tensor<f32>[64]) {
  Y[0 :+ 64] = X[0 :+ 64] + 1.0
}
