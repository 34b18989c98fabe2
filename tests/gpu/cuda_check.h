// cuda_check.h: CK(call), the CUDA runtime check of the standalone
// measurement programs here (read_ceiling.cu, transpose_roof.cu): a failed
// call prints where and why and exits, as a measurement cannot go on.
#pragma once
#include <cstdio>
#include <cstdlib>

#define CK(x)                                                                          \
  do {                                                                                 \
    cudaError_t e_ = (x);                                                              \
    if (e_ != cudaSuccess) {                                                           \
      fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                         \
    }                                                                                  \
  } while (0)
