// fusor/memory/emulated_device.hpp — devices emulated on the host, for tests
// (and for users who want to run their device code paths on a machine without
// a GPU, as Thrust's CPP device system does).
//
//   fusor::emulated_devices devices;                 // cuda(0) is emulated while it lives
//   auto w = fusor::shared(xv, {.name = "w", .space = fusor::cuda(0)});
//
// Emulated device memory is host memory that fusor reaches only through the
// device runtime interface: copies in and out, fills, and kernels run by the
// emulation on the host. Under AddressSanitizer it is poisoned the rest of
// the time, so host code that dereferences a device pointer — the bug a
// device backend must never have — stops the program with a report. An
// optional capacity makes a device run out of memory, to test that a failed
// allocation changes nothing.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "fusor/core/wrapping.hpp"
#include "fusor/memory/device.hpp"

#if defined(__SANITIZE_ADDRESS__)
#define FUSOR_EMULATION_POISONS 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUSOR_EMULATION_POISONS 1
#endif
#endif
#ifdef FUSOR_EMULATION_POISONS
#include <sanitizer/asan_interface.h>
#endif

namespace fusor {

/// How the emulation behaves.
struct emulation_options {
  int devices = 1;
  /// Bytes each device may hold; an allocation beyond it is a device_memory_error.
  std::size_t capacity = std::numeric_limits<std::size_t>::max();
};

class emulated_runtime final : public device_runtime {
 public:
  static constexpr std::size_t granule = 256;  ///< cudaMalloc's alignment

  /// The process's one emulation (it outlives every buffer, whatever the order
  /// of destruction at exit).
  static emulated_runtime& instance() {
    static auto* r = new emulated_runtime;
    return *r;
  }

  void configure(const emulation_options& o) {
    std::lock_guard lock(mutex_);
    options_ = o;
    if (static_cast<int>(devices_.size()) < o.devices) devices_.resize(static_cast<std::size_t>(o.devices));
  }

  std::string name() const override { return "emulated"; }
  bool emulated() const noexcept override { return true; }
  int device_count() const override {
    std::lock_guard lock(mutex_);
    return options_.devices;
  }
  std::string unavailable_reason() const override { return "the emulation was configured with no devices"; }

  void* allocate(int device, std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    state& d = devices_.at(static_cast<std::size_t>(device));
    if (d.capturing) d.capture_failed = true;  // as on CUDA: no allocation while a graph is captured
    const std::size_t padded = padded_size(bytes);
    if (padded > options_.capacity || d.used > options_.capacity - padded)
      throw device_memory_error("fusor: out of memory on device cuda:" + std::to_string(device) +
                                " (emulated): asked for " + std::to_string(bytes) + " bytes; fusor holds " +
                                std::to_string(d.used) + " of the device's " + std::to_string(options_.capacity) +
                                " bytes");
    void* p = nullptr;
    try {
      p = ::operator new(padded, std::align_val_t{granule});
    } catch (const std::bad_alloc&) {
      throw device_memory_error("fusor: out of memory on device cuda:" + std::to_string(device) +
                                " (emulated): asked for " + std::to_string(bytes) + " bytes; fusor holds " +
                                std::to_string(d.used) + " bytes there");
    }
    d.live.emplace(p, padded);
    d.used += padded;
    d.reserved = std::max(d.reserved, d.used);
    d.used_high = std::max(d.used_high, d.used);
    ++d.allocations;
    poison(p, padded);
    return p;
  }

  void deallocate(int device, void* p, std::size_t) noexcept override {
    if (!p) return;
    std::lock_guard lock(mutex_);
    state& d = devices_[static_cast<std::size_t>(device)];
    const auto it = d.live.find(p);
    if (it == d.live.end()) return;
    unpoison(p, it->second);
    d.used -= it->second;
    ++d.frees;
    d.live.erase(it);
    ::operator delete(p, std::align_val_t{granule});
  }

  void copy(int device, void* dst, const void* src, std::size_t bytes, copy_direction how) override {
    std::lock_guard lock(mutex_);
    state& d = devices_.at(static_cast<std::size_t>(device));
    if (d.capturing) {
      // Copies between the device and pageable host memory cannot be captured
      // (on CUDA either); one within the device is recorded.
      if (how != copy_direction::device_to_device) d.capture_failed = true;
      else d.recording.push_back([dst, src, bytes] { std::memmove(dst, src, bytes); });
      return;
    }
    const void* dev_src = how == copy_direction::host_to_device ? nullptr : src;
    void* dev_dst = how == copy_direction::device_to_host ? nullptr : dst;
    with_access(dev_src, dev_dst, bytes, [&] { std::memmove(dst, src, bytes); });
  }

