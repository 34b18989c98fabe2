// inf is a constant, not a variable: no assignment, compound or not, and no store.
@grid(1)
kernel k(Y: tensor<f32>[1, 8]) {
  inf += 1
  inf = 2.0
  inf[0] = 1.0
}
