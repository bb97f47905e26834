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
#include <cuda_runtime.h>

#include <array>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "fusor/memory/device.hpp"

namespace {

using fusor::copy_direction;
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

 private:
  static constexpr std::size_t direct_copy_bytes = std::size_t{1} << 20;
  static constexpr std::size_t staging_half = std::size_t{16} << 20;

  struct device {
    std::once_flag init;
    cudaStream_t stream = nullptr;
    cudaMemPool_t pool = nullptr;
    mutable std::mutex mutex;  // stats
    device_memory_stats stats;
    std::mutex staging_mutex;
    void* staging = nullptr;
    std::array<cudaEvent_t, 2> staged{};
  };

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
};

}  // namespace

extern "C" fusor::device_runtime* fusor_cuda_runtime() {
  // Never destroyed: device buffers may outlive static destruction order.
  static auto* runtime = new cuda_runtime;
  return runtime;
}
