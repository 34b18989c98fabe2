// transpose_roof.cu: what hand-written CUDA reaches on the transposes of
// bench/ (issue 19 holds the bench's transpose to 80% of the device copy), so
// that the phobos kernel is measured against a roof of the same access
// pattern and not only against an aligned copy. For each shape (rows of odd
// and of aligned pitch) it times:
//   - copy16: the same bytes read and written as aligned 16-byte vectors (the
//     device copy bench.py reports);
//   - copy_rows: an element-wise 2-D copy X[M, N] -> Y[M, N] at the shape's
//     pitch (rows not 16-byte aligned where N is odd), warps along rows;
//   - transpose TMxTN: the classic shared-memory transpose, a CTA a [TM, TN]
//     tile of X (its row padded by one word: no bank conflicts), 256 threads,
//     each thread's loads all issued before its stores, for several tiles.
// Each is checked element by element against the input, and timed as
// do_bench times (a 256 MiB memset before each of 31 reps, the median).
//   nvcc -O3 -arch=sm_90a -o transpose_roof tests/gpu/transpose_roof.cu && ./transpose_roof
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "cuda_check.h"

__global__ void copy16(const float4 *__restrict__ x, float4 *__restrict__ y, size_t n) {
  size_t step = (size_t)gridDim.x * blockDim.x;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += step) y[i] = x[i];
}

// a CTA of 256 threads copies a [8, 256] block: a warp a row, 8 elements a lane
__global__ void copy_rows(const float *__restrict__ x, float *__restrict__ y, int M, int N) {
  int r = blockIdx.y * 8 + threadIdx.x / 32, c0 = blockIdx.x * 256 + threadIdx.x % 32;
  if (r >= M) return;
  float v[8];
#pragma unroll
  for (int u = 0; u < 8; u++) {
    int c = c0 + 32 * u;
    v[u] = c < N ? x[(size_t)r * N + c] : 0.f;
  }
#pragma unroll
  for (int u = 0; u < 8; u++) {
    int c = c0 + 32 * u;
    if (c < N) y[(size_t)r * N + c] = v[u];
  }
}

// Y[N, M] = X[M, N]^T; a CTA a [TM, TN] tile of X, 256 threads
template <int TM, int TN>
__global__ void __launch_bounds__(256) transpose_tile(const float *__restrict__ x, float *__restrict__ y, int M, int N) {
  __shared__ float t[TM][TN + 1];
  int m0 = blockIdx.y * TM, n0 = blockIdx.x * TN;
  // load: LW lanes along X's rows, RPP rows a pass, RP passes of CG column groups
  constexpr int LW = TN < 32 ? TN : 32, RPP = 256 / LW, RP = TM / RPP, CG = TN / LW;
  // store: SW lanes along Y's rows (X's columns), SPP of them a pass
  constexpr int SW = TM < 32 ? TM : 32, SPP = 256 / SW, SP = TN / SPP, SG = TM / SW;
  static_assert(RP >= 1 && SP >= 1 && RP * CG == SP * SG, "tile shape");
  float v[RP * CG];
  int lc = threadIdx.x % LW, lr = threadIdx.x / LW;
#pragma unroll
  for (int u = 0; u < RP * CG; u++) {
    int row = lr + RPP * (u % RP), col = lc + LW * (u / RP);
    int m = m0 + row, n = n0 + col;
    v[u] = (m < M && n < N) ? x[(size_t)m * N + n] : 0.f;
  }
#pragma unroll
  for (int u = 0; u < RP * CG; u++) t[lr + RPP * (u % RP)][lc + LW * (u / RP)] = v[u];
  __syncthreads();
  int sc = threadIdx.x % SW, sr = threadIdx.x / SW;
#pragma unroll
  for (int u = 0; u < SP * SG; u++) {
    int row = sr + SPP * (u % SP), col = sc + SW * (u / SP);   // row: a column of X, col: a row of X
    int n = n0 + row, m = m0 + col;
    if (n < N && m < M) y[(size_t)n * M + m] = t[col][row];
  }
}

static char *big;
static const size_t BIG = 256u << 20;

