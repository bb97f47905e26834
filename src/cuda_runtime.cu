// src/cuda_runtime.cu — fusor's CUDA runtime: the device_runtime that serves
// `fusor::cuda(i)` spaces in programs that include <fusor/cuda.hpp> and link
// libfusor_cuda.
//
// Memory: one fusor-owned stream-ordered pool per device (cudaMemPoolCreate,
// release threshold raised so that freed memory stays in the pool instead of
// going back to the driver at every synchronisation), with plain cudaMalloc
// where a device has no pool support. A failed allocation synchronises, trims
// the pool and tries once more; then it is a device_memory_error saying how
// much was asked for and how much the pool and the device hold. fusor's plans
// allocate when they are built, so a steady-state call allocates nothing.
//
// Copies between pageable host memory and the device go through a pinned
// staging block reused by every copy (two halves, so that the host-side copy
// of one chunk overlaps the DMA of the next); small copies go directly.
//
// Work is ordered on one non-blocking stream per device. Errors of every CUDA
// call become fusor errors; a sticky device fault is a device_fault_error.
//
// dot: cuBLAS for float and double (one handle per device, on fusor's stream,
// with a workspace fusor allocates once from its pool, so that cuBLAS does not
// allocate during calls), and a plain kernel for integers, which wrap as on
// the host.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <array>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <type_traits>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fusor/memory/device.hpp"

namespace {

using fusor::copy_direction;
using fusor::dtype;
using fusor::device_memory_stats;

std::string call_text(const char* what, cudaError_t e) {
  return std::string(what) + " failed: " + cudaGetErrorName(e) + " (" + cudaGetErrorString(e) + ")";
}

/// Whether an error leaves the context unusable (an asynchronous fault).
bool sticky(cudaError_t e) {
  switch (e) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
      return true;
    default:
      return false;
  }
}

void check(cudaError_t e, const char* what) {
  if (e == cudaSuccess) return;
  (void)cudaGetLastError();  // clear a non-sticky error
  if (sticky(e))
    throw fusor::device_fault_error("fusor: the device reported a fault: " + call_text(what, e) +
                                    ". Work already ordered on the device may have written partial results; a fault "
                                    "cannot be rolled back, and the CUDA context may be unusable");
  if (e == cudaErrorMemoryAllocation) throw fusor::device_memory_error("fusor: " + call_text(what, e));
  throw fusor::error("fusor: " + call_text(what, e));
}

void check_blas(cublasStatus_t st, const char* what) {
  if (st == CUBLAS_STATUS_SUCCESS) return;
  throw fusor::error(std::string("fusor: ") + what + " failed: cuBLAS status " + std::to_string(static_cast<int>(st)));
}

/// dst[view] = src[view] (src null: the fill value), elements of sizeof(W)
/// bytes moved as words: one thread per element, grid-stride.
template <class W>
__global__ void move_kernel(void* dst, const void* src, std::uint64_t fill, const fusor::strided_view v) {
  const fusor::index_t n = v.elements();
  W value;
  std::memcpy(&value, &fill, sizeof(W));
  for (fusor::index_t i = static_cast<fusor::index_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<fusor::index_t>(blockDim.x) * gridDim.x) {
    fusor::index_t rest = i, to = v.dst_offset, from = v.src_offset;
    for (int a = v.rank - 1; a >= 0; --a) {
      const fusor::index_t k = rest % v.extent[a];
      rest /= v.extent[a];
      to += k * v.dst_strides[a];
      from += k * v.src_strides[a];
    }
    static_cast<W*>(dst)[to] = src ? static_cast<const W*>(src)[from] : value;
  }
}

/// dst[i] += src[i]: one thread per element, grid-stride.
template <class E>
__global__ void accumulate_kernel(E* dst, const E* src, std::size_t n) {
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += static_cast<std::size_t>(blockDim.x) * gridDim.x)
    dst[i] += src[i];
}

