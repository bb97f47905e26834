// fusor/io/npy.hpp — one shared variable to and from a NumPy .npy file.
//
//   fusor::save(W, "W.npy");                                  // numpy.load reads it
//   auto W2 = fusor::load<xt::xarray<float>>("W.npy");        // named "W"
//   fusor::load_into(W, "W.npy");                             // set_value from the file
//   fusor::npy_data raw = fusor::read_npy("W.npy");           // dtype, shape, bytes
//
// A .npy header has no room for a name (numpy rejects extra keys), so load()
// names the variable after the file's stem unless options.name says otherwise.
// Loading validates everything it reads (see npy_format.hpp) and then applies
// set_value's rules; a refused load changes nothing.
#pragma once

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <memory>
#include <string>
#include <system_error>
#include <type_traits>
#include <utility>
#include <vector>

#include <xtensor/xarray.hpp>

#include "fusor/core/tags.hpp"
#include "fusor/io/npy_format.hpp"
#include "fusor/memory/array.hpp"
#include "fusor/shared.hpp"

namespace fusor {

namespace detail {

inline std::string quoted(const std::filesystem::path& file) { return "'" + file.string() + "'"; }

/// Calls f(std::type_identity<E>{}) with E the C++ element type of `d`.
template <class F>
decltype(auto) visit_element(dtype d, F&& f) {
  switch (d) {
    case dtype::bool_: return f(std::type_identity<bool>{});
    case dtype::int8: return f(std::type_identity<std::int8_t>{});
    case dtype::uint8: return f(std::type_identity<std::uint8_t>{});
    case dtype::int16: return f(std::type_identity<std::int16_t>{});
    case dtype::uint16: return f(std::type_identity<std::uint16_t>{});
    case dtype::int32: return f(std::type_identity<std::int32_t>{});
    case dtype::uint32: return f(std::type_identity<std::uint32_t>{});
    case dtype::int64: return f(std::type_identity<std::int64_t>{});
    case dtype::uint64: return f(std::type_identity<std::uint64_t>{});
    case dtype::float32: return f(std::type_identity<float>{});
    case dtype::float64: return f(std::type_identity<double>{});
  }
  throw value_error("fusor: invalid dtype value " + std::to_string(static_cast<int>(d)));
}

/// Converts `n` elements of type Src held as bytes into `dst`. Bytes are read
/// with memcpy: a std::byte buffer holds no Src objects to point at.
template <element E, element Src>
void convert_bytes(const std::byte* src, std::size_t n, E* dst) noexcept {
  if constexpr (std::is_same_v<E, Src>) {
    if (n) std::memcpy(static_cast<void*>(dst), src, n * sizeof(E));
  } else {
    for (std::size_t i = 0; i < n; ++i) {
      Src v;
      std::memcpy(&v, src + i * sizeof(Src), sizeof(Src));
      dst[i] = convert_element<E>(v);
    }
  }
}

/// Rethrows fusor's value errors with `prefix` (which names the file) in front,
/// keeping their type, so a caller can still catch dtype_error, rank_error...
template <class F>
decltype(auto) with_context(const std::string& prefix, F&& f) {
  try {
    return f();
  } catch (const dtype_error& e) {
    throw dtype_error(prefix + e.what());
  } catch (const rank_error& e) {
    throw rank_error(prefix + e.what());
  } catch (const shape_error& e) {
    throw shape_error(prefix + e.what());
  } catch (const value_error& e) {
    throw value_error(prefix + e.what());
  }
}

/// The element storage of a tensor variable, readable on the host. get_value
/// (borrow) is a view of host storage, or a host copy for device storage
/// (docs/memory-model.md, R16); either way it keeps the bytes alive while we
/// write them.
template <class T>
struct host_snapshot {
  borrowed<T> view;
  const element_type_of<T>* data;
  dims shape;

