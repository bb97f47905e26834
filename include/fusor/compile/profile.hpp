// fusor/compile/profile.hpp — per-kernel statistics of a compiled function:
// how users microbenchmark their fused kernels, and a trace of its steps, one
// event per step of each call, for a trace viewer (Perfetto, chrome://tracing).
// Off unless asked for (f.enable_profiling() or FUSOR_PROFILE=1), so that
// calls pay nothing.
#pragma once

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "fusor/core/config.hpp"

namespace fusor {

namespace detail {
/// Writes `text` to the file `path`; throws fusor::io_error naming `who` and
/// the file when it cannot (compile/impl/profile.ipp).
FUSOR_RUNTIME void write_text_file(const std::string& path, const std::string& text, const char* who);
/// `text` as a JSON string, quotes included (compile/impl/profile.ipp).
FUSOR_RUNTIME std::string json_string(const std::string& text);
}  // namespace detail

struct kernel_stats {
  std::string name;        ///< "fused outputs 0, 1", "update W (in place)", ...
  std::uint64_t calls = 0;
  double seconds = 0;      ///< total time in the kernel
  double bytes = 0;        ///< total bytes read and written (STREAM counting)

  double gigabytes_per_second() const { return seconds > 0 ? bytes / seconds / 1e9 : 0; }
  double microseconds_per_call() const { return calls ? seconds * 1e6 / static_cast<double>(calls) : 0; }
};

/// One step of one profiled call.
struct trace_event {
  std::size_t kernel = 0;  ///< its kernel in profile_report::kernels()
  std::size_t step = 0;    ///< its index in the plan (f.plan() numbers the steps alike)
  std::uint64_t call = 0;  ///< which profiled call, from 0
  double start = 0;        ///< seconds from the profile's first step
  double seconds = 0;
  double bytes = 0;        ///< bytes read and written (STREAM counting)
};

class profile_report {
 public:
  const std::vector<kernel_stats>& kernels() const noexcept { return kernels_; }
  FUSOR_RUNTIME const kernel_stats* find(const std::string& name) const;

  /// How wide the kernel column grows before long names wrap.
  static constexpr std::size_t default_name_width = 60;

  /// A readable table: one row per kernel. The kernel column is as wide as
  /// the longest name, up to `max_name_width` characters (at least 16); a
  /// longer name wraps onto continuation lines indented by two spaces, broken
  /// before a space where one is near the end of the line. Names are never
  /// cut: the first line's text (without its padding) followed by each
  /// continuation line's text (without its indent) is the whole name.
  /// str(SIZE_MAX) gives one line per kernel.
  FUSOR_RUNTIME std::string str(std::size_t max_name_width = default_name_width) const;

  /// How many step events the trace keeps: the most recent ones. The trace
  /// allocates while it grows to this, and not after.
  static constexpr std::size_t trace_capacity = std::size_t{1} << 16;

  /// The steps of the profiled calls, oldest first (at most trace_capacity:
  /// the most recent).
  FUSOR_RUNTIME std::vector<trace_event> events() const;
  /// How many profiled calls were recorded.
  std::uint64_t calls() const noexcept { return calls_; }

  /// The trace as Chrome's trace-event JSON, which Perfetto
  /// (ui.perfetto.dev) and chrome://tracing open: one complete event ("X") per
  /// step of each call, named by its kernel, with the step's index, the call
  /// and the bytes it moved (compile/impl/profile.ipp).
  FUSOR_RUNTIME std::string chrome_trace() const;
  /// chrome_trace() written to `path` (throws fusor::io_error when it cannot be).
  FUSOR_RUNTIME void write_chrome_trace(const std::string& path) const;

  /// One run of `name`'s kernel, `seconds` long, moving `bytes`, added to
  /// the statistics only (not to the trace: it is no step of a call).
  /// Returns the kernel's index in kernels().
  FUSOR_RUNTIME std::size_t record(const std::string& name, double seconds, double bytes);
  /// A call begins: its steps are recorded as call calls().
  void begin_call() noexcept { ++calls_; }
  /// Step `step` of the current call ran `name`'s kernel from `start` for
  /// `seconds`, moving `bytes`.
  FUSOR_RUNTIME void record(const std::string& name, std::size_t step, std::chrono::steady_clock::time_point start,
                            double seconds, double bytes);
  FUSOR_RUNTIME void clear() noexcept;

 private:
  static constexpr std::string_view continuation_indent = "  ";

  /// How many characters of `rest` go on a line of `width`: all when they
  /// fit; else up to the last space in the line's second half (the space
  /// starts the next line), else exactly `width`.
  FUSOR_RUNTIME static std::size_t take(std::string_view rest, std::size_t width) noexcept;

  FUSOR_RUNTIME static void append_padded(std::string& out, std::string_view text, std::size_t width);

  std::vector<kernel_stats> kernels_;
  std::vector<trace_event> events_;  ///< a ring once full: events_[next_] is the oldest
  std::size_t next_ = 0;
  std::uint64_t calls_ = 0;
  std::chrono::steady_clock::time_point epoch_{};
};

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/compile/impl/profile.ipp"
#endif
