// Compiles fusor's portable core with nvcc and checks that a FUSOR_HD functor
// runs on the device. Without a GPU the test reports itself skipped (exit 77),
// saying why; it never counts as passed.
#include <cstdio>

#include <cuda_runtime.h>

#include "fusor/core/config.hpp"
#include "fusor/core/dtype.hpp"

namespace {
struct axpy {
  float a;
  FUSOR_HD float operator()(float x, float y) const { return a * x + y; }
};

__global__ void apply(axpy f, const float* x, const float* y, float* out, int n) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) out[i] = f(x[i], y[i]);
}
}  // namespace

int main() {
  static_assert(fusor::dtype_of<float> == fusor::dtype::float32);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIPPED: no CUDA device on this machine (the CUDA build is checked; GPU tests need a GPU)\n");
    return 77;
  }
  constexpr int n = 1000;
  float hx[n], hy[n], hout[n];
  for (int i = 0; i < n; ++i) hx[i] = float(i), hy[i] = 1.f;
  float *x, *y, *out;
  cudaMalloc(&x, sizeof hx);
  cudaMalloc(&y, sizeof hy);
  cudaMalloc(&out, sizeof hout);
  cudaMemcpy(x, hx, sizeof hx, cudaMemcpyHostToDevice);
  cudaMemcpy(y, hy, sizeof hy, cudaMemcpyHostToDevice);
  apply<<<(n + 255) / 256, 256>>>(axpy{2.f}, x, y, out, n);
  cudaMemcpy(hout, out, sizeof hout, cudaMemcpyDeviceToHost);
  cudaFree(x);
  cudaFree(y);
  cudaFree(out);
  int bad = 0;
  for (int i = 0; i < n; ++i) bad += hout[i] != axpy{2.f}(hx[i], hy[i]);
  std::printf("%s: %d of %d elements wrong\n", bad ? "FAILED" : "passed", bad, n);
  return bad ? 1 : 0;
}
