// bench/bench_gpu.cu — the device workloads (GW0–GW5 of bench/README.md, and a
// reduction workload), each next to its references in the same binary, timed
// with CUDA events (GPU time) and, for small calls, the host's clock (host time
// per asynchronous call). Measured, never asserted. Without a CUDA device the
// binary says so and exits 77.
//
//   GW0  the ceilings: a copy kernel, a triad kernel, cudaMemcpy device to device
//   GW1  fused contiguous expressions (triad, W2 a*b + c*d - e) through a
//        function, against cub::DeviceTransform on raw pointers with the same
//        functor and against GW0's triad kernel
//   GW1b a broadcast group (a matrix plus a row) against the contiguous path
//   GW2  exp, log, tanh, sigmoid and a mixed expression, against DeviceTransform
//   GW3  small N (2^16, 2^20): GPU time, and host time per asynchronous call
//   GW4  a function of three kernels at 2^16: host time per call with CUDA
//        graphs and without
//   GW5  10 000 steady-state calls of a function with a reduction and a dot:
//        device allocations counted (fusor's pool, cuBLAS's workspace included)
//   GR   sum(x), sum((a - b)^2), sum(X, 1), sum(X, 0) against cub::DeviceReduce::Sum
//   GIO  set_value / get_value of 256 MiB against a pinned cudaMemcpy
//
// Counters: TBps (bytes moved per GPU second, STREAM-counted), host_us (host
// time per call where it matters), allocations.
#include <cuda_runtime.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_transform.cuh>

#include <fusor/cuda.hpp>
#include <fusor/fusor.hpp>
#include <fusor/gpu/cuda/instantiate.cuh>

namespace {

using benchmark::Counter;
using benchmark::State;

void cuda_check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "%s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

/// A function with its CUDA kernels registered (as a program's .cu would).
template <class... A>
auto make_function(A&&... args) {
  fusor::gpu::cuda::instantiate<decltype(fusor::function(std::forward<A>(args)...))>();
  return fusor::function(std::forward<A>(args)...);
}

/// GPU time of `body`, per iteration, with CUDA events on `stream`.
template <class Body>
void gpu_timed(State& st, cudaStream_t stream, Body body) {
  cudaEvent_t a, b;
  cuda_check(cudaEventCreate(&a), "cudaEventCreate");
  cuda_check(cudaEventCreate(&b), "cudaEventCreate");
  body();  // warm-up: plans built, kernels loaded
  cuda_check(cudaStreamSynchronize(stream), "warm-up");
  for (auto _ : st) {
    cuda_check(cudaEventRecord(a, stream), "cudaEventRecord");
    body();
    cuda_check(cudaEventRecord(b, stream), "cudaEventRecord");
    cuda_check(cudaEventSynchronize(b), "cudaEventSynchronize");
    float ms = 0;
    cuda_check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime");
    st.SetIterationTime(ms / 1e3);
  }
  cudaEventDestroy(a);
  cudaEventDestroy(b);
}

void set_tbps(State& st, double bytes) {
  st.counters["TBps"] = Counter(bytes / 1e12, Counter::kIsIterationInvariantRate);
}

cudaStream_t fusor_stream() { return static_cast<cudaStream_t>(fusor::current_device_runtime()->stream(0)); }

// Element i of the k-th array a benchmark uses: values in [0.5, 1.5), the same
// for fusor's variables (filled on the host) and the references' arrays
// (filled on the device).
__host__ __device__ double value_at(std::size_t i, unsigned k) {
  return 0.5 + static_cast<double>((i * 7919u + k * 104729u) % 1000u) * 1e-3;
}

xt::xarray<double> host_values(std::size_t n, unsigned k) {
  xt::xarray<double> v = xt::xarray<double>::from_shape({n});
  for (std::size_t i = 0; i < n; ++i) v(i) = value_at(i, k);
  return v;
}

auto device_var(std::size_t n, unsigned k, const char* name) {
  return fusor::shared(host_values(n, k), {.name = name, .space = fusor::cuda(0)});
}

// ---------------------------------------------------------------- references

__global__ void copy_kernel(const double* __restrict__ a, double* __restrict__ c, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(blockDim.x) * gridDim.x)
    c[i] = a[i];
}
__global__ void triad_kernel(const double* __restrict__ b, const double* __restrict__ c, double* __restrict__ a,
                             double q, std::size_t n) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(blockDim.x) * gridDim.x)
    a[i] = b[i] + q * c[i];
}
struct triad_op {
  double q;
  __device__ double operator()(double b, double c) const { return b + q * c; }
};
struct w2_op {
  __device__ double operator()(double a, double b, double c, double d, double e) const { return a * b + c * d - e; }
};
struct unary_op {
  int which;
  __device__ double operator()(double x) const {
    switch (which) {
      case 0: return exp(x);
      case 1: return log(x);
      case 2: return tanh(x);
      case 3: return 1.0 / (1.0 + exp(-x));
      default: return exp(x) * tanh(x) + log(x) * (1.0 / (1.0 + exp(-x)));  // fusor's sigmoid, as written
    }
  }
};

