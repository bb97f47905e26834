// fusor/compile/impl/profile.ipp — a profile's trace written as Chrome's
// trace-event JSON (the format Perfetto and chrome://tracing read).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include <cstdio>
#include <fstream>
#include <string>

#include "fusor/compile/profile.hpp"
#include "fusor/core/errors.hpp"

namespace fusor {

namespace detail {
/// `text` as a JSON string, quotes included: `"` and `\` escaped, control
/// characters as \uXXXX (a kernel's name holds what users named their
/// inputs and variables).
FUSOR_RUNTIME std::string json_string(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20) {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(static_cast<unsigned char>(c)));
      out += escaped;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

FUSOR_RUNTIME void write_text_file(const std::string& path, const std::string& text, const char* who) {
  std::ofstream file(path, std::ios::binary);
  if (!file || !file.write(text.data(), static_cast<std::streamsize>(text.size())) || !file.flush())
    throw io_error(std::string(who) + ": cannot write '" + path + "'");
}
}  // namespace detail

FUSOR_RUNTIME std::string profile_report::chrome_trace() const {
  // Times in microseconds, as the format has them. The process and thread
  // names are metadata events ("M"); every step is one complete event ("X").
  std::string out =
      "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n"
      "{\"name\": \"process_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"fusor::function\"}},\n"
      "{\"name\": \"thread_name\", \"ph\": \"M\", \"pid\": 1, \"tid\": 1, \"args\": {\"name\": \"steps\"}}";
  char numbers[240];
  for (const trace_event& e : events()) {
    const kernel_stats& k = kernels_[e.kernel];
    out += ",\n{\"name\": ";
    out += detail::json_string(k.name);
    std::snprintf(numbers, sizeof numbers,
                  ", \"cat\": \"step\", \"ph\": \"X\", \"pid\": 1, \"tid\": 1, \"ts\": %.3f, \"dur\": %.3f, "
                  "\"args\": {\"step\": %zu, \"call\": %llu, \"bytes\": %.0f, \"GB/s\": %.3f}}",
                  e.start * 1e6, e.seconds * 1e6, e.step, static_cast<unsigned long long>(e.call), e.bytes,
                  e.seconds > 0 ? e.bytes / e.seconds / 1e9 : 0.0);
    out += numbers;
  }
  return out + "\n]}\n";
}

FUSOR_RUNTIME void profile_report::write_chrome_trace(const std::string& path) const {
  detail::write_text_file(path, chrome_trace(), "fusor::profile_report::write_chrome_trace");
}

FUSOR_RUNTIME const kernel_stats* profile_report::find(const std::string& name) const {
  for (const auto& k : kernels_)
    if (k.name == name) return &k;
  return nullptr;
}

FUSOR_RUNTIME std::string profile_report::str(std::size_t max_name_width) const {
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

FUSOR_RUNTIME std::vector<trace_event> profile_report::events() const {
  std::vector<trace_event> out(events_.begin() + static_cast<std::ptrdiff_t>(next_), events_.end());
  out.insert(out.end(), events_.begin(), events_.begin() + static_cast<std::ptrdiff_t>(next_));
  return out;
}

FUSOR_RUNTIME std::size_t profile_report::record(const std::string& name, double seconds, double bytes) {
  std::size_t k = 0;
  while (k < kernels_.size() && kernels_[k].name != name) ++k;
  if (k == kernels_.size()) kernels_.push_back({name, 0, 0, 0});
  auto& stats = kernels_[k];
  ++stats.calls;
  stats.seconds += seconds;
  stats.bytes += bytes;
  return k;
}

FUSOR_RUNTIME void profile_report::record(const std::string& name, std::size_t step,
                                          std::chrono::steady_clock::time_point start, double seconds, double bytes) {
  const std::size_t k = record(name, seconds, bytes);
  if (events_.empty()) epoch_ = start;
  const trace_event e{k, step, calls_ == 0 ? 0 : calls_ - 1,
                      std::chrono::duration<double>(start - epoch_).count(), seconds, bytes};
  if (events_.size() < trace_capacity) {
    events_.push_back(e);
  } else {  // full: the oldest gives way
    events_[next_] = e;
    next_ = (next_ + 1) % trace_capacity;
  }
}

FUSOR_RUNTIME void profile_report::clear() noexcept {
  kernels_.clear();
  events_.clear();
  next_ = 0;
  calls_ = 0;
}

FUSOR_RUNTIME std::size_t profile_report::take(std::string_view rest, std::size_t width) noexcept {
  if (rest.size() <= width) return rest.size();
  for (std::size_t i = width; i > width / 2; --i)
    if (rest[i] == ' ') return i;
  return width;
}

FUSOR_RUNTIME void profile_report::append_padded(std::string& out, std::string_view text, std::size_t width) {
  out += text;
  if (text.size() < width) out.append(width - text.size(), ' ');
}

}  // namespace fusor
