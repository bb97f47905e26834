// fusor/io/npy_format.hpp — the NumPy .npy format on memory buffers and byte
// streams: the header dict, dtype descr strings, shapes, byte order and
// Fortran order. No file or zip access here (see npy.hpp and npz.hpp).
//
// Format: https://numpy.org/doc/stable/reference/generated/numpy.lib.format.html
//   "\x93NUMPY" | major | minor | header length (2 bytes LE in 1.0, 4 in 2.0/3.0)
//   | "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }" padded with
//   spaces and a final '\n' | the elements.
//
// Everything read here is untrusted: every length is checked against the bytes
// actually available before it is used, nothing is allocated for data that is
// not there, and every refusal is a fusor::io_error naming where the bytes came
// from (`where`: "'/path/a.npy'", "entry 'W.npy' of '/path/b.npz'").
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fusor/core/config.hpp"
#include "fusor/core/dims.hpp"
#include "fusor/core/dtype.hpp"
#include "fusor/core/errors.hpp"

namespace fusor {

// fusor's bool elements are written and read as numpy's one-byte '|b1'.
static_assert(sizeof(bool) == 1, "fusor's .npy support needs a one-byte bool");

/// An array as read from a .npy file (or a .npz entry), before it becomes a
/// shared variable: its dtype, shape and elements in C order, native byte
/// order (bools are normalised to 0/1).
struct npy_data {
  dtype type = dtype::float64;
  dims shape{};
  std::vector<std::byte> bytes{};
};

namespace npy {

/// "\x93NUMPY", the first six bytes of every .npy file.
inline constexpr std::array<std::byte, 6> magic{std::byte{0x93}, std::byte{'N'}, std::byte{'U'},
                                                std::byte{'M'}, std::byte{'P'}, std::byte{'Y'}};

/// Longest header accepted. fusor's own headers are under 300 bytes (rank <= 8);
/// numpy refuses headers over 10000 bytes by default when loading untrusted
/// files. The limit keeps a hostile length from costing memory.
inline constexpr std::size_t max_header_bytes = std::size_t{1} << 20;

/// Data is read in steps of this size when the source's size is only a claim
/// (a zip entry's declared size), so memory grows only as bytes really arrive.
inline constexpr std::size_t read_chunk_bytes = std::size_t{1} << 24;

/// What a .npy header says.
struct header {
  dtype type = dtype::float64;
  std::endian byte_order = std::endian::little;
  bool fortran_order = false;
  dims shape{};
  /// shape.elements() * size_of(type), checked for overflow.
  std::uint64_t data_bytes = 0;
};

/// The message every refusal carries: where the bytes came from and what is wrong.
[[noreturn]] inline void fail(const std::string& where, const std::string& what) {
  throw io_error("fusor: cannot read " + where + ": " + what);
}

// ------------------------------------------------------------------ descr

/// numpy's `dtype.str` for a dtype, as fusor writes it: little-endian ('<f4'),
/// and '|' (byte order not applicable) for one-byte types ('|b1', '|i1', '|u1').
inline std::string descr(dtype d) {
  char kind = 'f';
  switch (kind_of(d)) {
    case dtype_kind::boolean: kind = 'b'; break;
    case dtype_kind::signed_int: kind = 'i'; break;
    case dtype_kind::unsigned_int: kind = 'u'; break;
    case dtype_kind::floating: kind = 'f'; break;
  }
  const std::size_t n = size_of(d);
  return std::string(1, n == 1 ? '|' : '<') + kind + std::to_string(n);
}

/// A parsed descr string.
struct parsed_descr {
  dtype type;
  std::endian byte_order;
};

/// Parses a typestr descr ('<f4', '>i8', '|b1', 'u2', '=f8'). Returns false for
/// anything fusor cannot hold ('<c16', '<U3', '|O', '<f2', '|V8', ...).
inline bool parse_descr(std::string_view s, parsed_descr& out) noexcept {
  std::endian order = std::endian::native;
  if (!s.empty() && (s[0] == '<' || s[0] == '>' || s[0] == '|' || s[0] == '=')) {
    // '|' (not applicable) and '=' (native) both mean "as the machine is".
    if (s[0] == '<') order = std::endian::little;
    else if (s[0] == '>') order = std::endian::big;
    s.remove_prefix(1);
  }
  if (s.size() != 2) return false;
  const char kind = s[0], size = s[1];
  dtype d;
  switch (kind) {
    case 'b':
      if (size != '1') return false;
      d = dtype::bool_;
      break;
    case 'i':
    case 'u': {
      const bool is_signed = kind == 'i';
      switch (size) {
        case '1': d = is_signed ? dtype::int8 : dtype::uint8; break;
        case '2': d = is_signed ? dtype::int16 : dtype::uint16; break;
        case '4': d = is_signed ? dtype::int32 : dtype::uint32; break;
        case '8': d = is_signed ? dtype::int64 : dtype::uint64; break;
        default: return false;
      }
      break;
    }
    case 'f':
      if (size == '4') d = dtype::float32;
      else if (size == '8') d = dtype::float64;
      else return false;
      break;
    default: return false;
  }
  out = {d, order};
  return true;
}

// ------------------------------------------------------------------ header dict

namespace detail {

/// Printable excerpt of untrusted text for a message: at most `max` characters
/// from `pos`, with control and non-ASCII bytes escaped.
inline std::string excerpt(std::string_view text, std::size_t pos, std::size_t max = 32) {
  static constexpr char hex[] = "0123456789abcdef";
  std::string out;
  const std::size_t end = std::min(text.size(), pos + max);
  for (std::size_t i = std::min(pos, text.size()); i < end; ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += static_cast<char>(c);
    } else {
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  if (end < text.size()) out += "...";
  return out;
}

/// A Python literal value as it may appear in a .npy header.
struct py_value {
  enum class kind : unsigned char { string, integer, boolean, none, tuple, list };
  kind k = kind::none;
  std::string str{};             // string
  bool negative = false;         // integer
  bool too_big = false;          // integer: magnitude >= 2^64
  std::uint64_t magnitude = 0;   // integer
  bool flag = false;             // boolean
  std::vector<py_value> items{}; // tuple, list
};

inline const char* kind_name(py_value::kind k) noexcept {
  switch (k) {
    case py_value::kind::string: return "a string";
    case py_value::kind::integer: return "an integer";
    case py_value::kind::boolean: return "a boolean";
    case py_value::kind::none: return "None";
    case py_value::kind::tuple: return "a tuple";
    case py_value::kind::list: return "a list";
  }
  return "?";
}

/// A recursive-descent parser for the subset of Python literals numpy writes
/// in headers (ast.literal_eval's strings, integers, True/False/None, tuples,
/// lists). Depth is bounded so that "((((((..." cannot exhaust the stack.
class py_literal_parser {
 public:
  static constexpr int max_depth = 16;

  py_literal_parser(std::string_view text, const std::string& where) : text_(text), where_(where) {}

  /// Parses "{key: value, ...}" followed by nothing but whitespace.
  std::vector<std::pair<std::string, py_value>> dict() {
    std::vector<std::pair<std::string, py_value>> entries;
    skip_ws();
    expect('{', "the header must start with '{'");
    skip_ws();
    while (!at('}')) {
      if (pos_ >= text_.size()) bad("unterminated dict (no closing '}')");
      if (!at('\'') && !at('"')) bad("expected a quoted key");
      std::string key = string_literal();
      skip_ws();
      expect(':', "expected ':' after key '" + excerpt(key, 0) + "'");
      skip_ws();
      entries.emplace_back(std::move(key), value(1));
      skip_ws();
      if (at(',')) {
        ++pos_;
        skip_ws();
      } else if (!at('}')) {
        bad("expected ',' or '}' after the value of key '" + excerpt(entries.back().first, 0) + "'");
      }
    }
    ++pos_;
    skip_ws();
    if (pos_ != text_.size()) bad("unexpected text after the closing '}'");
    return entries;
  }

 private:
  bool at(char c) const noexcept { return pos_ < text_.size() && text_[pos_] == c; }

  void skip_ws() noexcept {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r' ||
            text_[pos_] == '\f' || text_[pos_] == '\v'))
      ++pos_;
  }

