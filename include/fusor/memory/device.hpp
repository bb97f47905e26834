// fusor/memory/device.hpp — what fusor needs from a device, as an interface:
// memory, copies, a stream to order work on. Portable: no CUDA header here.
//
// Two implementations exist:
//   - CUDA, in the compiled runtime libfusor_cuda (include <fusor/cuda.hpp>
//     and link it: pkg-config fusor-cuda). Device memory comes from a pool
//     fusor owns; copies go through a reused pinned staging block.
//   - an emulation (memory/emulated_device.hpp): "device" memory on the host,
//     reached only through this interface, so that the memory model of
//     device variables and functions — borrow aliases nothing, get_value
//     copies, set_value writes into the existing allocation, zero
//     allocations in a steady state, a failed call changes nothing — is
//     tested on machines without a GPU. Under AddressSanitizer the emulated
//     memory is poisoned: host code that touches it directly is reported.
//
// A memory space names a device (`fusor::cuda(i)`); `device_runtime_for(s)`
// finds the runtime serving it: an installed emulation first, else the linked
// CUDA runtime, else a clear error.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>

#include "fusor/core/dtype.hpp"
#include "fusor/core/errors.hpp"
#include "fusor/memory/space.hpp"
#include "fusor/memory/strided.hpp"

namespace fusor {

enum class copy_direction : std::uint8_t { host_to_device, device_to_host, device_to_device };

/// A device's memory as fusor sees it (f.memory(), fusor::device_memory(i)).
struct device_memory_stats {
  std::size_t reserved = 0;       ///< bytes the runtime holds from the driver (its pool)
  std::size_t used = 0;           ///< bytes in live fusor allocations
  std::size_t used_high = 0;      ///< the high-water mark of `used`
  std::uint64_t allocations = 0;  ///< allocation calls since the program started
  std::uint64_t frees = 0;
};

class device_runtime {
 public:
  virtual ~device_runtime() = default;

  /// "CUDA 13.0, driver 13.0" or "emulated".
  virtual std::string name() const = 0;
  virtual bool emulated() const noexcept = 0;
  /// Devices present (0 without a driver or a device).
  virtual int device_count() const = 0;
  /// Why no device can be used, when device_count() is 0.
  virtual std::string unavailable_reason() const = 0;

  /// `bytes` of device memory, aligned to 256 bytes. Throws
  /// device_memory_error (after trimming the pool and trying once more).
  virtual void* allocate(int device, std::size_t bytes) = 0;
  virtual void deallocate(int device, void* p, std::size_t bytes) noexcept = 0;

  /// Copies `bytes`. Host-to-device returns once the source may be reused;
  /// device-to-host once the destination holds the data; device-to-device is
  /// ordered on the device's stream.
  virtual void copy(int device, void* dst, const void* src, std::size_t bytes, copy_direction how) = 0;
  /// Copies `height` rows of `width` bytes within the device, rows `dpitch`
  /// and `spitch` bytes apart (cudaMemcpy2D), ordered on the stream.
  virtual void copy_2d(int device, void* dst, std::size_t dpitch, const void* src, std::size_t spitch,
                       std::size_t width, std::size_t height) = 0;
  /// Moves elements of `element_bytes` between strided views of device
  /// memory (memory/strided.hpp): dst[view] = src[view], or, with src null,
  /// every element of the view = the bytes at `value` (host memory, read
  /// before the call returns). Ordered on the stream.
  virtual void move_strided(int device, void* dst, const void* src, const void* value, const strided_view& view,
                            std::size_t element_bytes) = 0;
  /// Sets `bytes` of device memory to zero (ordered on the stream).
  virtual void zero(int device, void* p, std::size_t bytes) = 0;
  /// dst[i] += src[i] for `count` contiguous elements of the floating dtype
  /// `type` (the scatter of take's gradient), ordered on the stream.
  virtual void accumulate(int device, dtype type, void* dst, const void* src, std::size_t count) = 0;
  /// Waits for everything ordered on the device's stream; throws
  /// device_fault_error if the device reported a fault.
  virtual void synchronize(int device) = 0;

  virtual device_memory_stats memory(int device) const = 0;
  /// How many multiprocessors the device has (how wide a kernel must be to fill it).
  virtual int multiprocessors(int device) const {
    (void)device;
    return 1;
  }
  /// Gives the pool's unused memory back to the driver.
  virtual void trim(int device) = 0;

