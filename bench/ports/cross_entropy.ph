// Ported from the shape of the Liger-Kernel cross-entropy forward: one program
// a row, a loop over the vocabulary in 1-D blocks of BS with an online max and
// sum, then the loss from the label's logit. Loss per row, f32.
@autotune(BS in [1024, 16384])
@grid(R)
kernel cross_entropy(X: tensor<bf16>[R, V], Lab: tensor<i64>[R], Loss: tensor<f32>[R]) {
  let row = program_id(0)
  var m: tile<f32>[1] = -inf
  var d: tile<f32>[1] = 0.0
  for off in range(0, V, BS) {
    let cols = off + iota(BS)
    let x = where(cols < V, f32(X[row, off :+ BS]), -inf)
    let mnew = tmax(m, rowmax(x))
    d = d * exp(m - mnew) + rowsum(exp(x - mnew))
    m = mnew
  }
  let y = i32(Lab[row])
  let lse = m + log(d)
  Loss[row :+ 1] = lse - f32(X[row, y])
}