unsigned grid(std::size_t n) { return static_cast<unsigned>(std::min<std::size_t>((n + 255) / 256, 65535u * 8)); }

// host_values(n, k), written on the device (a 2 GiB buffer filled on the host
// and copied would take seconds per benchmark).
__global__ void fill_values(double* x, std::size_t n, unsigned k) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(blockDim.x) * gridDim.x)
    x[i] = value_at(i, k);
}

// The references' arrays hold the values fusor's variables hold (device_var:
// buffer j as variable k = j + 1), not zeros: a transcendental function takes a
// short path at 0 (log(0) is -inf at once, tanh(0) is 0), which made the
// references of GW2 faster than the same functions on fusor's values.
struct buffers {
  std::vector<double*> p;
  buffers(int k, std::size_t n) : p(static_cast<std::size_t>(k)) {
    for (std::size_t j = 0; j < p.size(); ++j) {
      cuda_check(cudaMalloc(&p[j], n * sizeof(double)), "cudaMalloc");
      fill_values<<<grid(n), 256>>>(p[j], n, static_cast<unsigned>(j + 1));
    }
    cuda_check(cudaDeviceSynchronize(), "fill_values");
  }
  ~buffers() {
    for (auto* x : p) cudaFree(x);
  }
};

// ---------------------------------------------------------------- GW0

void GW0_copy_kernel(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  buffers b(2, n);
  gpu_timed(st, nullptr, [&] { copy_kernel<<<grid(n), 256>>>(b.p[0], b.p[1], n); });
  set_tbps(st, 2.0 * n * sizeof(double));
}
void GW0_triad_kernel(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  buffers b(3, n);
  gpu_timed(st, nullptr, [&] { triad_kernel<<<grid(n), 256>>>(b.p[0], b.p[1], b.p[2], 3.0, n); });
  set_tbps(st, 3.0 * n * sizeof(double));
}
void GW0_memcpy_d2d(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  buffers b(2, n);
  gpu_timed(st, nullptr, [&] { cudaMemcpyAsync(b.p[1], b.p[0], n * sizeof(double), cudaMemcpyDeviceToDevice); });
  set_tbps(st, 2.0 * n * sizeof(double));
}

// ---------------------------------------------------------------- GW1