  /// The stream fusor orders its work on for `device` (opaque here: a
  /// cudaStream_t for CUDA, null for the emulation).
  virtual void* stream(int device) = 0;

  /// C[m x k] = op(A) * op(B) on the device, all contiguous row-major, of
  /// element type `type`; `trans_a`: A is stored as its n x m transpose
  /// (likewise B). Integers wrap, as on the host. (cuBLAS for float and
  /// double on CUDA.)
  virtual void matmul(int device, dtype type, const void* a, const void* b, void* c, std::size_t m, std::size_t n,
                      std::size_t k, bool trans_a, bool trans_b) = 0;

  /// The emulation runs device kernels as host code: fn(context) with the
  /// device's memory open to it; `context` is `bytes` of trivially copyable
  /// data (recorded while a graph is captured). A real device has no such thing.
  virtual void run_on_host(int device, void (*fn)(void*), void* context, std::size_t bytes) {
    (void)device;
    (void)fn;
    (void)context;
    (void)bytes;
    throw error("fusor: internal error: a host-emulated kernel was sent to a real device");
  }

  // Graphs (CUDA graphs): the work ordered on the device's stream between
  // capture_begin and capture_end is recorded instead of run, and can be
  // replayed as one launch. capture_end returns null when the work could not
  // be captured (the capture is then abandoned: nothing ran).
  virtual void capture_begin(int device) = 0;
  virtual void* capture_end(int device) = 0;
  virtual void graph_launch(int device, void* graph) = 0;
  virtual void graph_destroy(int device, void* graph) noexcept = 0;
};

namespace detail {
struct device_runtimes {
  /// An installed emulation takes precedence over CUDA (tests install one).
  std::atomic<device_runtime*> emulation{nullptr};
  /// Set when libfusor_cuda is linked (by <fusor/cuda.hpp>).
  std::atomic<device_runtime* (*)()> linked{nullptr};
};
inline device_runtimes& runtimes() noexcept {
  static device_runtimes r;
  return r;
}
}  // namespace detail

/// The runtime serving device spaces, or null when the program has none.
FUSOR_RUNTIME device_runtime* current_device_runtime() noexcept;

/// The runtime serving `space` (a device space), checked: a program without
/// a device runtime, without a device, or asking for a device index beyond
/// those present gets an error saying so and what to do.
FUSOR_RUNTIME device_runtime& device_runtime_for(const memory_space& space);

/// The memory of device `i` as fusor sees it.
inline device_memory_stats device_memory(int i = 0) { return device_runtime_for(cuda(i)).memory(i); }

/// Devices this program can use (0 without a device runtime, driver or device).
inline int device_count() {
  device_runtime* rt = current_device_runtime();
  return rt ? rt->device_count() : 0;
}

/// Waits until device `i` has finished fusor's work (device arrays returned
/// with internal_type are ordered on fusor's stream for that device: wait
/// before using them on another stream). Throws device_fault_error if the
/// device reported a fault.
inline void device_synchronize(int i = 0) { device_runtime_for(cuda(i)).synchronize(i); }

/// Gives the unused memory of fusor's pool on device `i` back to the driver.
inline void device_trim(int i = 0) { device_runtime_for(cuda(i)).trim(i); }

namespace detail {
/// copy_bytes where a device's memory is one side or both (impl/device.ipp).
FUSOR_RUNTIME void copy_device_bytes(void* dst, const memory_space& dst_space, const void* src,
                                     const memory_space& src_space, std::size_t bytes);
}  // namespace detail

/// Copies between any two spaces (host ↔ device, device ↔ device of one
/// device, host ↔ host). Bytes of a device in another device's space are
/// refused: fusor keeps one function's values on one device. A copy on the
/// host is a memcpy inline (a random stream's counter is copied every call).
inline void copy_bytes(void* dst, const memory_space& dst_space, const void* src, const memory_space& src_space,
                       std::size_t bytes) {
  if (bytes == 0) return;
  if (host_accessible(dst_space) && host_accessible(src_space)) std::memcpy(dst, src, bytes);
  else detail::copy_device_bytes(dst, dst_space, src, src_space, bytes);
}

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/memory/impl/device.ipp"
#endif