  explicit host_snapshot(const shared<T>& s) : view(s.get_value(borrow)), data(view.data()), shape() {
    if constexpr (rank_of<T> != 0) shape = view.shape();
  }
  std::size_t bytes() const noexcept { return shape.elements() * sizeof(element_type_of<T>); }
};

/// Checks that elements of dtype `from` may be stored as E under `policy`
/// (fusor::check_cast: the dtype rule, not the exact-value rule, since even a
/// 0-d array in a file is an array, not a C++ scalar); dtype_error naming `who`
/// after `prefix` otherwise. Templated on E alone, so that the dispatch over
/// the file's dtype is instantiated once per element type, not once per T.
template <element E>
void check_storable(dtype from, std::size_t n, const std::string& who, cast_policy policy,
                    const std::string& prefix) {
  if (from == dtype_of<E>) return;
  with_context(prefix, [&] {
    visit_element(from, [&]<class Src>(std::type_identity<Src>) { check_cast<E, Src>(who, nullptr, n, false, policy); });
  });
}

/// Converts the file's elements into `dst` (numpy's astype where dtypes differ).
template <element E>
void convert_into(const npy_data& d, E* dst) {
  visit_element(d.type, [&]<class Src>(std::type_identity<Src>) {
    convert_bytes<E, Src>(d.bytes.data(), d.shape.elements(), dst);
  });
}

/// Checks, with set_value's rules, that `d` may become the value of `s`:
/// the rank is the variable's, broadcastable axes have length 1, and the
/// file's dtype is storable under the variable's strict / allow_downcast.
/// Then converts it into fresh storage in the variable's memory space. The
/// variable is not touched, so several loads can all be prepared before any
/// is installed.
template <class T>
array<element_type_of<T>> prepare_value(const shared<T>& s, const npy_data& d, const std::string& prefix) {
  using E = element_type_of<T>;
  const auto& record = *s.record();
  if constexpr (rank_of<T> == dynamic_rank)
    if (s.rank() == 0 && d.shape.rank() != 0)
      throw rank_error(detail::fixed_rank_zero_message(prefix + record.describe(), d.shape));
  require_shape([&] { return prefix + record.describe(); }, s.rank(), record.broadcastable_mask(), d.shape, d.type);
  check_storable<E>(d.type, d.shape.elements(), record.describe(), cast_policy{s.strict(), s.allow_downcast()},
                    prefix);
  auto out = array<E>::allocate(d.shape, s.space());
  convert_into<E>(d, out.mutable_data());
  return out;
}

/// How messages name a variable that is being created.
inline std::string describe_new(const std::string& name) {
  return name.empty() ? std::string("unnamed shared variable") : "shared variable '" + name + "'";
}

/// Builds a new shared<T> from `d` with the construction rules: T's static
/// rank, check_cast under the options' strict / allow_downcast, convert.
template <class T>
shared<T> make_shared_from(npy_data d, shared_options options, const std::string& prefix) {
  using E = element_type_of<T>;
  if constexpr (rank_of<T> != dynamic_rank)
    if (d.shape.rank() != static_cast<std::size_t>(rank_of<T>))
      throw rank_error(prefix + describe_new(options.name) + " has rank " + std::to_string(rank_of<T>) +
                       " (fixed by its C++ type), but the file holds an array of shape " + d.shape.str());
  check_storable<E>(d.type, d.shape.elements(), describe_new(options.name),
                    cast_policy{options.strict, options.allow_downcast.value_or(false)}, prefix);
  xt::xarray<E> x(typename xt::xarray<E>::shape_type(d.shape.begin(), d.shape.end()));
  convert_into<E>(d, x.data());
  d.bytes = {};  // the file's bytes are no longer needed: lower the peak
  return with_context(prefix, [&] {
    if constexpr (std::is_same_v<T, xt::xarray<E>>) {
      return shared<T>(std::move(x), std::move(options));  // adopted, no copy
    } else {
      T value = shared_constructor<T>::make(d.shape, x.data());
      return shared<T>(std::move(value), std::move(options));
    }
  });
}

struct file_closer {
  void operator()(std::FILE* f) const noexcept { std::fclose(f); }
};
using file_handle = std::unique_ptr<std::FILE, file_closer>;

/// A regular file as an npy::read source.
struct file_source {
  static constexpr bool size_is_exact = true;
  std::FILE* file;
  const std::string& where;
  std::size_t read(std::byte* dst, std::size_t n) {
    const std::size_t got = std::fread(dst, 1, n, file);
    if (got < n && std::ferror(file)) npy::fail(where, std::string("read error: ") + std::strerror(errno));
    return got;
  }
};

/// Opens a regular file for reading and returns its size; io_error otherwise.
inline file_handle open_for_reading(const std::filesystem::path& file, std::uint64_t& size) {
  const std::string where = quoted(file);
  std::error_code ec;
  const auto status = std::filesystem::status(file, ec);
  if (ec || !std::filesystem::exists(status))
    npy::fail(where, ec ? ec.message() : std::string("no such file"));
  if (!std::filesystem::is_regular_file(status)) npy::fail(where, "not a regular file");
  size = std::filesystem::file_size(file, ec);
  if (ec) npy::fail(where, ec.message());
  file_handle f(std::fopen(file.c_str(), "rb"));
  if (!f) npy::fail(where, std::strerror(errno));
  return f;
}

/// Writes `header` then `n` elements of `item` bytes at `data` (native order)
/// to `file`, as little-endian.
inline void write_npy_file(const std::filesystem::path& file, const std::vector<std::byte>& header,
                           const std::byte* data, std::size_t n, std::size_t item) {
  file_handle f(std::fopen(file.c_str(), "wb"));
  if (!f) throw io_error("fusor: cannot write " + quoted(file) + ": " + std::strerror(errno));
  // A file cut short by a failed write is removed rather than left looking
  // like an array (loading it would fail anyway, on its size).
  auto fail = [&](const char* what) {
    const std::string reason = std::strerror(errno);
    f.reset();
    std::error_code ignored;
    std::filesystem::remove(file, ignored);
    throw io_error("fusor: cannot write " + quoted(file) + ": " + what + ": " + reason);
  };
  if (std::fwrite(header.data(), 1, header.size(), f.get()) != header.size()) fail("write error");
  const std::size_t bytes = n * item;
  if constexpr (std::endian::native == std::endian::little) {
    if (bytes && std::fwrite(data, 1, bytes, f.get()) != bytes) fail("write error");
  } else {
    // Swap a block at a time, so that saving never doubles the memory used.
    std::vector<std::byte> block;
    const std::size_t per_block = std::max<std::size_t>(1, (std::size_t{1} << 20) / item);
    for (std::size_t i = 0; i < n; i += per_block) {
      const std::size_t k = std::min(per_block, n - i);
      block.assign(data + i * item, data + (i + k) * item);
      npy::swap_bytes(block.data(), k, item);
      if (std::fwrite(block.data(), 1, block.size(), f.get()) != block.size()) fail("write error");
    }
  }
  if (std::fflush(f.get()) != 0) fail("write error");
  if (std::fclose(f.release()) != 0) fail("write error");  // f is empty now: fail() only removes
}

template <class T>
constexpr bool check_saveable() {
  static_assert(tensor_shareable<T>,
                "fusor::save / fusor::load: only tensor shared variables (made from xt::xarray<E>, "
                "xt::xtensor<E, N>, std::vector<E>, an arithmetic value or a registered tensor type) have a "
                "NumPy representation; a generic shared variable holds an arbitrary C++ object and cannot be "
                "stored in .npy or .npz files");
  return tensor_shareable<T>;
}

}  // namespace detail

/// Reads a .npy file: its dtype, shape, and elements (C order, native byte
/// order). Versions 1.0, 2.0 and 3.0, either byte order, C or Fortran order.
/// Throws io_error, naming the file, for anything malformed.
inline npy_data read_npy(const std::filesystem::path& file) {
  std::uint64_t size = 0;
  auto f = detail::open_for_reading(file, size);
  const std::string where = detail::quoted(file);
  detail::file_source src{f.get(), where};
  return npy::read(src, size, where);
}

/// Saves a tensor shared variable to `file` as .npy (format 1.0, C order,
/// little-endian), readable by numpy.load. The variable's name is not stored.
template <class T>
void save(const shared<T>& s, const std::filesystem::path& file) {
  if constexpr (detail::check_saveable<T>()) {
    using E = element_type_of<T>;
    const detail::host_snapshot<T> snap(s);
    detail::write_npy_file(file, npy::encode_header(dtype_of<E>, snap.shape),
                           reinterpret_cast<const std::byte*>(snap.data), snap.shape.elements(), sizeof(E));
  }
}

/// A new shared variable holding the array in `file`, named after the file's
/// stem unless options.name is set. The file's dtype must be storable as T's
/// element type under options.strict / options.allow_downcast (as when
/// constructing from a value of that dtype); a T of static rank needs a file
/// of that rank.
template <class T>
shared<T> load(const std::filesystem::path& file, shared_options options = {}) {
  if constexpr (detail::check_saveable<T>()) {
    npy_data d = read_npy(file);
    if (options.name.empty()) options.name = file.stem().string();
    return detail::make_shared_from<T>(std::move(d), std::move(options),
                                       "fusor: loading " + detail::quoted(file) + ": ");
  } else {
    throw value_error("unreachable: rejected at compile time");
  }
}

/// set_value from a .npy file: rank, broadcastable axes and dtype are checked
/// with set_value's rules before anything changes; a refused load leaves the
/// variable's value and buffer as they were.
template <class T>
void load_into(shared<T>& s, const std::filesystem::path& file) {
  if constexpr (detail::check_saveable<T>()) {
    const npy_data d = read_npy(file);
    auto value = detail::prepare_value(s, d, "fusor: loading " + detail::quoted(file) + ": ");
    s.record()->install(std::move(value));  // noexcept: nothing can fail after validation
  }
}

}  // namespace fusor
