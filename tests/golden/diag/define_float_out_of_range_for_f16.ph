// phobosc: -D F=1e5
// A float constant from -D must fit the f16 it initializes.
kernel k(A: tensor<f16>[N]) {
  var d: f16 = F
  A[0] = d
}
