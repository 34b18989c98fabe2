// Regression kernels from a review of the planner, lowering and interpreter:
// each one failed (a wrong answer, an out-of-bounds read or a crash) before
// its fix. Every kernel computes B = 3 A, one way or another.

// A let-bound load copied into a var that is then rewritten keeps its value.
@grid(1)
kernel alias1(A: tensor<f32>[8, 8], C: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  let a = A[:, :]
  var t = a
  t = C[:, :]
  B[:, :] = a * 3.0 + t * 0.0
}

// One let-bound load copied into two vars: each var has its own buffer.
@grid(1)
kernel alias2(A: tensor<f32>[8, 8], C: tensor<f32>[8, 8], D: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  let a = A[:, :]
  var t = a
  var s = a
  var u = C[:, :]
  D[:, :] = u + s
  B[:, :] = t * 3.0
}

// A var read before it is assigned a let-bound load keeps its old value there.
@grid(1)
kernel early(A: tensor<f32>[8, 8], D: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  var t: tile<f32>[8, 8] = 0.0
  let a = A[:, :]
  B[:, :] = t + a * 3.0
  t = a
  D[:, :] = t
}

// Assigning a load to a var that already has a buffer is a write of that buffer (its bytes are not shared with a live buffer).
@grid(1)
kernel rewrite(A: tensor<f32>[8, 8], C: tensor<f32>[8, 8], D: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  var t = C[:, :]
  D[:, :] = t
  var u = A[:, :]
  t = C[:, :]
  B[:, :] = u * 3.0
}

// Reading a staged var into registers reads its buffer: the bytes stay reserved until then.
@grid(1)
kernel readcopy2(A: tensor<f32>[8, 8], C: tensor<f32>[8, 8], D: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  var t = A[:, :]
  D[:, :] = transpose(C[:, :])
  let u = t
  t = C[:, :]
  B[:, :] = u * 3.0
}

// A var without initializer does not own its bytes before its first write.
@grid(1)
kernel varinit(A: tensor<f32>[8, 8], C: tensor<f32>[8, 8], D: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  var u = A[:, :]
  var t: tile<f32>[8, 8]
  B[:, :] = u * 3.0
  t = C[:, :]
  D[:, :] = t
}

// Negating a let-bound constant does not drop the constant the let still names.
@grid(1)
kernel negfold(A: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  let c = 2.0
  let d = -c
  B[:, :] = A[:, :] * (c - d - 1.0)
}

// i8(300.0) saturates to 127 (float to integer truncates and saturates).
@grid(1)
kernel cv1(A: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  B[:, :] = A[:, :] * 3.0 + (f32(i8(300.0)) - 127.0)
}

// u8(-1.0) saturates to 0.
@grid(1)
kernel cv2(A: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  B[:, :] = A[:, :] * 3.0 + (f32(u8(-1.0)))
}

// i8(200) wraps to -56 (integer to narrower integer wraps).
@grid(1)
kernel cv3(A: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  B[:, :] = A[:, :] * 3.0 + (f32(i8(200)) + 56.0)
}

// u8(300) wraps to 44.
@grid(1)
kernel cv4(A: tensor<f32>[8, 8], B: tensor<f32>[8, 8]) {
  B[:, :] = A[:, :] * 3.0 + (f32(u8(300)) - 44.0)
}