  [[noreturn]] void bad(const std::string& what) const {
    fail(where_, "the header is not a valid Python dict literal: " + what + " at offset " + std::to_string(pos_) +
                     (pos_ < text_.size() ? " (near \"" + excerpt(text_, pos_) + "\")" : " (at its end)"));
  }

  void expect(char c, const std::string& what) {
    if (!at(c)) bad(what);
    ++pos_;
  }

  bool keyword(std::string_view word) noexcept {
    if (text_.substr(pos_, word.size()) != word) return false;
    const std::size_t after = pos_ + word.size();
    if (after < text_.size()) {
      const char c = text_[after];
      if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_') return false;
    }
    pos_ = after;
    return true;
  }

  std::string string_literal() {
    const char quote = text_[pos_++];
    std::string s;
    while (true) {
      if (pos_ >= text_.size()) bad("unterminated string");
      const char c = text_[pos_];
      if (c == quote) {
        ++pos_;
        return s;
      }
      if (c == '\n' || c == '\r') bad("line break inside a string");
      if (c == '\\') {
        // Only the escapes that can stand for themselves; no supported key
        // or descr contains any other.
        if (pos_ + 1 >= text_.size()) bad("unterminated string");
        const char e = text_[pos_ + 1];
        if (e != '\\' && e != '\'' && e != '"') bad("unsupported escape sequence in a string");
        s += e;
        pos_ += 2;
        continue;
      }
      s += c;
      ++pos_;
    }
  }