  void copy_2d(int device, void* dst, std::size_t dpitch, const void* src, std::size_t spitch, std::size_t width,
               std::size_t height) override {
    if (width == 0 || height == 0) return;
    auto rows = [=] {
      for (std::size_t r = 0; r < height; ++r)
        std::memmove(static_cast<std::byte*>(dst) + r * dpitch, static_cast<const std::byte*>(src) + r * spitch, width);
    };
    std::lock_guard lock(mutex_);
    state& d = devices_.at(static_cast<std::size_t>(device));
    if (d.capturing) {
      d.recording.push_back(rows);
      return;
    }
    with_access(src, dst, (height - 1) * std::max(dpitch, spitch) + width, rows);
  }

  void move_strided(int device, void* dst, const void* src, const void* value, const strided_view& view,
                    std::size_t element_bytes) override {
    if (view.elements() == 0) return;
    std::array<std::byte, 16> fill{};
    // read now, as CUDA takes it as a parameter (`value` is set exactly when `src` is not)
    if (!src && value) std::memcpy(fill.data(), value, element_bytes);
    auto body = [=] { detail::move_strided_host(dst, src, fill.data(), view, element_bytes); };
    std::lock_guard lock(mutex_);
    state& d = devices_.at(static_cast<std::size_t>(device));
    if (d.capturing) {
      d.recording.push_back(body);
      return;
    }
    with_access(src, dst, 1, body);
  }

  void zero(int device, void* p, std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    state& d = devices_.at(static_cast<std::size_t>(device));
    if (d.capturing) {
      d.recording.push_back([p, bytes] { std::memset(p, 0, bytes); });
      return;
    }
    with_access(nullptr, p, bytes, [&] { std::memset(p, 0, bytes); });
  }

  void synchronize(int device) override {
    std::lock_guard lock(mutex_);
    state& d = devices_.at(static_cast<std::size_t>(device));
    if (d.capturing) d.capture_failed = true;  // waiting inside a capture invalidates it, as on CUDA
  }

  device_memory_stats memory(int device) const override {
    std::lock_guard lock(mutex_);
    const state& d = devices_.at(static_cast<std::size_t>(device));
    return {d.reserved, d.used, d.used_high, d.allocations, d.frees};
  }

  void trim(int device) override {
    std::lock_guard lock(mutex_);
    devices_.at(static_cast<std::size_t>(device)).reserved = devices_[static_cast<std::size_t>(device)].used;
  }

  void* stream(int) override { return nullptr; }

  void matmul(int device, dtype type, const void* a, const void* b, void* c, std::size_t m, std::size_t n,
              std::size_t k, bool trans_a, bool trans_b) override {
    auto body = [=] {
      visit(type, [&](auto zero) {
        using E = decltype(zero);
        const E* A = static_cast<const E*>(a);
        const E* B = static_cast<const E*>(b);
        E* C = static_cast<E*>(c);
        for (std::size_t i = 0; i < m; ++i)
          for (std::size_t j = 0; j < k; ++j) {
            E acc = E(0);
            for (std::size_t p = 0; p < n; ++p) {
              const E x = trans_a ? A[p * m + i] : A[i * n + p];
              const E y = trans_b ? B[j * n + p] : B[p * k + j];
              if constexpr (wrapping::wraps<E>) acc = wrapping::add(acc, wrapping::mul(x, y));
              else if constexpr (std::is_same_v<E, bool>) acc = acc || (x && y);
              else acc = static_cast<E>(acc + x * y);
            }
            C[i * k + j] = acc;
          }
      });
    };
    run(device, body);
  }

  void accumulate(int device, dtype type, void* dst, const void* src, std::size_t count) override {
    if (count == 0) return;
    auto body = [=] {
      visit(type, [&](auto zero) {
        using E = decltype(zero);
        if constexpr (std::is_floating_point_v<E>)
          for (std::size_t i = 0; i < count; ++i) static_cast<E*>(dst)[i] += static_cast<const E*>(src)[i];
        else throw error("fusor: accumulate: a non-floating dtype");
      });
    };
    run(device, body);
  }

  void run_on_host(int device, void (*fn)(void*), void* context, std::size_t bytes) override {
    std::lock_guard lock(mutex_);
    state& d = devices_.at(static_cast<std::size_t>(device));
    if (d.capturing) {  // recorded: the context is copied (it is trivially copyable)
      d.recording.push_back([fn, copy = std::vector<std::byte>(static_cast<std::byte*>(context),
                                                               static_cast<std::byte*>(context) + bytes)]() mutable {
        fn(copy.data());
      });
      return;
    }
    auto call = [&] { fn(context); };
    run_unlocked(d, call);
  }