void GW1_triad_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = device_var(n, 1, "a"), b = device_var(n, 2, "b"), c = device_var(n, 3, "c");
  auto f = make_function(fusor::inputs(), fusor::updates(fusor::update(a, b + 3.0 * c)));
  gpu_timed(st, fusor_stream(), [&] { f(); });
  set_tbps(st, 3.0 * n * sizeof(double));
}
void GW1_triad_devicetransform(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  buffers b(3, n);
  gpu_timed(st, nullptr, [&] {
    cub::DeviceTransform::Transform(::cuda::std::make_tuple(b.p[1], b.p[2]), b.p[0], static_cast<std::int64_t>(n),
                                    triad_op{3.0});
  });
  set_tbps(st, 3.0 * n * sizeof(double));
}
void GW1_w2_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = device_var(n, 1, "a"), b = device_var(n, 2, "b"), c = device_var(n, 3, "c"), d = device_var(n, 4, "d"),
       e = device_var(n, 5, "e"), o = device_var(n, 6, "o");
  auto f = make_function(fusor::inputs(), fusor::updates(fusor::update(o, a * b + c * d - e)));
  gpu_timed(st, fusor_stream(), [&] { f(); });
  set_tbps(st, 6.0 * n * sizeof(double));
}
void GW1_w2_devicetransform(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  buffers b(6, n);
  gpu_timed(st, nullptr, [&] {
    cub::DeviceTransform::Transform(::cuda::std::make_tuple(b.p[0], b.p[1], b.p[2], b.p[3], b.p[4]), b.p[5],
                                    static_cast<std::int64_t>(n), w2_op{});
  });
  set_tbps(st, 6.0 * n * sizeof(double));
}
void GW1b_broadcast_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const std::size_t cols = 1024, rows = n / cols;
  auto A = fusor::shared(xt::xarray<double>(xt::reshape_view(host_values(rows * cols, 1), {rows, cols})),
                         {.name = "A", .space = fusor::cuda(0)});
  auto r = fusor::shared(xt::xarray<double>(xt::reshape_view(host_values(cols, 2), {std::size_t{1}, cols})),
                         {.name = "r", .space = fusor::cuda(0)});
  auto O = fusor::shared(xt::xarray<double>(xt::zeros<double>({rows, cols})), {.name = "O", .space = fusor::cuda(0)});
  auto f = make_function(fusor::inputs(), fusor::updates(fusor::update(O, A + 3.0 * r)));
  gpu_timed(st, fusor_stream(), [&] { f(); });
  set_tbps(st, 2.0 * n * sizeof(double));
}

// ---------------------------------------------------------------- GW2

template <int Which>
void GW2_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto x = device_var(n, 1, "x"), o = device_var(n, 2, "o");
  auto run = [&](auto expr) {
    auto f = make_function(fusor::inputs(), fusor::updates(fusor::update(o, expr)));
    gpu_timed(st, fusor_stream(), [&] { f(); });
  };
  if constexpr (Which == 0) run(fusor::exp(x));
  else if constexpr (Which == 1) run(fusor::log(x));
  else if constexpr (Which == 2) run(fusor::tanh(x));
  else if constexpr (Which == 3) run(fusor::sigmoid(x));
  else run(fusor::exp(x) * fusor::tanh(x) + fusor::log(x) * fusor::sigmoid(x));
  set_tbps(st, 2.0 * n * sizeof(double));
}
template <int Which>
void GW2_devicetransform(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  buffers b(2, n);
  gpu_timed(st, nullptr, [&] {
    cub::DeviceTransform::Transform(b.p[0], b.p[1], static_cast<std::int64_t>(n), unary_op{Which});
  });
  set_tbps(st, 2.0 * n * sizeof(double));
}

// ---------------------------------------------------------------- GW3

void GW3_host_time_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = device_var(n, 1, "a"), b = device_var(n, 2, "b"), c = device_var(n, 3, "c");
  auto f = make_function(fusor::inputs(), fusor::updates(fusor::update(a, b + 3.0 * c)));
  f();
  cudaStreamSynchronize(fusor_stream());
  double host = 0;
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) f();  // asynchronous: nothing to return
    host += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cudaStreamSynchronize(fusor_stream());
  }
  st.counters["host_us"] = host / (100.0 * static_cast<double>(st.iterations())) * 1e6;
}

// ---------------------------------------------------------------- GW4

void GW4_three_kernels(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const bool graphs = st.range(1) != 0;
  auto a = device_var(n, 1, "a"), b = device_var(n, 2, "b"), c = device_var(n, 3, "c");
  // Three fused groups: two updates (one through a transposed read, so not
  // in place) and an output of another shape.
  auto f = make_function(fusor::inputs(), fusor::outputs(fusor::Out(fusor::sum(a), fusor::borrow, fusor::internal_type)),
                         fusor::updates(fusor::update(b, b * 0.5 + c), fusor::update(c, fusor::exp(a) - c)));
  f.enable_graphs(graphs);
  for (int i = 0; i < 4; ++i) (void)f();
  cudaStreamSynchronize(fusor_stream());
  double host = 0;
  for (auto _ : st) {
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 100; ++i) (void)f();
    host += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    cudaStreamSynchronize(fusor_stream());
  }
  st.counters["host_us"] = host / (100.0 * static_cast<double>(st.iterations())) * 1e6;
  st.counters["replays"] = static_cast<double>(f.graph_replays());
}