  py_value integer_literal() {
    py_value v;
    v.k = py_value::kind::integer;
    if (at('-') || at('+')) {
      v.negative = at('-');
      ++pos_;
      skip_ws();
    }
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') bad("expected a digit");
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const auto digit = static_cast<std::uint64_t>(text_[pos_] - '0');
      if (v.magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) v.too_big = true;
      else v.magnitude = v.magnitude * 10 + digit;
      ++pos_;
    }
    if (at('L')) ++pos_;  // Python 2 longs, in headers numpy wrote under Python 2
    if (v.negative && v.magnitude == 0) v.negative = false;
    return v;
  }

  /// "(a, b)", "(a,)", "()", "[a, b]"; "(a)" is just a.
  py_value sequence(char close, int depth) {
    py_value v;
    v.k = close == ')' ? py_value::kind::tuple : py_value::kind::list;
    ++pos_;
    skip_ws();
    bool comma_seen = false;
    while (!at(close)) {
      if (pos_ >= text_.size()) bad(std::string("unterminated ") + (close == ')' ? "tuple" : "list"));
      v.items.push_back(value(depth + 1));
      skip_ws();
      if (at(',')) {
        ++pos_;
        comma_seen = true;
        skip_ws();
      } else if (!at(close)) {
        bad(std::string("expected ',' or '") + close + "'");
      }
    }
    ++pos_;
    if (close == ')' && v.items.size() == 1 && !comma_seen) return std::move(v.items.front());
    return v;
  }

  py_value value(int depth) {
    if (depth > max_depth) bad("values nested more than " + std::to_string(max_depth) + " deep");
    if (pos_ >= text_.size()) bad("expected a value");
    const char c = text_[pos_];
    if (c == '\'' || c == '"') {
      py_value v;
      v.k = py_value::kind::string;
      v.str = string_literal();
      return v;
    }
    if (c == '(') return sequence(')', depth);
    if (c == '[') return sequence(']', depth);
    if (c == '-' || c == '+' || (c >= '0' && c <= '9')) return integer_literal();
    py_value v;
    if (keyword("True")) {
      v.k = py_value::kind::boolean;
      v.flag = true;
      return v;
    }
    if (keyword("False")) {
      v.k = py_value::kind::boolean;
      return v;
    }
    if (keyword("None")) return v;
    bad("unsupported value");
  }

  std::string_view text_;
  const std::string& where_;
  std::size_t pos_ = 0;
};

/// A shape or value as Python would print it, for messages.
inline std::string show(const py_value& v, int depth = 0) {
  switch (v.k) {
    case py_value::kind::string: return "'" + excerpt(v.str, 0) + "'";
    case py_value::kind::integer:
      if (v.too_big) return std::string(v.negative ? "-" : "") + "<integer over 2^64>";
      return (v.negative ? "-" : "") + std::to_string(v.magnitude);
    case py_value::kind::boolean: return v.flag ? "True" : "False";
    case py_value::kind::none: return "None";
    case py_value::kind::tuple:
    case py_value::kind::list: {
      if (depth > 2) return v.k == py_value::kind::tuple ? "(...)" : "[...]";
      std::string s(1, v.k == py_value::kind::tuple ? '(' : '[');
      for (std::size_t i = 0; i < v.items.size(); ++i) {
        if (i == 8) {
          s += ", ...";
          break;
        }
        if (i) s += ", ";
        s += show(v.items[i], depth + 1);
      }
      if (v.k == py_value::kind::tuple && v.items.size() == 1) s += ",";
      return s + (v.k == py_value::kind::tuple ? ')' : ']');
    }
  }
  return "?";
}

}  // namespace detail

