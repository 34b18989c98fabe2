// A literal meeting an i8 operand takes its type, and 1000 is no i8.
@grid(1)
kernel bump(A: tensor<i8>[N], B: tensor<i8>[N]) {
  let q = A[0 :+ 8]
  B[0 :+ 8] = q + 1000
}
