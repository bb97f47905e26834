// fusor/io/npz.hpp — a named set of shared variables to and from a NumPy .npz
// file: a zip archive with one .npy entry per variable, named "<name>.npy",
// as numpy.savez writes it. Zip handling is libzip's.
//
//   fusor::save("model.npz", W, b);        // numpy.load("model.npz")["W"]
//   fusor::load("model.npz", W, b);        // each from the entry named after it
//   auto all = fusor::read_npz("model.npz");  // {"W": npy_data, "b": npy_data}
//   auto W = fusor::load<xt::xarray<float>>("model.npz", "W");  // a new variable, the entry's shape
//
// Reads what np.savez (stored) and np.savez_compressed (deflated) write.
// Loading several variables is all or nothing: every entry is read, validated
// and converted before the first variable changes.
#pragma once

#include <array>
#include <bit>
#include <concepts>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <system_error>
#include <tuple>
#include <utility>
#include <vector>

#include <zip.h>

#include "fusor/core/apply.hpp"
#include "fusor/io/npy.hpp"

namespace fusor {

namespace detail {

inline std::string libzip_error(int code) {
  zip_error_t e;
  zip_error_init_with_code(&e, code);
  std::string text = zip_error_strerror(&e);
  zip_error_fini(&e);
  return text;
}

/// Every variable stored in or loaded from a .npz needs a distinct, non-empty
/// name: the entry is found by it.
template <std::size_t N>
void check_npz_names(const std::array<const variable_base*, N>& vars, const std::string& action) {
  for (std::size_t i = 0; i < N; ++i) {
    const std::string& n = vars[i]->name();
    if (n.empty())
      throw value_error("fusor: " + action + ": " + vars[i]->describe() + " (argument " + std::to_string(i + 1) +
                        ") has no name; each variable in a .npz is stored as '<name>.npy', so give it one, e.g. "
                        "fusor::shared(v, \"W\")");
    if (n.find('\0') != std::string::npos)
      throw value_error("fusor: " + action + ": the name '" + npy::detail::excerpt(n, 0, 256) + "' (argument " +
                        std::to_string(i + 1) + ") contains a NUL character, which a zip entry name cannot hold");
    for (std::size_t j = 0; j < i; ++j)
      if (vars[j]->name() == n)
        throw value_error("fusor: " + action + ": arguments " + std::to_string(j + 1) + " and " +
                          std::to_string(i + 1) + " are both named '" + n +
                          "'; the variables of a .npz need distinct names");
  }
}

/// A .npz archive opened for reading, with its entry names checked once.
class npz_reader {
 public:
  explicit npz_reader(const std::filesystem::path& file) : quoted_(quoted(file)) {
    std::error_code ec;
    const auto status = std::filesystem::status(file, ec);
    if (ec || !std::filesystem::exists(status)) npy::fail(quoted_, ec ? ec.message() : std::string("no such file"));
    if (!std::filesystem::is_regular_file(status)) npy::fail(quoted_, "not a regular file");
    int code = 0;
    // ZIP_CHECKCONS: cross-check the central directory against the local
    // headers, as befits a file that may have been crafted.
    zip_.reset(zip_open(file.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &code));
    if (!zip_) {
      // With ZIP_CHECKCONS and no ZIP_EXCL, libzip reports ZIP_ER_EXISTS only
      // for a central directory that names two entries alike; say so plainly.
      if (code == ZIP_ER_EXISTS)
        npy::fail(quoted_, "not a valid .npz (zip) archive: two entries have the same name, so which one is "
                           "meant is ambiguous");
      npy::fail(quoted_, "not a valid .npz (zip) archive: " + libzip_error(code));
    }
    const zip_int64_t n = zip_get_num_entries(zip_.get(), 0);
    for (zip_int64_t i = 0; i < n; ++i) {
      const char* entry = zip_get_name(zip_.get(), static_cast<zip_uint64_t>(i), 0);
      if (!entry)
        npy::fail(quoted_, "cannot read the name of entry #" + std::to_string(i) + ": " + zip_strerror(zip_.get()));
      if (!index_.emplace(entry, static_cast<zip_uint64_t>(i)).second)
        npy::fail(quoted_, "the archive holds two entries named '" + npy::detail::excerpt(entry, 0, 256) +
                               "', so which one is meant is ambiguous");
    }
  }
  npz_reader(const npz_reader&) = delete;
  npz_reader& operator=(const npz_reader&) = delete;