  // Graphs: the launches, fills and device copies of a capture are recorded
  // (nothing runs), and replayed in order by graph_launch.
  void capture_begin(int device) override {
    std::lock_guard lock(mutex_);
    state& d = devices_.at(static_cast<std::size_t>(device));
    d.capturing = true;
    d.capture_failed = false;
    d.recording.clear();
  }
  void* capture_end(int device) override {
    std::lock_guard lock(mutex_);
    state& d = devices_.at(static_cast<std::size_t>(device));
    d.capturing = false;
    if (d.capture_failed) {
      d.recording.clear();
      return nullptr;
    }
    ++d.captures;
    return new std::vector<std::function<void()>>(std::move(d.recording));
  }
  void graph_launch(int device, void* graph) override {
    std::lock_guard lock(mutex_);
    state& d = devices_.at(static_cast<std::size_t>(device));
    ++d.graph_launches;
    auto replay = [&] {
      for (auto& work : *static_cast<std::vector<std::function<void()>>*>(graph)) work();
    };
    run_unlocked(d, replay);
  }
  void graph_destroy(int, void* graph) noexcept override {
    delete static_cast<std::vector<std::function<void()>>*>(graph);
  }

  /// Graphs captured and launched on `device` (for tests).
  std::pair<std::uint64_t, std::uint64_t> graph_counts(int device) const {
    std::lock_guard lock(mutex_);
    const state& d = devices_.at(static_cast<std::size_t>(device));
    return {d.captures, d.graph_launches};
  }

  /// Runs `kernel()` on the host with every live allocation of `device`
  /// readable and writable: how the emulation executes device kernels (while
  /// a graph is captured, it is recorded instead).
  template <class Kernel>
  void run(int device, Kernel&& kernel) {
    std::lock_guard lock(mutex_);
    state& d = devices_.at(static_cast<std::size_t>(device));
    if (d.capturing) {
      d.recording.push_back(std::function<void()>(std::forward<Kernel>(kernel)));
      return;
    }
    run_unlocked(d, kernel);
  }

 private:
  struct state {
    std::map<void*, std::size_t> live;
    std::size_t used = 0, used_high = 0, reserved = 0;
    std::uint64_t allocations = 0, frees = 0;
    bool capturing = false, capture_failed = false;
    std::vector<std::function<void()>> recording;
    std::uint64_t captures = 0, graph_launches = 0;
  };

  template <class Kernel>
  static void run_unlocked(state& d, Kernel& kernel) {
    for (const auto& [p, n] : d.live) unpoison(p, n);
    struct repoison {
      state& d;
      ~repoison() {
        for (const auto& [p, n] : d.live) poison(p, n);
      }
    } guard{d};
    kernel();
  }

  emulated_runtime() = default;

  static std::size_t padded_size(std::size_t bytes) noexcept {
    return (std::max<std::size_t>(bytes, 1) + granule - 1) / granule * granule;
  }

  static void poison([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) noexcept {
#ifdef FUSOR_EMULATION_POISONS
    ASAN_POISON_MEMORY_REGION(p, n);
#endif
  }
  static void unpoison([[maybe_unused]] const void* p, [[maybe_unused]] std::size_t n) noexcept {
#ifdef FUSOR_EMULATION_POISONS
    ASAN_UNPOISON_MEMORY_REGION(p, n);
#endif
  }

  /// Opens the device bytes a copy touches (whole allocations: poisoning is
  /// tracked per allocation), runs `f`, closes them again.
  template <class F>
  void with_access(const void* a, const void* b, std::size_t bytes, F&& f) {
    std::vector<std::pair<const void*, std::size_t>> opened;
    auto open = [&](const void* p) {
      if (!p || bytes == 0) return;
      for (const auto& d : devices_) {
        auto it = d.live.upper_bound(const_cast<void*>(p));
        if (it == d.live.begin()) continue;
        --it;
        const auto* base = static_cast<const std::byte*>(it->first);
        if (static_cast<const std::byte*>(p) < base + it->second) {
          unpoison(it->first, it->second);
          opened.emplace_back(it->first, it->second);
          return;
        }
      }
    };
    open(a);
    open(b);
    f();
    for (const auto& [p, n] : opened) poison(p, n);
  }

  mutable std::mutex mutex_;
  emulation_options options_{};
  std::vector<state> devices_ = std::vector<state>(1);
};

/// While an object of this type lives, device spaces are served by the
/// emulation (it takes precedence over a linked CUDA runtime). Not nested
/// with different options: the last one constructed configures it.
class emulated_devices {
 public:
  explicit emulated_devices(emulation_options options = {}) {
    emulated_runtime::instance().configure(options);
    previous_ = detail::runtimes().emulation.exchange(&emulated_runtime::instance(), std::memory_order_acq_rel);
  }
  emulated_devices(const emulated_devices&) = delete;
  emulated_devices& operator=(const emulated_devices&) = delete;
  ~emulated_devices() { detail::runtimes().emulation.store(previous_, std::memory_order_release); }

  emulated_runtime& runtime() const noexcept { return emulated_runtime::instance(); }

 private:
  device_runtime* previous_ = nullptr;
};

}  // namespace fusor