template <class F>
static float time_us(F launch) {
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<float> ts;
  for (int r = 0; r < 31; r++) {
    CK(cudaMemset(big, r, BIG));
    CK(cudaEventRecord(e0));
    launch();
    CK(cudaEventRecord(e1));
    CK(cudaEventSynchronize(e1));
    float ms;
    CK(cudaEventElapsedTime(&ms, e0, e1));
    ts.push_back(ms * 1e3f);
  }
  CK(cudaGetLastError());
  std::sort(ts.begin(), ts.end());
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  return ts[ts.size() / 2];
}

static float *dx, *dy;
static std::vector<float> hx, hy;

static int check(int M, int N, bool transposed) {
  CK(cudaMemcpy(hy.data(), dy, (size_t)M * N * 4, cudaMemcpyDeviceToHost));
  for (size_t m = 0; m < (size_t)M; m++)
    for (size_t n = 0; n < (size_t)N; n++) {
      float want = hx[m * N + n], got = transposed ? hy[n * M + m] : hy[m * N + n];
      if (want != got) {
        printf("  MISMATCH at [%zu, %zu]: %g, want %g\n", m, n, got, want);
        return 1;
      }
    }
  return 0;
}

template <int TM, int TN>
static int one_tile(int M, int N, float copy_us) {
  CK(cudaMemset(dy, 0xff, (size_t)M * N * 4));
  auto l = [&] {
    transpose_tile<TM, TN><<<dim3((N + TN - 1) / TN, (M + TM - 1) / TM), 256>>>(dx, dy, M, N);
  };
  float us = time_us(l);
  int bad = check(M, N, true);
  double gbs = 2.0 * M * N * 4 / (us * 1e-6) / 1e9;
  printf("transpose %4dx%-3d  %dx%d: %8.1f us %6.0f GB/s %5.1f%% of copy16%s\n", TM, TN, M, N, us, gbs,
         100 * copy_us / us, bad ? "  WRONG" : "");
  return bad;
}

int main() {
  int shapes[][2] = {{4093, 8191}, {8192, 8192}, {4096, 8191}, {4093, 8192}};
  CK(cudaMalloc(&big, BIG));
  cudaDeviceProp p;
  CK(cudaGetDeviceProperties(&p, 0));
  printf("# %s, %d SMs\n", p.name, p.multiProcessorCount);
  int bad = 0;
  for (auto &s : shapes) {
    int M = s[0], N = s[1];
    size_t n = (size_t)M * N;
    hx.resize(n);
    hy.resize(n);
    for (size_t i = 0; i < n; i++) hx[i] = (float)(int)(i * 2654435761u % 100003u) - 50000.f;
    CK(cudaMalloc(&dx, n * 4 + 16));
    CK(cudaMalloc(&dy, n * 4 + 16));
    CK(cudaMemcpy(dx, hx.data(), n * 4, cudaMemcpyHostToDevice));
    size_t n4 = n / 4;
    float c16 = time_us([&] { copy16<<<p.multiProcessorCount * 8, 256>>>((const float4 *)dx, (float4 *)dy, n4); });
    printf("copy16    %dx%d: %8.1f us %6.0f GB/s (aligned vectors, same bytes)\n", M, N, c16,
           2.0 * n4 * 16 / (c16 * 1e-6) / 1e9);
    CK(cudaMemset(dy, 0xff, n * 4));
    float cr = time_us([&] { copy_rows<<<dim3((N + 255) / 256, (M + 7) / 8), 256>>>(dx, dy, M, N); });
    int b = check(M, N, false);
    bad += b;
    printf("copy_rows %dx%d: %8.1f us %6.0f GB/s %5.1f%% of copy16 (element-wise, the shape's pitch)%s\n", M, N, cr,
           2.0 * n * 4 / (cr * 1e-6) / 1e9, 100 * c16 / cr, b ? "  WRONG" : "");
    bad += one_tile<32, 32>(M, N, c16);
    bad += one_tile<64, 64>(M, N, c16);
    bad += one_tile<32, 64>(M, N, c16);
    bad += one_tile<64, 32>(M, N, c16);
    bad += one_tile<128, 32>(M, N, c16);
    bad += one_tile<32, 128>(M, N, c16);
    bad += one_tile<256, 8>(M, N, c16);
    bad += one_tile<256, 16>(M, N, c16);
    bad += one_tile<128, 64>(M, N, c16);
    bad += one_tile<64, 128>(M, N, c16);
    CK(cudaFree(dx));
    CK(cudaFree(dy));
  }
  printf("%d passed, %d failed\n", bad ? 0 : 1, bad ? 1 : 0);
  return bad != 0;
}