  /// Entry names, in name order.
  const std::map<std::string, zip_uint64_t>& entries() const noexcept { return index_; }
  bool has(const std::string& entry) const { return index_.count(entry) != 0; }

  /// "'W.npy', 'b.npy'" — for messages about a missing entry.
  std::string entry_list() const {
    if (index_.empty()) return "the archive is empty";
    std::string s = "entries: ";
    std::size_t shown = 0;
    for (const auto& [name, i] : index_) {
      if (shown == 10) {
        s += ", ... (" + std::to_string(index_.size()) + " in all)";
        break;
      }
      s += (shown++ ? ", '" : "'") + npy::detail::excerpt(name, 0, 64) + "'";
    }
    return s;
  }

  std::string where(const std::string& entry) const {
    return "entry '" + npy::detail::excerpt(entry, 0, 256) + "' of " + quoted_;
  }

  /// Reads and validates one entry as a .npy array.
  npy_data read(const std::string& entry) const {
    const std::string at = where(entry);
    const auto found = index_.find(entry);
    if (found == index_.end()) npy::fail(quoted_, "it has no entry '" + entry + "' (" + entry_list() + ")");
    zip_stat_t st;
    zip_stat_init(&st);
    if (zip_stat_index(zip_.get(), found->second, 0, &st) != 0) npy::fail(at, zip_strerror(zip_.get()));
    if (!(st.valid & ZIP_STAT_SIZE)) npy::fail(at, "the archive does not record its size");
    std::unique_ptr<zip_file_t, file_closer> f(zip_fopen_index(zip_.get(), found->second, 0));
    if (!f) npy::fail(at, zip_strerror(zip_.get()));
    source src{f.get(), at};
    return npy::read(src, st.size, at);
  }

  const std::string& quoted_name() const noexcept { return quoted_; }

 private:
  struct file_closer {
    void operator()(zip_file_t* f) const noexcept { zip_fclose(f); }
  };
  /// One entry as an npy::read source. Its size is the archive's claim, so the
  /// data is read in chunks; libzip verifies the CRC when the end is reached.
  struct source {
    static constexpr bool size_is_exact = false;
    zip_file_t* file;
    const std::string& where;
    std::size_t read(std::byte* dst, std::size_t n) {
      const zip_int64_t got = zip_fread(file, dst, n);
      if (got < 0) npy::fail(where, std::string("corrupt entry: ") + zip_file_strerror(file));
      return static_cast<std::size_t>(got);
    }
  };

  /// Read-only: discarding writes nothing back. Owned from the moment it is
  /// opened, so that a constructor that throws afterwards (a bad entry name,
  /// an allocation) closes the archive and its file descriptor.
  struct archive_discarder {
    void operator()(zip_t* z) const noexcept { zip_discard(z); }
  };

