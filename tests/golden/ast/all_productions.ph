// One of every statement kind, operator, literal and subscript form.
@autotune(BN in [32, 64], BK in [16])
@launch(128, 2, 128)
@pipeline(3)
@padstage
@dynshared
@aligned(N = BN)
@grid(cdiv(N, BN), 1)
kernel all_productions(X: tensor<f32>[N, 16], I: tensor<i32>[N],
                       Y: tensor<f32>[N, 16], alpha: f32, flag: bool) {
  let b = ctx.block.x; let g = ctx.grid.y
  let row0: i32 = program_id(0) * BN +
                  b - b

  // tiles
  var acc: tile<f32>[BN, 16]
  var count: i32 = 0x10
  var done = false
  let x = X[row0 :+ BN, :]
  let xs = X[row0 : row0 + BN, 0 :+ 16]
  let first = X[row0, 3]
  acc = x;
  acc += xs * alpha
  acc -= 1.0
  acc *= 2.5e0
  acc /= (first + 1.)
  for k in range(0, BK) { count += 1 }
  for k in range(0, N, BN) {
    count = count + k % 7 - k / 3
  }
  while !done && count < 100 || false {
    count = (count << 2) >> 1
    done = count >= 50 && count > g && count <= 1000 == true
  }
  let bits = I[row0 :+ BN]
  let mixed = (bits & 0xff) | (bits ^ 3) | ~bits
  if flag {
    acc = -acc
  } else if count == 3 || count != 4 {
    acc = exp(acc)
  } else {
    acc = where(iota(BN, 16, axis = 0) <= iota(BN, 16), acc, -inf)
  }
  Y[row0 :+ BN, :] = acc - f32(mixed[0]) + rowmax(acc)
}

// no parameters, an empty body, and the '{' on its own line
kernel nothing()
{
}