// ---------------------------------------------------------------- GW5

void GW5_steady_allocations(State& st) {
  fusor::matrix<double> x{"x"};
  auto W = fusor::shared(xt::xarray<double>(xt::reshape_view(host_values(256 * 64, 1), {256, 64})),
                         {.name = "W", .space = fusor::cuda(0)});
  auto h = fusor::sigmoid(fusor::dot(x, W));
  auto f = make_function(fusor::inputs(x), fusor::outputs(fusor::Out(fusor::sum(h), fusor::borrow)),
                         fusor::updates(fusor::update(W, W - 0.01 * fusor::dot(fusor::transpose(x), h))));
  const auto xv = xt::xarray<double>(xt::reshape_view(host_values(128 * 256, 2), {128, 256}));
  (void)f(xv).value();
  const auto before = fusor::device_memory(0).allocations;
  for (auto _ : st)
    for (int i = 0; i < 10000; ++i) benchmark::DoNotOptimize(f(xv).value());
  st.counters["allocations"] = static_cast<double>(fusor::device_memory(0).allocations - before);
}

// ---------------------------------------------------------------- GR

void GR_sum_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto x = device_var(n, 1, "x");
  auto f = make_function(fusor::inputs(), fusor::outputs(fusor::Out(fusor::sum(x), fusor::borrow, fusor::internal_type)));
  gpu_timed(st, fusor_stream(), [&] { (void)f(); });
  set_tbps(st, 1.0 * n * sizeof(double));
}
void GR_sum_cub(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  buffers b(2, n);
  std::size_t bytes = 0;
  cub::DeviceReduce::Sum(nullptr, bytes, b.p[0], b.p[1], static_cast<std::int64_t>(n));
  void* temp = nullptr;
  cuda_check(cudaMalloc(&temp, bytes), "cudaMalloc");
  gpu_timed(st, nullptr, [&] { cub::DeviceReduce::Sum(temp, bytes, b.p[0], b.p[1], static_cast<std::int64_t>(n)); });
  cudaFree(temp);
  set_tbps(st, 1.0 * n * sizeof(double));
}
void GR_sum_squared_difference_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  auto a = device_var(n, 1, "a"), b = device_var(n, 2, "b");
  auto f = make_function(fusor::inputs(),
                         fusor::outputs(fusor::Out(fusor::sum((a - b) * (a - b)), fusor::borrow, fusor::internal_type)));
  gpu_timed(st, fusor_stream(), [&] { (void)f(); });
  set_tbps(st, 2.0 * n * sizeof(double));
}
template <int Axis>
void GR_sum_axis_fusor(State& st) {
  const auto n = static_cast<std::size_t>(st.range(0));
  const std::size_t cols = 4096, rows = n / cols;
  auto X = fusor::shared(xt::xarray<double>(xt::reshape_view(host_values(rows * cols, 1), {rows, cols})),
                         {.name = "X", .space = fusor::cuda(0)});
  auto f = make_function(fusor::inputs(),
                         fusor::outputs(fusor::Out(fusor::sum(X, Axis), fusor::borrow, fusor::internal_type)));
  gpu_timed(st, fusor_stream(), [&] { (void)f(); });
  set_tbps(st, 1.0 * n * sizeof(double));
}

// ---------------------------------------------------------------- GIO