  std::string quoted_;
  std::unique_ptr<zip_t, archive_discarder> zip_;
  std::map<std::string, zip_uint64_t> index_;
};

inline constexpr std::string_view npy_suffix = ".npy";

inline bool ends_with_npy(const std::string& s) noexcept {
  return s.size() >= npy_suffix.size() && s.compare(s.size() - npy_suffix.size(), npy_suffix.size(), npy_suffix) == 0;
}

/// An archive being written; discarded (the target left as it was) unless
/// close() succeeds. libzip writes to a temporary file and renames it.
class npz_writer {
 public:
  explicit npz_writer(const std::filesystem::path& file) : quoted_(quoted(file)) {
    int code = 0;
    zip_ = zip_open(file.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
    if (!zip_) throw io_error("fusor: cannot write " + quoted_ + ": " + libzip_error(code));
  }
  npz_writer(const npz_writer&) = delete;
  npz_writer& operator=(const npz_writer&) = delete;
  ~npz_writer() {
    if (zip_) zip_discard(zip_);
  }

  /// Adds "<name>.npy" made of `header` followed by `bytes` at `data`. The
  /// bytes are not copied: they must stay alive until close().
  void add(const std::string& name, const std::vector<std::byte>& header, const std::byte* data, std::size_t bytes) {
    zip_buffer_fragment_t parts[2] = {
        {reinterpret_cast<zip_uint8_t*>(const_cast<std::byte*>(header.data())), header.size()},
        {reinterpret_cast<zip_uint8_t*>(const_cast<std::byte*>(data)), bytes},
    };
    zip_source_t* src = zip_source_buffer_fragment(zip_, parts, bytes ? 2 : 1, 0);
    if (!src) fail("cannot add '" + name + ".npy'");
    const zip_int64_t index = zip_file_add(zip_, (name + ".npy").c_str(), src, ZIP_FL_ENC_GUESS);
    if (index < 0) {
      zip_source_free(src);
      fail("cannot add '" + name + ".npy'");
    }
    // Stored, as np.savez does: saving is then a copy, not a compression.
    if (zip_set_file_compression(zip_, static_cast<zip_uint64_t>(index), ZIP_CM_STORE, 0) != 0)
      fail("cannot add '" + name + ".npy'");
  }

  void close() {
    if (zip_close(zip_) != 0) fail("cannot write the archive");
    zip_ = nullptr;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw io_error("fusor: cannot write " + quoted_ + ": " + what + ": " + zip_strerror(zip_));
  }

  std::string quoted_;
  zip_t* zip_ = nullptr;
};

/// The bytes to store for one variable: on a little-endian host its storage
/// itself; on a big-endian one a byte-swapped copy.
template <class T>
struct npz_payload {
  host_snapshot<T> snap;
  std::vector<std::byte> header;
  std::vector<std::byte> swapped;

