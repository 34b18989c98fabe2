// kernels.cu: CUDA kernels that stand in for phobosc output while testing
// libphobos on the GPU. They follow the runtime's launch ABI (manifest
// format 1): a tensor is its pointer followed by its extents as int; f32
// scalars as float. kernels.yaml beside the cubin describes them.
extern "C" {

// Y = a * X + Y, one element per thread, 128 threads.
__global__ void __launch_bounds__(128) axpy__v0(const float *x, int xn, float *y, int yn, float a) {
  int i = blockIdx.x * 128 + threadIdx.x;
  if (i < yn) y[i] = a * x[i] + y[i];
}

// The same with 256 threads and 4 elements each.
__global__ void __launch_bounds__(256) axpy__v1(const float *x, int xn, float *y, int yn, float a) {
  int base = blockIdx.x * 1024 + threadIdx.x;
  for (int k = 0; k < 4; k++) {
    int i = base + k * 256;
    if (i < yn) y[i] = a * x[i] + y[i];
  }
}

// Reverses X into Y through 100 KB of dynamic shared memory: needs the
// opt-in above 48 KB. One CTA, N = 25600 floats.
__global__ void __launch_bounds__(1024) reverse__v0(const float *x, int xn, float *y, int yn) {
  extern __shared__ float s[];
  for (int i = threadIdx.x; i < xn; i += 1024) s[i] = x[i];
  __syncthreads();
  for (int i = threadIdx.x; i < xn; i += 1024) y[i] = s[xn - 1 - i];
}

// Scales rows of a [R, D] tensor; the variant is compiled for D = 4 only.
__global__ void __launch_bounds__(32) rowscale__v0(float *t, int r, int d, float a) {
  int i = blockIdx.x * 32 + threadIdx.x;
  if (i < r * 4) t[i] *= a;
}

// No @grid: the caller gives the grid.
__global__ void __launch_bounds__(64) fill__v0(int *t, int n, int v) {
  int i = blockIdx.x * 64 + threadIdx.x;
  if (i < n) t[i] = v + i;
}
}