/// Parses and validates the header dict (the text between the length field and
/// the data). Checks the keys, the descr, fortran_order, the shape (a tuple of
/// non-negative integers, rank <= FUSOR_MAX_RANK) and that the data size
/// neither overflows nor exceeds what a C++ object can hold.
inline header parse_header(std::string_view text, const std::string& where) {
  const auto entries = detail::py_literal_parser(text, where).dict();
  const detail::py_value* descr_v = nullptr;
  const detail::py_value* fortran_v = nullptr;
  const detail::py_value* shape_v = nullptr;
  for (const auto& [key, value] : entries) {
    const detail::py_value** slot = key == "descr"           ? &descr_v
                                    : key == "fortran_order" ? &fortran_v
                                    : key == "shape"         ? &shape_v
                                                             : nullptr;
    if (!slot)
      fail(where, "unexpected key '" + detail::excerpt(key, 0) +
                      "' in the header (a .npy header has exactly 'descr', 'fortran_order' and 'shape')");
    if (*slot) fail(where, "the header has key '" + key + "' twice");
    *slot = &value;
  }
  const std::pair<const detail::py_value*, const char*> required[] = {
      {descr_v, "descr"}, {fortran_v, "fortran_order"}, {shape_v, "shape"}};
  for (const auto& [slot, key] : required)
    if (!slot) fail(where, std::string("the header has no '") + key + "' key");

  header h;
  if (descr_v->k != detail::py_value::kind::string)
    fail(where, "unsupported dtype " + detail::show(*descr_v) +
                    ": fusor reads plain dtypes only (bool, int8..int64, uint8..uint64, float32, float64), "
                    "not structured ones");
  parsed_descr pd{};
  if (!parse_descr(descr_v->str, pd))
    fail(where, "unsupported dtype '" + detail::excerpt(descr_v->str, 0) +
                    "': fusor reads bool ('|b1'), int8..int64 ('<i1'..'<i8'), uint8..uint64 ('<u1'..'<u8'), "
                    "float32 ('<f4') and float64 ('<f8'), in either byte order");
  h.type = pd.type;
  h.byte_order = pd.byte_order;

  if (fortran_v->k != detail::py_value::kind::boolean)
    fail(where, "'fortran_order' must be True or False, got " + detail::show(*fortran_v));
  h.fortran_order = fortran_v->flag;

  if (shape_v->k != detail::py_value::kind::tuple)
    fail(where, "'shape' must be a tuple of integers, got " + detail::show(*shape_v));
  if (shape_v->items.size() > max_rank)
    fail(where, "shape " + detail::show(*shape_v) + " has rank " + std::to_string(shape_v->items.size()) +
                    ", above FUSOR_MAX_RANK (" + std::to_string(max_rank) + ")");
  // numpy's own limit: the product of the non-zero extents, times the item
  // size, must fit a signed 64-bit count of bytes. Checking the non-zero
  // extents too keeps strides finite for empty arrays such as (0, 2**62, 4).
  constexpr std::uint64_t limit = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  const std::uint64_t item = size_of(h.type);
  std::uint64_t nonzero_bytes = item;
  bool empty = false;
  for (const auto& e : shape_v->items) {
    if (e.k != detail::py_value::kind::integer)
      fail(where, "'shape' must be a tuple of integers, got " + detail::show(*shape_v));
    if (e.negative) fail(where, "shape " + detail::show(*shape_v) + " has a negative extent");
    if (e.too_big || e.magnitude > limit || (e.magnitude != 0 && nonzero_bytes > limit / e.magnitude))
      fail(where, "shape " + detail::show(*shape_v) + " of " + std::string(name(h.type)) +
                      " is too large: its size in bytes overflows a 64-bit integer");
    if (e.magnitude == 0) empty = true;
    else nonzero_bytes *= e.magnitude;
    h.shape.push_back(static_cast<std::size_t>(e.magnitude));
  }
  if constexpr (sizeof(std::size_t) < sizeof(std::uint64_t))
    if (nonzero_bytes > std::numeric_limits<std::size_t>::max())
      fail(where, "shape " + h.shape.str() + " is too large for this machine");
  h.data_bytes = empty ? 0 : nonzero_bytes;
  return h;
}

// ------------------------------------------------------------------ writing

