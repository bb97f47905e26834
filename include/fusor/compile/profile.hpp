// fusor/compile/profile.hpp — per-kernel statistics of a compiled function:
// how users microbenchmark their fused kernels. Off unless asked for
// (f.enable_profiling() or FUSOR_PROFILE=1), so that calls pay nothing.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace fusor {

struct kernel_stats {
  std::string name;        ///< "fused outputs 0, 1", "update W (in place)", ...
  std::uint64_t calls = 0;
  double seconds = 0;      ///< total time in the kernel
  double bytes = 0;        ///< total bytes read and written (STREAM counting)

  double gigabytes_per_second() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
  double microseconds_per_call() const { return calls ? seconds * 1e6 / static_cast<double>(calls) : 0; }
};

class profile_report {
 public:
  const std::vector<kernel_stats>& kernels() const noexcept { return kernels_; }
  const kernel_stats* find(const std::string& name) const {
    for (const auto& k : kernels_)
      if (k.name == name) return &k;
    return nullptr;
  }

  /// A readable table: one row per kernel.
  std::string str() const {
    std::string out = "kernel                                   calls   total ms    us/call       MB/call     GB/s\n";
    char line[256];
    for (const auto& k : kernels_) {
      std::snprintf(line, sizeof line, "%-40.40s %6llu %10.3f %10.3f %13.3f %8.2f\n", k.name.c_str(),
                    static_cast<unsigned long long>(k.calls), k.seconds * 1e3, k.microseconds_per_call(),
                    k.calls ? k.bytes / 1e6 / static_cast<double>(k.calls) : 0.0, k.gigabytes_per_second());
      out += line;
    }
    return out;
  }

  void record(const std::string& name, double seconds, double bytes) {
    for (auto& k : kernels_)
      if (k.name == name) {
        ++k.calls;
        k.seconds += seconds;
        k.bytes += bytes;
        return;
      }
    kernels_.push_back({name, 1, seconds, bytes});
  }
  void clear() noexcept { kernels_.clear(); }

 private:
  std::vector<kernel_stats> kernels_;
};

}  // namespace fusor
