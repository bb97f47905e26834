// fusor/compile/profile.hpp — per-kernel statistics of a compiled function:
// how users microbenchmark their fused kernels. Off unless asked for
// (f.enable_profiling() or FUSOR_PROFILE=1), so that calls pay nothing.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
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

  /// How wide the kernel column grows before long names wrap.
  static constexpr std::size_t default_name_width = 60;

  /// A readable table: one row per kernel. The kernel column is as wide as
  /// the longest name, up to `max_name_width` characters (at least 16); a
  /// longer name wraps onto continuation lines indented by two spaces, broken
  /// before a space where one is near the end of the line. Names are never
  /// cut: the first line's text (without its padding) followed by each
  /// continuation line's text (without its indent) is the whole name.
  /// str(SIZE_MAX) gives one line per kernel.
  std::string str(std::size_t max_name_width = default_name_width) const {
    constexpr std::string_view first_column = "kernel";
    std::size_t width = first_column.size();
    for (const auto& k : kernels_) width = std::max(width, k.name.size());
    width = std::min(width, std::max<std::size_t>(max_name_width, 16));

    std::string out;
    append_padded(out, first_column, width);
    out += "  calls   total ms    us/call       MB/call     GB/s\n";
    char numbers[160];
    for (const auto& k : kernels_) {
      const std::string_view name = k.name;
      std::size_t taken = take(name, width);
      append_padded(out, name.substr(0, taken), width);
      std::snprintf(numbers, sizeof numbers, " %6llu %10.3f %10.3f %13.3f %8.2f\n",
                    static_cast<unsigned long long>(k.calls), k.seconds * 1e3, k.microseconds_per_call(),
                    k.calls ? k.bytes / 1e6 / static_cast<double>(k.calls) : 0.0, k.gigabytes_per_second());
      out += numbers;
      // Continuation lines: "  " and the next piece of the name.
      for (std::size_t at = taken; at < name.size(); at += taken) {
        taken = take(name.substr(at), width - continuation_indent.size());
        out += continuation_indent;
        out += name.substr(at, taken);
        out += '\n';
      }
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
  static constexpr std::string_view continuation_indent = "  ";

  /// How many characters of `rest` go on a line of `width`: all when they
  /// fit; else up to the last space in the line's second half (the space
  /// starts the next line), else exactly `width`.
  static std::size_t take(std::string_view rest, std::size_t width) noexcept {
    if (rest.size() <= width) return rest.size();
    for (std::size_t i = width; i > width / 2; --i)
      if (rest[i] == ' ') return i;
    return width;
  }

  static void append_padded(std::string& out, std::string_view text, std::size_t width) {
    out += text;
    if (text.size() < width) out.append(width - text.size(), ' ');
  }

  std::vector<kernel_stats> kernels_;
};

}  // namespace fusor
