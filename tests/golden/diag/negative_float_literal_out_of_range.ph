// The sign belongs to the value in the message.
kernel k(A: tensor<f16>[N]) {
  var d: f16 = -1e6
  A[0] = d
}