/// C[m x k] = op(A) op(B), row-major, integers wrapping (NumPy's dot): one
/// thread per element of C.
template <class E>
__global__ void integer_matmul(const E* a, const E* b, E* c, std::size_t m, std::size_t n, std::size_t k,
                               bool trans_a, bool trans_b) {
  const std::size_t e = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (e >= m * k) return;
  const std::size_t i = e / k, j = e % k;
  using U = typename std::conditional_t<std::is_same_v<E, bool>, std::type_identity<bool>, std::make_unsigned<E>>::type;
  U acc = U(0);
  for (std::size_t p = 0; p < n; ++p) {
    const U x = static_cast<U>(trans_a ? a[p * m + i] : a[i * n + p]);
    const U y = static_cast<U>(trans_b ? b[j * n + p] : b[p * k + j]);
    if constexpr (std::is_same_v<E, bool>) acc = acc || (x && y);
    else acc = static_cast<U>(acc + static_cast<U>(x * y));
  }
  c[e] = static_cast<E>(acc);
}

class cuda_runtime final : public fusor::device_runtime {
 public:
  cuda_runtime() {
    int n = 0;
    const cudaError_t e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      reason_ = e == cudaErrorInsufficientDriver ? "no CUDA driver on this machine (cudaErrorInsufficientDriver)"
                : e == cudaErrorNoDevice         ? "no CUDA device on this machine (cudaErrorNoDevice)"
                                                 : "CUDA is unavailable: " + call_text("cudaGetDeviceCount", e);
      n = 0;
    } else if (n == 0) {
      reason_ = "no CUDA device on this machine";
    }
    devices_ = std::vector<std::unique_ptr<device>>(static_cast<std::size_t>(n));
    for (auto& d : devices_) d = std::make_unique<device>();
  }

  std::string name() const override {
    int runtime = 0, driver = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    (void)cudaDriverGetVersion(&driver);
    auto version = [](int v) { return std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10); };
    return "CUDA runtime " + version(runtime) + ", driver " + (driver ? version(driver) : std::string("none"));
  }
  bool emulated() const noexcept override { return false; }
  int device_count() const override { return static_cast<int>(devices_.size()); }
  std::string unavailable_reason() const override { return reason_; }

  void* allocate(int i, std::size_t bytes) override {
    device& d = ready(i);
    void* p = nullptr;
    cudaError_t e = try_allocate(d, &p, bytes);
    if (e == cudaErrorMemoryAllocation) {
      // Trim the pool and try once more (memory freed on the stream may only
      // become reusable after a synchronisation).
      (void)cudaGetLastError();
      (void)cudaStreamSynchronize(d.stream);
      if (d.pool) (void)cudaMemPoolTrimTo(d.pool, 0);
      e = try_allocate(d, &p, bytes);
    }
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();
      std::size_t free = 0, total = 0;
      (void)cudaMemGetInfo(&free, &total);
      std::lock_guard lock(d.mutex);
      throw fusor::device_memory_error(
          "fusor: out of memory on device cuda:" + std::to_string(i) + ": asked for " + std::to_string(bytes) +
          " bytes; fusor holds " + std::to_string(d.stats.used) + " bytes in live arrays and its pool reserves " +
          std::to_string(pool_attribute(d, cudaMemPoolAttrReservedMemCurrent)) + "; the device has " +
          std::to_string(free) + " of " + std::to_string(total) + " bytes free. Nothing was changed");
    }
    check(e, "cudaMallocFromPoolAsync");
    // Usable at once on any stream (allocation is not on a steady call's path).
    check(cudaStreamSynchronize(d.stream), "cudaStreamSynchronize");
    std::lock_guard lock(d.mutex);
    d.stats.used += bytes;
    d.stats.used_high = std::max(d.stats.used_high, d.stats.used);
    ++d.stats.allocations;
    return p;
  }

  void deallocate(int i, void* p, std::size_t bytes) noexcept override {
    if (!p) return;
    device& d = *devices_[static_cast<std::size_t>(i)];
    (void)cudaSetDevice(i);
    if (d.pool) (void)cudaFreeAsync(p, d.stream);
    else (void)cudaFree(p);
    std::lock_guard lock(d.mutex);
    d.stats.used -= bytes;
    ++d.stats.frees;
  }

  void copy(int i, void* dst, const void* src, std::size_t bytes, copy_direction how) override {
    if (bytes == 0) return;
    device& d = ready(i);
    if (how == copy_direction::device_to_device) {
      check(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, d.stream), "cudaMemcpyAsync (device to device)");
      return;
    }
    if (bytes <= direct_copy_bytes || pinned(dst) || pinned(src)) {
      const auto kind = how == copy_direction::host_to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost;
      check(cudaMemcpyAsync(dst, src, bytes, kind, d.stream), "cudaMemcpyAsync");
      check(cudaStreamSynchronize(d.stream), "cudaStreamSynchronize");
      return;
    }
    std::lock_guard lock(d.staging_mutex);
    if (!d.staging) {
      check(cudaMallocHost(&d.staging, 2 * staging_half), "cudaMallocHost (staging block)");
      for (auto& ev : d.staged) check(cudaEventCreateWithFlags(&ev, cudaEventDisableTiming), "cudaEventCreate");
    }
    auto* block = static_cast<std::byte*>(d.staging);
    if (how == copy_direction::host_to_device) {
      // host memcpy into half k while the DMA of half k^1 runs
      for (std::size_t off = 0, k = 0; off < bytes; off += staging_half, k ^= 1) {
        const std::size_t n = std::min(staging_half, bytes - off);
        check(cudaEventSynchronize(d.staged[k]), "cudaEventSynchronize");
        std::memcpy(block + k * staging_half, static_cast<const std::byte*>(src) + off, n);
        check(cudaMemcpyAsync(static_cast<std::byte*>(dst) + off, block + k * staging_half, n, cudaMemcpyHostToDevice,
                              d.stream),
              "cudaMemcpyAsync (host to device)");
        check(cudaEventRecord(d.staged[k], d.stream), "cudaEventRecord");
      }
      check(cudaStreamSynchronize(d.stream), "cudaStreamSynchronize");
    } else {
      // DMA of chunk c+1 into one half while the host copies chunk c out of the other
      const std::size_t chunks = (bytes + staging_half - 1) / staging_half;
      auto issue = [&](std::size_t c) {
        const std::size_t off = c * staging_half, n = std::min(staging_half, bytes - off);
        check(cudaMemcpyAsync(block + (c & 1) * staging_half, static_cast<const std::byte*>(src) + off, n,
                              cudaMemcpyDeviceToHost, d.stream),
              "cudaMemcpyAsync (device to host)");
        check(cudaEventRecord(d.staged[c & 1], d.stream), "cudaEventRecord");
      };
      issue(0);
      for (std::size_t c = 0; c < chunks; ++c) {
        if (c + 1 < chunks) issue(c + 1);
        check(cudaEventSynchronize(d.staged[c & 1]), "cudaEventSynchronize");
        const std::size_t off = c * staging_half, n = std::min(staging_half, bytes - off);
        std::memcpy(static_cast<std::byte*>(dst) + off, block + (c & 1) * staging_half, n);
      }
    }
  }

  void copy_2d(int i, void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t width,
               std::size_t height) override {
    if (width == 0 || height == 0) return;
    device& d = ready(i);
    check(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, height, cudaMemcpyDeviceToDevice, d.stream),
          "cudaMemcpy2DAsync (device to device)");
  }

  void move_strided(int i, void* dst, const void* src, const void* value, const fusor::strided_view& view,
                    std::size_t element_bytes) override {
    const fusor::index_t n = view.elements();
    if (n == 0) return;
    device& d = ready(i);
    const unsigned grid = static_cast<unsigned>(std::min<fusor::index_t>((n + 255) / 256, 65535));
    std::uint64_t fill = 0;
    if (!src) std::memcpy(&fill, value, element_bytes);
    switch (element_bytes) {
      case 1: move_kernel<std::uint8_t><<<grid, 256, 0, d.stream>>>(dst, src, fill, view); break;
      case 2: move_kernel<std::uint16_t><<<grid, 256, 0, d.stream>>>(dst, src, fill, view); break;
      case 4: move_kernel<std::uint32_t><<<grid, 256, 0, d.stream>>>(dst, src, fill, view); break;
      default: move_kernel<std::uint64_t><<<grid, 256, 0, d.stream>>>(dst, src, fill, view); break;
    }
    check(cudaGetLastError(), "the strided move kernel");
  }

  void accumulate(int i, dtype type, void* dst, const void* src, std::size_t count) override {
    if (count == 0) return;
    device& d = ready(i);
    const unsigned grid = static_cast<unsigned>(std::min<std::size_t>((count + 255) / 256, 65535));
    if (type == dtype::float32)
      accumulate_kernel<<<grid, 256, 0, d.stream>>>(static_cast<float*>(dst), static_cast<const float*>(src), count);
    else if (type == dtype::float64)
      accumulate_kernel<<<grid, 256, 0, d.stream>>>(static_cast<double*>(dst), static_cast<const double*>(src), count);
    else
      throw fusor::error("fusor: accumulate: a non-floating dtype");
    check(cudaGetLastError(), "the accumulate kernel");
  }

  void zero(int i, void* p, std::size_t bytes) override {
    if (bytes == 0) return;
    device& d = ready(i);
    check(cudaMemsetAsync(p, 0, bytes, d.stream), "cudaMemsetAsync");
  }

  void synchronize(int i) override {
    device& d = ready(i);
    check(cudaStreamSynchronize(d.stream), "cudaStreamSynchronize");
  }

  device_memory_stats memory(int i) const override {
    const device& d = *devices_.at(static_cast<std::size_t>(i));
    device_memory_stats s;
    {
      std::lock_guard lock(d.mutex);
      s = d.stats;
    }
    s.reserved = d.pool ? pool_attribute(d, cudaMemPoolAttrReservedMemCurrent) : s.used;
    return s;
  }

  void trim(int i) override {
    device& d = ready(i);
    check(cudaStreamSynchronize(d.stream), "cudaStreamSynchronize");
    if (d.pool) check(cudaMemPoolTrimTo(d.pool, 0), "cudaMemPoolTrimTo");
  }

  void* stream(int i) override { return ready(i).stream; }

  void capture_begin(int i) override {
    device& d = ready(i);
    check(cudaStreamBeginCapture(d.stream, cudaStreamCaptureModeThreadLocal), "cudaStreamBeginCapture");
  }
  void* capture_end(int i) override {
    device& d = ready(i);
    cudaGraph_t graph = nullptr;
    if (cudaStreamEndCapture(d.stream, &graph) != cudaSuccess || !graph) {
      (void)cudaGetLastError();
      if (graph) (void)cudaGraphDestroy(graph);
      return nullptr;  // the capture was invalidated: nothing ran
    }
    cudaGraphExec_t exec = nullptr;
    const cudaError_t e = cudaGraphInstantiate(&exec, graph, 0);
    (void)cudaGraphDestroy(graph);
    if (e != cudaSuccess) {
      (void)cudaGetLastError();
      return nullptr;
    }
    return exec;
  }
  void graph_launch(int i, void* graph) override {
    device& d = ready(i);
    check(cudaGraphLaunch(static_cast<cudaGraphExec_t>(graph), d.stream), "cudaGraphLaunch");
  }
  void graph_destroy(int, void* graph) noexcept override {
    if (graph) (void)cudaGraphExecDestroy(static_cast<cudaGraphExec_t>(graph));
  }

  int multiprocessors(int i) const override {
    int n = 1;
    (void)cudaDeviceGetAttribute(&n, cudaDevAttrMultiProcessorCount, i);
    return n < 1 ? 1 : n;
  }

  void matmul(int i, dtype type, const void* a, const void* b, void* c, std::size_t m, std::size_t n, std::size_t k,
              bool trans_a, bool trans_b) override {
    device& d = ready(i);
    if (type == dtype::float32 || type == dtype::float64) {
      blas(d, i);
      if (m > INT_MAX || n > INT_MAX || k > INT_MAX)
        throw fusor::shape_error("fusor: dot: an extent above " + std::to_string(INT_MAX) + " (" + std::to_string(m) +
                                 " x " + std::to_string(n) + " x " + std::to_string(k) + ") exceeds what cuBLAS takes");
      // Row-major C = op(A) op(B) is column-major C^T = op(B)^T op(A)^T: B
      // goes first, and each operand's row-major leading dimension is its
      // column-major one.
      const int M = static_cast<int>(m), N = static_cast<int>(n), K = static_cast<int>(k);
      const cublasOperation_t tb = trans_b ? CUBLAS_OP_T : CUBLAS_OP_N, ta = trans_a ? CUBLAS_OP_T : CUBLAS_OP_N;
      const int ldb = trans_b ? N : K, lda = trans_a ? M : N;
      if (type == dtype::float64) {
        const double one = 1, zero = 0;
        check_blas(cublasDgemm(d.blas, tb, ta, K, M, N, &one, static_cast<const double*>(b), ldb,
                               static_cast<const double*>(a), lda, &zero, static_cast<double*>(c), K),
                   "cublasDgemm");
      } else {
        const float one = 1, zero = 0;
        check_blas(cublasSgemm(d.blas, tb, ta, K, M, N, &one, static_cast<const float*>(b), ldb,
                               static_cast<const float*>(a), lda, &zero, static_cast<float*>(c), K),
                   "cublasSgemm");
      }
      return;
    }
    const std::size_t elements = m * k;
    const unsigned grid = static_cast<unsigned>((elements + 255) / 256);
    fusor::visit(type, [&](auto zero) {
      using E = decltype(zero);
      if constexpr (!std::is_floating_point_v<E>)
        integer_matmul<E><<<grid, 256, 0, d.stream>>>(static_cast<const E*>(a), static_cast<const E*>(b),
                                                       static_cast<E*>(c), m, n, k, trans_a, trans_b);
    });
    check(cudaGetLastError(), "an integer dot kernel");
  }

 private:
  static constexpr std::size_t direct_copy_bytes = std::size_t{1} << 20;
  static constexpr std::size_t staging_half = std::size_t{16} << 20;
  static constexpr std::size_t blas_workspace_bytes = std::size_t{32} << 20;

  struct device {
    std::once_flag init;
    cudaStream_t stream = nullptr;
    cudaMemPool_t pool = nullptr;
    mutable std::mutex mutex;  // stats
    device_memory_stats stats;
    std::mutex staging_mutex;
    void* staging = nullptr;
    std::array<cudaEvent_t, 2> staged{};
    std::once_flag blas_init;
    cublasHandle_t blas = nullptr;
    void* blas_workspace = nullptr;
  };

  /// cuBLAS on fusor's stream, with its workspace allocated once from fusor's
  /// pool (otherwise cuBLAS allocates one itself during calls).
  void blas(device& d, int i) {
    std::call_once(d.blas_init, [&] {
      check_blas(cublasCreate(&d.blas), "cublasCreate");
      check_blas(cublasSetStream(d.blas, d.stream), "cublasSetStream");
      d.blas_workspace = allocate(i, blas_workspace_bytes);
      check_blas(cublasSetWorkspace(d.blas, d.blas_workspace, blas_workspace_bytes), "cublasSetWorkspace");
    });
  }

  device& ready(int i) {
    if (i < 0 || i >= device_count())
      throw fusor::device_unavailable_error("fusor: device cuda:" + std::to_string(i) + " does not exist: " +
                                            (devices_.empty() ? reason_ : std::to_string(devices_.size()) +
                                                                              " CUDA devices, numbered from 0"));
    device& d = *devices_[static_cast<std::size_t>(i)];
    check(cudaSetDevice(i), "cudaSetDevice");
    std::call_once(d.init, [&] {
      check(cudaStreamCreateWithFlags(&d.stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      int pools = 0;
      (void)cudaDeviceGetAttribute(&pools, cudaDevAttrMemoryPoolsSupported, i);
      if (pools) {
        cudaMemPoolProps props{};
        props.allocType = cudaMemAllocationTypePinned;
        props.location.type = cudaMemLocationTypeDevice;
        props.location.id = i;
        check(cudaMemPoolCreate(&d.pool, &props), "cudaMemPoolCreate");
        // Keep freed memory in the pool: the default threshold (0) gives it
        // back at every synchronisation and makes the next allocation slow.
        std::uint64_t keep = std::numeric_limits<std::uint64_t>::max();
        check(cudaMemPoolSetAttribute(d.pool, cudaMemPoolAttrReleaseThreshold, &keep), "cudaMemPoolSetAttribute");
      }
    });
    return d;
  }

  static cudaError_t try_allocate(device& d, void** p, std::size_t bytes) {
    return d.pool ? cudaMallocFromPoolAsync(p, bytes, d.pool, d.stream) : cudaMalloc(p, bytes);
  }

  static std::size_t pool_attribute(const device& d, cudaMemPoolAttr a) {
    std::uint64_t v = 0;
    if (d.pool) (void)cudaMemPoolGetAttribute(d.pool, a, &v);
    return static_cast<std::size_t>(v);
  }

  static bool pinned(const void* p) {
    cudaPointerAttributes a{};
    if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
      (void)cudaGetLastError();
      return false;
    }
    return a.type == cudaMemoryTypeHost;
  }

  std::string reason_;
  std::vector<std::unique_ptr<device>> devices_;

 public:
  /// At exit: cuBLAS's handles go, with the memory cuBLAS allocated for them
  /// and the workspace fusor gave it, and the pinned staging block of large
  /// host copies with its events (compute-sanitizer's leak check reported
  /// each). The runtime itself is never destroyed: buffers may outlive it.
  void release_at_exit() noexcept {
    for (std::size_t i = 0; i < devices_.size(); ++i) {
      device& d = *devices_[i];
      if (!d.blas && !d.staging) continue;
      (void)cudaSetDevice(static_cast<int>(i));
      (void)cudaStreamSynchronize(d.stream);
      if (d.blas) {
        (void)cublasDestroy(d.blas);
        d.blas = nullptr;
        deallocate(static_cast<int>(i), d.blas_workspace, blas_workspace_bytes);
        d.blas_workspace = nullptr;
        (void)cudaStreamSynchronize(d.stream);
      }
      std::lock_guard lock(d.staging_mutex);
      if (d.staging) {
        for (auto& ev : d.staged) (void)cudaEventDestroy(ev);
        d.staged = {};
        (void)cudaFreeHost(d.staging);
        d.staging = nullptr;
      }
    }
  }
};

}  // namespace

extern "C" fusor::device_runtime* fusor_cuda_runtime() {
  // Never destroyed: device buffers may outlive static destruction order.
  static auto* runtime = [] {
    auto* r = new cuda_runtime;
    std::atexit([] { static_cast<cuda_runtime*>(fusor_cuda_runtime())->release_at_exit(); });
    return r;
  }();
  return runtime;
}
