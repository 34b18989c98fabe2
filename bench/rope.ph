// Rotary position embedding, rotate-half form (GPT-NeoX / Llama):
//   x1 = x[..., :D/2], x2 = x[..., D/2:]
//   out = [x1 * cos - x2 * sin, x2 * cos + x1 * sin]
// X and O are [T, H, D] (tokens, heads, head dim), bf16; Cos and Sin are the
// tables for the token's position, [T, D/2], f32. One CTA takes one token
// and BH heads; the table row broadcasts over the heads.
// D is pinned (a constant), since a half is a static slice.
@autotune(D in [128], BH in [8, 32])
@launch(128)
@grid(T, cdiv(H, BH))
kernel rope(X: tensor<bf16>[T, H, D], Cos: tensor<f32>[T, DH], Sin: tensor<f32>[T, DH],
            O: tensor<bf16>[T, H, D]) {
  let t = ctx.block.x
  let h0 = ctx.block.y * BH
  let x1 = X[t, h0 :+ BH, 0 :+ D / 2]          // [BH, D/2]
  let x2 = X[t, h0 :+ BH, D / 2 :+ D / 2]
  let c = Cos[t :+ 1, 0 :+ D / 2]              // [1, D/2]
  let s = Sin[t :+ 1, 0 :+ D / 2]
  O[t, h0 :+ BH, 0 :+ D / 2] = bf16(x1 * c - x2 * s)
  O[t, h0 :+ BH, D / 2 :+ D / 2] = bf16(x2 * c + x1 * s)
}
