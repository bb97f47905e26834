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

}  // namespace fusor