/// The header dict as numpy writes it, padded with spaces and ended by '\n' so
/// that the data starts at a multiple of 64 bytes (format version 1.0).
inline std::string header_text(dtype d, const dims& shape) {
  std::string text = "{'descr': '" + descr(d) + "', 'fortran_order': False, 'shape': " + shape.str() + ", }";
  constexpr std::size_t preamble = 10;  // magic, version, 2-byte length
  const std::size_t unpadded = preamble + text.size() + 1;
  text.append((64 - unpadded % 64) % 64, ' ');
  text += '\n';
  return text;
}

/// Magic, version 1.0, length and header: everything before the data.
inline std::vector<std::byte> encode_header(dtype d, const dims& shape) {
  const std::string text = header_text(d, shape);
  // Rank <= FUSOR_MAX_RANK keeps the text far below 1.0's 65535-byte limit.
  std::vector<std::byte> out(magic.begin(), magic.end());
  out.push_back(std::byte{1});
  out.push_back(std::byte{0});
  out.push_back(static_cast<std::byte>(text.size() & 0xff));
  out.push_back(static_cast<std::byte>(text.size() >> 8));
  for (char c : text) out.push_back(static_cast<std::byte>(c));
  return out;
}

/// Reverses the bytes of each of `n` elements of `item` bytes, in place.
inline void swap_bytes(std::byte* p, std::size_t n, std::size_t item) noexcept {
  if (item < 2) return;
  for (std::size_t i = 0; i < n; ++i, p += item) std::reverse(p, p + item);
}

/// A whole .npy file for `data` (C order, native byte order), little-endian.
inline std::vector<std::byte> encode(const npy_data& data) {
  const std::size_t item = size_of(data.type);
  if (data.bytes.size() != data.shape.elements() * item)
    throw value_error("fusor: npy::encode: " + std::to_string(data.bytes.size()) + " bytes do not hold shape " +
                      data.shape.str() + " of " + std::string(name(data.type)) + " (" +
                      std::to_string(data.shape.elements() * item) + " bytes)");
  std::vector<std::byte> out = encode_header(data.type, data.shape);
  const std::size_t start = out.size();
  out.insert(out.end(), data.bytes.begin(), data.bytes.end());
  if constexpr (std::endian::native == std::endian::big)
    swap_bytes(out.data() + start, data.shape.elements(), item);
  return out;
}

// ------------------------------------------------------------------ reading

/// Brings raw element bytes to what npy_data promises: native byte order,
/// bools as 0/1 (any other byte would be an invalid C++ bool), C order.
inline npy_data finish(const header& h, std::vector<std::byte> raw) {
  const std::size_t item = size_of(h.type);
  const std::size_t n = h.shape.elements();
  if (h.byte_order != std::endian::native) swap_bytes(raw.data(), n, item);
  if (h.type == dtype::bool_)
    for (auto& b : raw) b = b == std::byte{0} ? std::byte{0} : std::byte{1};
  if (h.fortran_order && h.shape.rank() > 1 && n > 0) {
    // Walk the C-order index like an odometer, tracking the element's offset
    // in the column-major source (axis 0 varies fastest there).
    const std::size_t r = h.shape.rank();
    std::array<std::size_t, max_rank> f_stride{}, index{};
    f_stride[0] = 1;
    for (std::size_t k = 1; k < r; ++k) f_stride[k] = f_stride[k - 1] * h.shape[k - 1];
    std::vector<std::byte> c_order(raw.size());
    std::size_t src = 0;
    for (std::size_t i = 0; i < n; ++i) {
      std::memcpy(c_order.data() + i * item, raw.data() + src * item, item);
      for (std::size_t k = r; k-- > 0;) {
        if (++index[k] < h.shape[k]) {
          src += f_stride[k];
          break;
        }
        src -= (h.shape[k] - 1) * f_stride[k];
        index[k] = 0;
      }
    }
    raw = std::move(c_order);
  }
  return npy_data{h.type, h.shape, std::move(raw)};
}

/// Reads into [dst, dst + n) until full or the source ends; returns the count.
template <class Source>
std::size_t read_full(Source& src, std::byte* dst, std::size_t n) {
  std::size_t done = 0;
  while (done < n) {
    const std::size_t got = src.read(dst + done, n - done);
    if (got == 0) break;
    done += got;
  }
  return done;
}