  explicit npz_payload(const shared<T>& s)
      : snap(s), header(npy::encode_header(dtype_of<element_type_of<T>>, snap.shape)) {
    if constexpr (std::endian::native == std::endian::big) {
      const auto* p = reinterpret_cast<const std::byte*>(snap.data);
      swapped.assign(p, p + snap.bytes());
      npy::swap_bytes(swapped.data(), snap.shape.elements(), sizeof(element_type_of<T>));
    }
  }
  const std::byte* data() const noexcept {
    if constexpr (std::endian::native == std::endian::big) return swapped.data();
    else return reinterpret_cast<const std::byte*>(snap.data);
  }
};

}  // namespace detail

/// Reads every entry of a .npz file; keys are the entry names without ".npy".
/// Every entry must be a valid .npy array (io_error naming the entry otherwise).
inline std::map<std::string, npy_data> read_npz(const std::filesystem::path& file) {
  const detail::npz_reader zip(file);
  std::map<std::string, npy_data> out;
  for (const auto& [entry, index] : zip.entries()) {
    if (!detail::ends_with_npy(entry))
      npy::fail(zip.where(entry), "not a .npy array: a .npz holds only entries named '<name>.npy'");
    out.emplace(entry.substr(0, entry.size() - detail::npy_suffix.size()), zip.read(entry));
  }
  return out;
}

/// Saves tensor shared variables to `file` as .npz (one stored "<name>.npy"
/// entry each), readable by numpy.load. Names must be non-empty and distinct
/// (value_error). The file is replaced only once the archive is complete.
template <class... T>
void save(const std::filesystem::path& file, const shared<T>&... vars) {
  static_assert(sizeof...(T) > 0, "fusor::save(file, vars...): pass at least one shared variable for the .npz");
  if constexpr ((detail::check_saveable<T>() && ...)) {
    detail::check_npz_names<sizeof...(T)>({vars.record().get()...},
                                          "cannot save " + detail::quoted(file));
    // Views keep every variable's storage alive until the archive is written.
    const std::tuple<detail::npz_payload<T>...> payloads(vars...);
    detail::npz_writer zip(file);
    fusor::detail::apply(
        [&](const auto&... p) {
          std::size_t i = 0;
          const std::array<const std::string*, sizeof...(T)> names{&vars.name()...};
          (zip.add(*names[i++], p.header, p.data(), p.snap.bytes()), ...);
        },
        payloads);
    zip.close();
  }
}

/// Loads each variable from the entry named "<its name>.npy" of `file`, with
/// set_value's rules (rank, broadcastable axes, dtype under the variable's
/// strict / allow_downcast). All entries are read, validated and converted
/// before any variable changes: on any error, none does. A missing entry is an
/// io_error naming the entry and the file.
template <class... T>
void load(const std::filesystem::path& file, shared<T>&... vars) {
  static_assert(sizeof...(T) > 0, "fusor::load(file, vars...): pass at least one shared variable to load");
  if constexpr ((detail::check_saveable<T>() && ...)) {
    detail::check_npz_names<sizeof...(T)>({vars.record().get()...}, "cannot load " + detail::quoted(file));
    const detail::npz_reader zip(file);
    auto entry_of = [&](const auto& v) {
      std::string entry = v.name() + ".npy";
      if (!zip.has(entry))
        throw io_error("fusor: cannot load " + v.record()->describe() + " from " + zip.quoted_name() +
                       ": it has no entry '" + npy::detail::excerpt(entry, 0, 256) + "' (" + zip.entry_list() + ")");
      return entry;
    };
    auto prepare = [&](const auto& v) {
      const std::string entry = entry_of(v);
      const npy_data d = zip.read(entry);
      return detail::prepare_value(v, d, "fusor: loading " + zip.where(entry) + ": ");
    };
    // Braced initialisation evaluates left to right: entries are read in
    // argument order, and the first problem is the one reported.
    auto values = std::tuple{prepare(vars)...};
    fusor::detail::apply([&](auto&... value) { (vars.record()->install(std::move(value)), ...); }, values);
  }
}

/// A new shared variable holding one entry of the .npz `file`, without a
/// variable to load into: `auto W = fusor::load<xt::xarray<double>>("m.npz",
/// "W");` takes the entry's shape and rank (T = xt::xarray<E>), or checks
/// them against T's static rank (xt::xtensor<E, N>, std::vector<E>, a
/// scalar: rank_error otherwise). `entry` is looked up as numpy's
/// `np.load(file)[entry]` does: the archive's entry of exactly that name,
/// else "<entry>.npy". The variable is named after the entry (without
/// ".npy") unless options.name is set. The entry's dtype must be storable as
/// T's element type under the rules of construction: an exact dtype as is,
/// a safe upcast converted, anything else a dtype_error naming the file, the
/// entry, and both dtypes (unless options.allow_downcast; options.strict
/// refuses every other dtype). A missing entry is an io_error naming it, the
/// file, and the entries the file holds.
/// (`entry` is a template parameter, not a std::string, so that
/// `load<T>(file.npy, {.name = "W"})` still means the .npy overload.)
template <class T, class Entry>
  requires std::convertible_to<const Entry&, std::string_view>
shared<T> load(const std::filesystem::path& file, const Entry& entry_name, shared_options options = {}) {
  if constexpr (detail::check_saveable<T>()) {
    const std::string entry{std::string_view(entry_name)};
    const detail::npz_reader zip(file);
    std::string found = entry;
    if (!zip.has(found)) {
      found = entry + std::string(detail::npy_suffix);
      if (!zip.has(found))
        throw io_error("fusor: cannot load entry '" + npy::detail::excerpt(entry, 0, 256) + "' from " +
                       zip.quoted_name() + ": it has no entry '" + npy::detail::excerpt(entry, 0, 256) + "' or '" +
                       npy::detail::excerpt(found, 0, 256) + "' (" + zip.entry_list() + ")");
    }
    npy_data d = zip.read(found);
    if (options.name.empty())
      options.name = detail::ends_with_npy(found) ? found.substr(0, found.size() - detail::npy_suffix.size()) : found;
    return detail::make_shared_from<T>(std::move(d), std::move(options), "fusor: loading " + zip.where(found) + ": ");
  } else {
    throw value_error("unreachable: rejected at compile time");
  }
}

}  // namespace fusor