void GIO_set_value(State& st) {
  const std::size_t n = (std::size_t{256} << 20) / sizeof(double);
  const auto v = host_values(n, 1);
  auto s = fusor::shared(v, {.name = "s", .space = fusor::cuda(0)});
  for (auto _ : st) s.set_value(v);
  st.counters["GBps"] = Counter(n * sizeof(double) / 1e9, Counter::kIsIterationInvariantRate);
}
void GIO_get_value(State& st) {
  const std::size_t n = (std::size_t{256} << 20) / sizeof(double);
  auto s = fusor::shared(host_values(n, 1), {.name = "s", .space = fusor::cuda(0)});
  for (auto _ : st) benchmark::DoNotOptimize(s.get_value());
  st.counters["GBps"] = Counter(n * sizeof(double) / 1e9, Counter::kIsIterationInvariantRate);
}
void GIO_pinned_memcpy(State& st) {
  const std::size_t bytes = std::size_t{256} << 20;
  void *h = nullptr, *d = nullptr;
  cuda_check(cudaMallocHost(&h, bytes), "cudaMallocHost");
  cuda_check(cudaMalloc(&d, bytes), "cudaMalloc");
  for (auto _ : st) {
    cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost);
  }
  cudaFreeHost(h);
  cudaFree(d);
  st.counters["GBps"] = Counter(2.0 * bytes / 1e9, Counter::kIsIterationInvariantRate);
}

constexpr std::int64_t big = std::int64_t{1} << 28;

BENCHMARK(GW0_copy_kernel)->Arg(big)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW0_triad_kernel)->Arg(big)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW0_memcpy_d2d)->Arg(big)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW1_triad_fusor)->Arg(big)->Arg(1 << 20)->Arg(1 << 16)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(GW1_triad_devicetransform)->Arg(big)->Arg(1 << 20)->Arg(1 << 16)->UseManualTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(GW1_w2_fusor)->Arg(big)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW1_w2_devicetransform)->Arg(big)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW1b_broadcast_fusor)->Arg(big)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW2_fusor<0>)->Name("GW2_exp_fusor")->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW2_devicetransform<0>)->Name("GW2_exp_devicetransform")->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW2_fusor<1>)->Name("GW2_log_fusor")->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW2_devicetransform<1>)->Name("GW2_log_devicetransform")->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW2_fusor<2>)->Name("GW2_tanh_fusor")->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW2_devicetransform<2>)->Name("GW2_tanh_devicetransform")->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW2_fusor<3>)->Name("GW2_sigmoid_fusor")->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW2_devicetransform<3>)->Name("GW2_sigmoid_devicetransform")->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW2_fusor<4>)->Name("GW2_mixed_fusor")->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW2_devicetransform<4>)->Name("GW2_mixed_devicetransform")->Arg(1 << 26)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GW3_host_time_fusor)->Arg(1 << 16)->Arg(1 << 20)->Unit(benchmark::kMicrosecond);
BENCHMARK(GW4_three_kernels)->Args({1 << 16, 0})->Args({1 << 16, 1})->Unit(benchmark::kMicrosecond);
BENCHMARK(GW5_steady_allocations)->Iterations(1)->Unit(benchmark::kMillisecond);
BENCHMARK(GR_sum_fusor)->Arg(big)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GR_sum_cub)->Arg(big)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GR_sum_squared_difference_fusor)->Arg(big)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GR_sum_axis_fusor<1>)->Name("GR_sum_axis1_fusor")->Arg(big)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GR_sum_axis_fusor<0>)->Name("GR_sum_axis0_fusor")->Arg(big)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(GIO_set_value)->Unit(benchmark::kMillisecond);
BENCHMARK(GIO_get_value)->Unit(benchmark::kMillisecond);
BENCHMARK(GIO_pinned_memcpy)->Unit(benchmark::kMillisecond);

}  // namespace

int main(int argc, char** argv) {
  fusor::device_runtime* rt = fusor::current_device_runtime();
  if (!rt || rt->device_count() == 0) {
    std::printf("SKIPPED: no CUDA device: %s\n", rt ? rt->unavailable_reason().c_str() : "no CUDA runtime");
    return 77;
  }
  cudaDeviceProp prop{};
  cudaGetDeviceProperties(&prop, 0);
  benchmark::AddCustomContext("device", prop.name);
  benchmark::AddCustomContext("fusor_runtime", rt->name());
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