/// Reads a .npy file from `src`, which claims to hold `total` bytes.
///
/// Source: `std::size_t read(std::byte* dst, std::size_t n)` returns the bytes
/// read (0 only at the end) and throws io_error on a read failure;
/// `static constexpr bool size_is_exact`: whether `total` is known to be true
/// (a regular file's size) or only claimed (a zip entry's declared size), in
/// which case memory is grown only as data arrives.
template <class Source>
npy_data read(Source& src, std::uint64_t total, const std::string& where) {
  std::array<std::byte, 12> pre{};
  const std::size_t first = static_cast<std::size_t>(std::min<std::uint64_t>(total, 8));
  const std::size_t got = read_full(src, pre.data(), first);
  const std::size_t compared = std::min<std::size_t>(got, magic.size());
  if (!std::equal(pre.begin(), pre.begin() + compared, magic.begin())) {
    std::string seen;
    for (std::size_t i = 0; i < std::min<std::size_t>(got, 6); ++i)
      seen += detail::excerpt(std::string_view(reinterpret_cast<const char*>(&pre[i]), 1), 0);
    fail(where, "not a .npy file: it does not start with the magic string \"\\x93NUMPY\" (starts with \"" + seen +
                    "\")");
  }
  if (got < 8)
    fail(where, "truncated: " + std::to_string(got) + " bytes, shorter than the .npy preamble");
  const unsigned major = std::to_integer<unsigned>(pre[6]), minor = std::to_integer<unsigned>(pre[7]);
  if (major < 1 || major > 3 || minor != 0)
    fail(where, "unsupported .npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                    " (fusor reads 1.0, 2.0 and 3.0)");
  const std::size_t length_size = major == 1 ? 2 : 4;
  if (total < 8 + length_size || read_full(src, pre.data() + 8, length_size) != length_size)
    fail(where, "truncated inside the .npy preamble");
  std::uint64_t header_length = 0;
  for (std::size_t i = 0; i < length_size; ++i)
    header_length |= std::to_integer<std::uint64_t>(pre[8 + i]) << (8 * i);
  const std::uint64_t data_offset = 8 + length_size + header_length;
  if (data_offset > total)
    fail(where, "the header length (" + std::to_string(header_length) + " bytes) runs past the end of the data (" +
                    std::to_string(total) + " bytes in all)");
  if (header_length > max_header_bytes)
    fail(where, "the header is " + std::to_string(header_length) + " bytes long, over the limit of " +
                    std::to_string(max_header_bytes));
  std::string text(static_cast<std::size_t>(header_length), '\0');
  if (read_full(src, reinterpret_cast<std::byte*>(text.data()), text.size()) != text.size())
    fail(where, "truncated inside the header");
  const header h = parse_header(text, where);

  const std::uint64_t available = total - data_offset;
  if (available != h.data_bytes)
    fail(where, "the data size disagrees with the header: shape " + h.shape.str() + " of " +
                    std::string(name(h.type)) + " needs " + std::to_string(h.data_bytes) + " bytes, " +
                    (available < h.data_bytes ? "only " : "but ") + std::to_string(available) +
                    " follow the header");

  const auto want = static_cast<std::size_t>(h.data_bytes);
  std::vector<std::byte> raw;
  if constexpr (Source::size_is_exact) {
    raw.resize(want);
    if (read_full(src, raw.data(), want) != want) fail(where, "truncated: the file ended while reading its data");
  } else {
    std::size_t done = 0;
    while (done < want) {
      const std::size_t step = std::min(want - done, read_chunk_bytes);
      raw.resize(done + step);
      const std::size_t n = read_full(src, raw.data() + done, step);
      if (n != step)
        fail(where, "truncated: the header announces " + std::to_string(want) + " bytes of data, only " +
                        std::to_string(done + n) + " are there");
      done += step;
    }
  }
  // Reading past the end makes the source verify itself (libzip checks the
  // CRC and the size there) and catches data beyond the declared size.
  std::byte extra{};
  if (src.read(&extra, 1) != 0) fail(where, "more bytes follow the data than its declared size");
  return finish(h, std::move(raw));
}

namespace detail {
struct span_source {
  static constexpr bool size_is_exact = true;
  std::span<const std::byte> bytes;
  std::size_t pos = 0;
  std::size_t read(std::byte* dst, std::size_t n) noexcept {
    const std::size_t k = std::min(n, bytes.size() - pos);
    if (k) std::memcpy(dst, bytes.data() + pos, k);
    pos += k;
    return k;
  }
};
}  // namespace detail

/// Decodes a whole .npy file held in memory.
inline npy_data decode(std::span<const std::byte> file, const std::string& where = "a .npy buffer") {
  detail::span_source src{file};
  return read(src, file.size(), where);
}

}  // namespace npy
}  // namespace fusor
