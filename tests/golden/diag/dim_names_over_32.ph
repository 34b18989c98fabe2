// libphobos binds at most 32 dim names at a launch.
kernel k(T0: tensor<f32>[D0, D1, D2, D3, D4],
         T1: tensor<f32>[D5, D6, D7, D8, D9],
         T2: tensor<f32>[D10, D11, D12, D13, D14],
         T3: tensor<f32>[D15, D16, D17, D18, D19],
         T4: tensor<f32>[D20, D21, D22, D23, D24],
         T5: tensor<f32>[D25, D26, D27, D28, D29],
         T6: tensor<f32>[D30, D31, D32]) {
  T0[0, 0, 0, 0, 0] = 1.0
}
