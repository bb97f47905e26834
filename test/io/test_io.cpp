// Save and load: .npy round trips for every dtype and ranks 0..3, the header
// numpy expects, load / load_into under set_value's rules (a refused load
// changes nothing, checked by value and by buffer address), .npz sets, and
// every kind of malformed input, crafted byte by byte, rejected with an
// io_error that names the file (and the entry) and says what is wrong.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <iterator>
#include <limits>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <zip.h>

#include <fusor/fusor.hpp>
#include <fusor/io/npy.hpp>
#include <fusor/io/npy_format.hpp>
#include <fusor/io/npz.hpp>

#include "../test_util.hpp"

namespace fs = std::filesystem;

namespace {

/// A fresh directory under the system's temporary directory, removed at the end.
struct temp_dir {
  fs::path path;
  temp_dir() {
    static std::atomic<unsigned> counter{0};
    std::random_device rd;
    for (int attempt = 0;; ++attempt) {
      path = fs::temp_directory_path() /
             ("fusor-io-" + std::to_string(rd()) + "-" + std::to_string(rd()) + "-" + std::to_string(counter++));
      if (fs::create_directory(path)) break;
      REQUIRE(attempt < 100);
    }
  }
  ~temp_dir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
  temp_dir(const temp_dir&) = delete;
  temp_dir& operator=(const temp_dir&) = delete;
  fs::path operator/(const std::string& name) const { return path / name; }
};

using bytes = std::vector<std::byte>;

bytes to_bytes(std::string_view s) {
  bytes b(s.size());
  if (!s.empty()) std::memcpy(b.data(), s.data(), s.size());
  return b;
}
bytes operator+(bytes a, const bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

void write_file(const fs::path& p, const bytes& b) {
  std::ofstream out(p, std::ios::binary);
  out.write(reinterpret_cast<const char*>(b.data()), static_cast<std::streamsize>(b.size()));
  REQUIRE(out.good());
}
bytes read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  bytes b(c.size());
  if (!c.empty()) std::memcpy(b.data(), c.data(), c.size());
  return b;
}

/// A .npy file with the given header text (used verbatim) and data bytes.
bytes npy_file(std::string_view header, const bytes& data = {}, unsigned major = 1) {
  bytes out = to_bytes("\x93NUMPY");
  out.push_back(std::byte(major));
  out.push_back(std::byte{0});
  const std::size_t n = header.size();
  out.push_back(std::byte(n & 0xff));
  out.push_back(std::byte((n >> 8) & 0xff));
  if (major > 1) {
    out.push_back(std::byte((n >> 16) & 0xff));
    out.push_back(std::byte((n >> 24) & 0xff));
  }
  return out + to_bytes(header) + data;
}

/// Little-endian bytes of a sequence of values.
template <class E>
bytes le_bytes(std::initializer_list<E> values) {
  bytes out;
  for (E v : values) {
    std::byte b[sizeof(E)];
    std::memcpy(b, &v, sizeof(E));
    if constexpr (std::endian::native == std::endian::big) std::reverse(b, b + sizeof(E));
    out.insert(out.end(), b, b + sizeof(E));
  }
  return out;
}

/// The bytes of a string literal, embedded NULs included.
template <std::size_t N>
bytes lit(const char (&s)[N]) {
  return to_bytes(std::string_view(s, N - 1));
}

/// An array of `shape` filled with `v` (xt::xarray<E>{{8}} is ambiguous).
template <class E>
xt::xarray<E> filled(const std::vector<std::size_t>& shape, E v) {
  return xt::xarray<E>(shape, v);
}

using fusor_test::contains;

/// Runs f, requires an io_error whose message names `file` and contains every phrase.
template <class F>
void check_io_error(const fs::path& file, F&& f, std::initializer_list<const char*> phrases) {
  std::string message;
  try {
    f();
  } catch (const fusor::io_error& e) {
    message = e.what();
  } catch (const std::exception& e) {
    FAIL("expected fusor::io_error, got another exception: " << e.what());
  }
  INFO("message: " << message);
  REQUIRE_MESSAGE(!message.empty(), "expected fusor::io_error for " << file.string());
  CHECK(contains(message, file.string()));
  for (const char* p : phrases) CHECK_MESSAGE(contains(message, p), "missing phrase: " << std::string(p));
}

/// A crafted .npy must be refused by read_npy and by load / load_into.
void check_bad_npy(const temp_dir& dir, const std::string& name, const bytes& content,
                   std::initializer_list<const char*> phrases) {
  CAPTURE(name);
  const fs::path file = dir / (name + ".npy");
  write_file(file, content);
  check_io_error(file, [&] { (void)fusor::read_npy(file); }, phrases);
  check_io_error(file, [&] { (void)fusor::load<xt::xarray<double>>(file); }, phrases);
  auto s = fusor::shared(xt::xarray<double>{1., 2.}, "kept");
  const double* before = s.get_value(fusor::borrow).data();
  check_io_error(file, [&] { fusor::load_into(s, file); }, phrases);
  CHECK(s.get_value() == xt::xarray<double>{1., 2.});
  CHECK(s.get_value(fusor::borrow).data() == before);
}

/// Deterministic sample values that include each type's extremes.
template <class E>
E sample(std::size_t i) {
  if constexpr (std::is_same_v<E, bool>) {
    return i % 3 == 0;
  } else if constexpr (std::is_floating_point_v<E>) {
    switch (i % 5) {
      case 0: return std::numeric_limits<E>::max();
      case 1: return std::numeric_limits<E>::lowest();
      case 2: return std::numeric_limits<E>::denorm_min();
      default: return static_cast<E>(i) * E(0.25) - E(1.5);
    }
  } else {
    switch (i % 4) {
      case 0: return std::numeric_limits<E>::max();
      case 1: return std::numeric_limits<E>::min();
      default: return static_cast<E>(i * 7);
    }
  }
}

template <class E>
xt::xarray<E> sample_array(const std::vector<std::size_t>& shape) {
  xt::xarray<E> a(shape);
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = sample<E>(i);
  return a;
}

/// numpy's descr for E, as fusor must write it.
template <class E>
std::string expected_descr() {
  if constexpr (std::is_same_v<E, bool>) return "|b1";
  else if constexpr (std::is_floating_point_v<E>) return "<f" + std::to_string(sizeof(E));
  else if constexpr (sizeof(E) == 1) return std::is_signed_v<E> ? "|i1" : "|u1";
  else return (std::is_signed_v<E> ? "<i" : "<u") + std::to_string(sizeof(E));
}

/// Element bytes of an npy_data equal to the values of `a`.
template <class E>
bool same_bytes(const fusor::npy_data& d, const xt::xarray<E>& a) {
  return d.bytes.size() == a.size() * sizeof(E) &&
         (a.size() == 0 || std::memcmp(d.bytes.data(), a.data(), d.bytes.size()) == 0);
}

}  // namespace

#define FUSOR_ALL_ELEMENTS \
  bool, std::int8_t, std::uint8_t, std::int16_t, std::uint16_t, std::int32_t, std::uint32_t, std::int64_t, \
      std::uint64_t, float, double

// ===================================================================== .npy

TEST_CASE_TEMPLATE("npy round trip: every dtype, ranks 0..3 and empty arrays (values, dtype, shape, name)", E,
                   FUSOR_ALL_ELEMENTS) {
  temp_dir dir;
  const std::vector<std::vector<std::size_t>> shapes = {{}, {5}, {2, 3}, {2, 3, 4}, {0}, {2, 0, 3}};
  for (const auto& shape : shapes) {
    const xt::xarray<E> original = sample_array<E>(shape);
    const fusor::dims d = fusor::dims::from(shape);
    CAPTURE(d.str());
    const fs::path file = dir / ("weights_r" + std::to_string(shape.size()) + "_" + std::to_string(d.elements()) + ".npy");
    auto s = fusor::shared(original, "W");
    fusor::save(s, file);

    // The raw view: what the file says.
    const fusor::npy_data raw = fusor::read_npy(file);
    CHECK(raw.type == fusor::dtype_of<E>);
    CHECK(raw.shape == d);
    CHECK(same_bytes(raw, original));

    // The header numpy expects: version 1.0, our descr, C order, padded to 64.
    const bytes content = read_file(file);
    REQUIRE(content.size() >= 10);
    CHECK(std::memcmp(content.data(), "\x93NUMPY\x01\x00", 8) == 0);
    const std::size_t header_len = std::to_integer<std::size_t>(content[8]) | std::to_integer<std::size_t>(content[9]) << 8;
    CHECK((10 + header_len) % 64 == 0);
    CHECK(content.size() == 10 + header_len + original.size() * sizeof(E));
    const std::string header(reinterpret_cast<const char*>(content.data()) + 10, header_len);
    CHECK(header.back() == '\n');
    CHECK(contains(header, "{'descr': '" + expected_descr<E>() + "', 'fortran_order': False, 'shape': " + d.str() + ", }"));

    // As a shared variable: named after the file's stem unless told otherwise.
    auto loaded = fusor::load<xt::xarray<E>>(file);
    CHECK(loaded.name() == file.stem().string());
    CHECK(loaded.dtype() == fusor::dtype_of<E>);
    CHECK(loaded.shape() == d);
    CHECK(loaded.get_value() == original);
    auto named = fusor::load<xt::xarray<E>>(file, {.name = "renamed"});
    CHECK(named.name() == "renamed");
    CHECK(named.get_value() == original);
    CHECK(!named.is(loaded));
  }
}

TEST_CASE_TEMPLATE("npy round trip through static-rank types: xtensor, std::vector, scalars", E, FUSOR_ALL_ELEMENTS) {
  temp_dir dir;
  const xt::xtensor<E, 2> matrix = sample_array<E>({3, 2});
  fusor::save(fusor::shared(matrix, "m"), dir / "m.npy");
  auto m = fusor::load<xt::xtensor<E, 2>>(dir / "m.npy");
  CHECK(m.get_value() == matrix);
  CHECK(m.shape() == fusor::dims{3, 2});

  const E scalar = sample<E>(1);
  fusor::save(fusor::shared(scalar, "s"), dir / "s.npy");
  CHECK(fusor::read_npy(dir / "s.npy").shape == fusor::dims{});
  auto s = fusor::load<E>(dir / "s.npy");
  CHECK(s.get_value() == scalar);
  CHECK(s.rank() == 0);

  if constexpr (!std::is_same_v<E, bool>) {
    const std::vector<E> vec = {sample<E>(0), sample<E>(1), sample<E>(2), sample<E>(3)};
    fusor::save(fusor::shared(vec, "v"), dir / "v.npy");
    auto v = fusor::load<std::vector<E>>(dir / "v.npy");
    CHECK(v.get_value() == vec);
  }
  // A static rank is fixed by the C++ type: a file of another rank is refused.
  CHECK_THROWS_AS(((void)fusor::load<xt::xtensor<E, 3>>(dir / "m.npy")), fusor::rank_error);
  CHECK_THROWS_AS((void)fusor::load<E>(dir / "m.npy"), fusor::rank_error);
}
#undef FUSOR_ALL_ELEMENTS  // (the unit is compiled with others: test/meson.build)

TEST_CASE("npy keeps NaN, infinities and -0.0 bit for bit") {
  temp_dir dir;
  const double inf = std::numeric_limits<double>::infinity();
  xt::xarray<double> a = {std::nan(""), inf, -inf, -0.0, 5e-324};
  fusor::save(fusor::shared(a, "a"), dir / "a.npy");
  auto b = fusor::load<xt::xarray<double>>(dir / "a.npy").get_value();
  REQUIRE(b.size() == 5);
  CHECK(std::memcmp(a.data(), b.data(), 5 * sizeof(double)) == 0);
  CHECK(std::isnan(b(0)));
  CHECK(std::signbit(b(3)));
}

TEST_CASE("load<T> of another dtype follows construction's casting rules") {
  temp_dir dir;
  fusor::save(fusor::shared(xt::xarray<std::int16_t>{{-3, 7}, {300, 0}}, "i"), dir / "i16.npy");
  fusor::save(fusor::shared(xt::xarray<double>{1.5, -2.75, 1e10}, "d"), dir / "f64.npy");

  // Safe upcast: int16 -> float32, values exact.
  auto f = fusor::load<xt::xarray<float>>(dir / "i16.npy");
  CHECK(f.get_value() == xt::xarray<float>{{-3.f, 7.f}, {300.f, 0.f}});
  CHECK(f.dtype() == fusor::dtype::float32);
  // Lossy: float64 -> float32 refused, with the file and the variable named.
  try {
    (void)fusor::load<xt::xarray<float>>(dir / "f64.npy");
    FAIL("expected dtype_error");
  } catch (const fusor::dtype_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, (dir / "f64.npy").string()));
    CHECK(contains(m, "'f64'"));
    CHECK(contains(m, "float64"));
    CHECK(contains(m, "float32"));
  }
  // ... unless allowed, then converted as numpy's astype does.
  auto g = fusor::load<xt::xarray<std::int32_t>>(dir / "f64.npy", {.allow_downcast = true});
  // (1e10 is beyond int32: NumPy's astype gives -2^31, x86-64's conversion of an out-of-range value.)
  CHECK(g.get_value() == xt::xarray<std::int32_t>{1, -2, std::numeric_limits<std::int32_t>::min()});
  // strict refuses any other dtype, even a safe one.
  CHECK_THROWS_AS((void)fusor::load<xt::xarray<float>>(dir / "i16.npy", {.strict = true}), fusor::dtype_error);
  CHECK(fusor::load<xt::xarray<std::int16_t>>(dir / "i16.npy", {.strict = true}).get_value()(1, 0) == 300);
  // Construction options still apply: a broadcastable axis must have length 1.
  CHECK_THROWS_AS((void)fusor::load<xt::xarray<std::int16_t>>(dir / "i16.npy", {.broadcastable = {true, false}}),
                  fusor::shape_error);
  CHECK_THROWS_AS((void)fusor::load<xt::xarray<std::int16_t>>(dir / "i16.npy", {.broadcastable = {true}}),
                  fusor::value_error);
}

TEST_CASE("load_into sets the value with set_value's rules; a refused load changes nothing") {
  temp_dir dir;
  fusor::save(fusor::shared(xt::xarray<float>{{1, 2, 3}, {4, 5, 6}}, "x"), dir / "f32_2d.npy");
  fusor::save(fusor::shared(filled<float>({1, 1, 1}, 1), "x"), dir / "f32_3d.npy");
  fusor::save(fusor::shared(xt::xarray<double>{{1.25, 2}}, "x"), dir / "f64_2d.npy");
  fusor::save(fusor::shared(xt::xarray<std::int16_t>{{-1, 2}, {3, -4}}, "x"), dir / "i16_2d.npy");

  const xt::xarray<float> initial = {{9, 8}, {7, 6}};
  auto W = fusor::shared(initial, "W");
  const float* before = W.get_value(fusor::borrow).data();
  auto unchanged = [&] {
    CHECK(W.get_value() == initial);
    CHECK(W.get_value(fusor::borrow).data() == before);
  };

  // Wrong rank.
  try {
    fusor::load_into(W, dir / "f32_3d.npy");
    FAIL("expected rank_error");
  } catch (const fusor::rank_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, (dir / "f32_3d.npy").string()));
    CHECK(contains(m, "'W'"));
    CHECK(contains(m, "expected 2, got 3"));
  }
  unchanged();
  // Lossy dtype.
  try {
    fusor::load_into(W, dir / "f64_2d.npy");
    FAIL("expected dtype_error");
  } catch (const fusor::dtype_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, (dir / "f64_2d.npy").string()));
    CHECK(contains(m, "'W'"));
    CHECK(contains(m, "float64"));
  }
  unchanged();
  // A missing or malformed file.
  CHECK_THROWS_AS(fusor::load_into(W, dir / "absent.npy"), fusor::io_error);
  unchanged();

  // Accepted: same dtype, a new shape of the same rank.
  fusor::load_into(W, dir / "f32_2d.npy");
  CHECK(W.get_value() == xt::xarray<float>{{1, 2, 3}, {4, 5, 6}});
  CHECK(W.name() == "W");
  CHECK(W.get_value(fusor::borrow).data() != before);
  // Accepted: a safe upcast, converted.
  fusor::load_into(W, dir / "i16_2d.npy");
  CHECK(W.get_value() == xt::xarray<float>{{-1, 2}, {3, -4}});
  CHECK(W.dtype() == fusor::dtype::float32);

  // strict refuses even a safe upcast.
  auto S = fusor::shared(initial, {.name = "S", .strict = true});
  CHECK_THROWS_AS(fusor::load_into(S, dir / "i16_2d.npy"), fusor::dtype_error);
  CHECK(S.get_value() == initial);
  // allow_downcast accepts float64.
  auto D = fusor::shared(initial, {.name = "D", .allow_downcast = true});
  fusor::load_into(D, dir / "f64_2d.npy");
  CHECK(D.get_value() == xt::xarray<float>{{1.25f, 2.f}});
  // A broadcastable axis must keep length 1.
  auto B = fusor::shared(xt::xarray<float>{{1, 2}}, {.name = "B", .broadcastable = {true, false}});
  const float* b_before = B.get_value(fusor::borrow).data();
  CHECK_THROWS_AS(fusor::load_into(B, dir / "f32_2d.npy"), fusor::shape_error);
  CHECK(B.get_value() == xt::xarray<float>{{1, 2}});
  CHECK(B.get_value(fusor::borrow).data() == b_before);
  fusor::save(fusor::shared(xt::xarray<float>{{5, 6, 7}}, "x"), dir / "f32_row.npy");
  fusor::load_into(B, dir / "f32_row.npy");  // shape (1, 3): axis 0 keeps length 1
  CHECK(B.get_value() == xt::xarray<float>{{5, 6, 7}});
}

TEST_CASE("load_into a static-rank variable, and into a variable whose value was taken") {
  temp_dir dir;
  fusor::save(fusor::shared(xt::xarray<std::uint8_t>{{1, 2}, {3, 4}}, "x"), dir / "u8.npy");
  auto T = fusor::shared(xt::xtensor<std::int64_t, 2>{{0}}, "T");
  fusor::load_into(T, dir / "u8.npy");
  CHECK(T.get_value() == xt::xtensor<std::int64_t, 2>{{1, 2}, {3, 4}});
  auto taken = fusor::shared(filled<std::uint8_t>({1, 1}, 5), "t");
  (void)taken.take_value();
  fusor::load_into(taken, dir / "u8.npy");
  CHECK(taken.get_value() == xt::xarray<std::uint8_t>{{1, 2}, {3, 4}});
}

TEST_CASE("save reports a path it cannot write") {
  temp_dir dir;
  auto s = fusor::shared(xt::xarray<float>{1}, "s");
  const fs::path file = dir / "no" / "such" / "dir" / "s.npy";
  check_io_error(file, [&] { fusor::save(s, file); }, {"cannot write"});
  check_io_error(dir / "no" / "x.npz", [&] { fusor::save(dir / "no" / "x.npz", s); }, {"cannot write"});
  CHECK(!fs::exists(dir / "no"));
}

// ===================================================================== reading what numpy writes

TEST_CASE("read: versions 2.0 and 3.0, big-endian, Fortran order, Python 2 headers, double quotes") {
  temp_dir dir;
  auto read = [&](const std::string& name, const bytes& content) {
    write_file(dir / name, content);
    return fusor::read_npy(dir / name);
  };
  // Version 2.0 and 3.0: a four-byte header length.
  for (unsigned major : {2u, 3u}) {
    const auto d = read("v" + std::to_string(major) + ".npy",
                        npy_file("{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }\n", le_bytes<std::int32_t>({7, -8, 9}), major));
    CHECK(d.type == fusor::dtype::int32);
    auto v = fusor::load<xt::xarray<std::int32_t>>(dir / ("v" + std::to_string(major) + ".npy")).get_value();
    CHECK(v == xt::xarray<std::int32_t>{7, -8, 9});
  }
  // Big-endian: bytes are swapped.
  {
    const bytes data = {std::byte{0}, std::byte{0}, std::byte{1}, std::byte{2}, std::byte{0xff}, std::byte{0xff},
                        std::byte{0xff}, std::byte{0xfe}};
    read("be_i4.npy", npy_file("{'descr': '>i4', 'fortran_order': False, 'shape': (2,), }\n", data));
    CHECK(fusor::load<xt::xarray<std::int32_t>>(dir / "be_i4.npy").get_value() == xt::xarray<std::int32_t>{258, -2});
    bytes be = le_bytes<double>({1.5, -0.25});
    std::reverse(be.begin(), be.begin() + 8);
    std::reverse(be.begin() + 8, be.end());
    read("be_f8.npy", npy_file("{'descr': '>f8', 'fortran_order': False, 'shape': (2,), }\n", be));
    CHECK(fusor::load<xt::xarray<double>>(dir / "be_f8.npy").get_value() == xt::xarray<double>{1.5, -0.25});
    bytes be16 = {std::byte{0x12}, std::byte{0x34}};
    read("be_u2.npy", npy_file("{'descr': '>u2', 'fortran_order': False, 'shape': (), }\n", be16));
    CHECK(fusor::load<std::uint16_t>(dir / "be_u2.npy").get_value() == 0x1234);
  }
  // Fortran order: converted to C order, rank 2 and rank 3.
  {
    const auto d = read("f2.npy", npy_file("{'descr': '<i4', 'fortran_order': True, 'shape': (2, 3), }\n",
                                           le_bytes<std::int32_t>({1, 4, 2, 5, 3, 6})));
    CHECK(d.shape == fusor::dims{2, 3});
    CHECK(fusor::load<xt::xarray<std::int32_t>>(dir / "f2.npy").get_value() ==
          xt::xarray<std::int32_t>{{1, 2, 3}, {4, 5, 6}});
    // Element (i, j, k) of shape (2, 3, 4) sits at i + 2j + 6k in Fortran order.
    std::vector<std::int16_t> fortran(24);
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k) fortran[i + 2 * j + 6 * k] = static_cast<std::int16_t>(100 * i + 10 * j + k);
    bytes data(48);
    std::memcpy(data.data(), fortran.data(), 48);
    if constexpr (std::endian::native == std::endian::big) fusor::npy::swap_bytes(data.data(), 24, 2);
    read("f3.npy", npy_file("{'descr': '<i2', 'fortran_order': True, 'shape': (2, 3, 4), }\n", data));
    const auto c = fusor::load<xt::xtensor<std::int16_t, 3>>(dir / "f3.npy").get_value();
    for (int i = 0; i < 2; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 4; ++k) CHECK(c(i, j, k) == 100 * i + 10 * j + k);
    // Big-endian and Fortran together, and an empty Fortran array.
    bytes be = {std::byte{0}, std::byte{1}, std::byte{0}, std::byte{3}, std::byte{0}, std::byte{2}, std::byte{0}, std::byte{4}};
    read("fbe.npy", npy_file("{'descr': '>u2', 'fortran_order': True, 'shape': (2, 2), }\n", be));
    CHECK(fusor::load<xt::xarray<std::uint16_t>>(dir / "fbe.npy").get_value() == xt::xarray<std::uint16_t>{{1, 2}, {3, 4}});
    CHECK(read("fe.npy", npy_file("{'descr': '<f4', 'fortran_order': True, 'shape': (0, 3), }\n")).shape == fusor::dims{0, 3});
  }
  // Headers written by numpy under Python 2 ("3L"), with double quotes, odd spacing.
  {
    const auto d = read("py2.npy", npy_file("{'descr': '<u1', 'fortran_order': False, 'shape': (3L,), }\n", to_bytes("abc")));
    CHECK(d.shape == fusor::dims{3});
    const auto q = read("dq.npy", npy_file("{ \"shape\" : ( 1 , 2 ) ,\"descr\":\"|i1\",\"fortran_order\":False}", to_bytes("\x01\xff")));
    CHECK(q.shape == fusor::dims{1, 2});
    CHECK(q.type == fusor::dtype::int8);
    CHECK(fusor::load<xt::xarray<std::int8_t>>(dir / "dq.npy").get_value() == xt::xarray<std::int8_t>{{1, -1}});
  }
  // Native-order and byte-order-free spellings of the descr.
  for (const char* descr : {"'=f4'", "'|f4'", "'f4'"}) {
    const auto d = read("n.npy", npy_file(std::string("{'descr': ") + descr + ", 'fortran_order': False, 'shape': (1,), }\n",
                                          le_bytes<float>({2.5f})));
    CHECK(d.type == fusor::dtype::float32);
  }
}

TEST_CASE("a bool byte other than 0 or 1 reads as true (never an invalid C++ bool)") {
  temp_dir dir;
  const bytes data = {std::byte{0}, std::byte{1}, std::byte{2}, std::byte{0xff}};
  write_file(dir / "b.npy", npy_file("{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }\n", data));
  const auto raw = fusor::read_npy(dir / "b.npy");
  CHECK(raw.bytes == bytes{std::byte{0}, std::byte{1}, std::byte{1}, std::byte{1}});
  CHECK(fusor::load<xt::xarray<bool>>(dir / "b.npy").get_value() == xt::xarray<bool>{false, true, true, true});
  CHECK(fusor::load<xt::xarray<std::int32_t>>(dir / "b.npy").get_value() == xt::xarray<std::int32_t>{0, 1, 1, 1});
}

TEST_CASE("npy::encode and npy::decode work on memory buffers") {
  fusor::npy_data d{fusor::dtype::uint16, {2}, le_bytes<std::uint16_t>({1, 65535})};
  if constexpr (std::endian::native == std::endian::big) fusor::npy::swap_bytes(d.bytes.data(), 2, 2);
  const bytes file = fusor::npy::encode(d);
  CHECK(file.size() % 64 == 4);  // 64-byte header, then 4 bytes of data
  const auto back = fusor::npy::decode(file);
  CHECK(back.type == d.type);
  CHECK(back.shape == d.shape);
  CHECK(back.bytes == d.bytes);
  CHECK_THROWS_AS(fusor::npy::encode({fusor::dtype::float64, {3}, bytes(8)}), fusor::value_error);
  CHECK_THROWS_AS((void)fusor::npy::decode(bytes(3)), fusor::io_error);
}

// ===================================================================== malformed .npy

TEST_CASE("malformed .npy: truncation, magic, version, header length") {
  temp_dir dir;
  const std::string good = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }\n";
  const bytes data = le_bytes<double>({1, 2});
  check_bad_npy(dir, "empty", {}, {"truncated"});
  check_bad_npy(dir, "magic_only", to_bytes("\x93NUM"), {"truncated"});
  check_bad_npy(dir, "preamble_cut", lit("\x93NUMPY\x01\x00\x40"), {"truncated"});
  check_bad_npy(dir, "v2_preamble_cut", lit("\x93NUMPY\x02\x00\x40\x00\x00"), {"truncated"});
  check_bad_npy(dir, "zip_magic", to_bytes("PK\x03\x04 this is a zip"), {"magic", "PK"});
  check_bad_npy(dir, "text", to_bytes("hello, world\n"), {"magic"});
  check_bad_npy(dir, "version_4", [&] {
    bytes b = npy_file(good, data);
    b[6] = std::byte{4};
    return b;
  }(), {"version 4.0"});
  check_bad_npy(dir, "version_1_1", [&] {
    bytes b = npy_file(good, data);
    b[7] = std::byte{1};
    return b;
  }(), {"version 1.1"});
  check_bad_npy(dir, "header_past_end", [&] {
    bytes b = npy_file(good, data);
    b[8] = std::byte{0xff};
    b[9] = std::byte{0xff};
    return b;
  }(), {"header length", "runs past the end"});
  check_bad_npy(dir, "v2_header_past_end", [&] {
    bytes b = npy_file(good, data, 2);
    b[11] = std::byte{0x7f};
    return b;
  }(), {"header length", "runs past the end"});
  // A header longer than the limit, with the bytes really there.
  check_bad_npy(dir, "huge_header", npy_file("{" + std::string(fusor::npy::max_header_bytes + 10, ' ') + "}", {}, 2),
                {"over the limit"});
  // The data cut short, or followed by extra bytes.
  check_bad_npy(dir, "data_cut", npy_file(good, bytes(data.begin(), data.begin() + 12)), {"disagrees", "needs 16 bytes", "only 12"});
  check_bad_npy(dir, "data_extra", npy_file(good, data + bytes(3)), {"disagrees", "needs 16 bytes", "19"});
  check_bad_npy(dir, "no_data", npy_file(good), {"disagrees", "needs 16 bytes", "only 0"});
}

TEST_CASE("malformed .npy: header that is not a valid dict literal") {
  temp_dir dir;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not_dict", "hello\n"},
      {"list", "['descr', '<f8']\n"},
      {"unterminated_dict", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), \n"},
      {"unterminated_string", "{'descr': '<f8, 'fortran_order': False, 'shape': (2,)}\n"},
      {"unquoted_key", "{descr: '<f8', 'fortran_order': False, 'shape': (2,)}\n"},
      {"missing_colon", "{'descr' '<f8', 'fortran_order': False, 'shape': (2,)}\n"},
      {"missing_comma", "{'descr': '<f8' 'fortran_order': False, 'shape': (2,)}\n"},
      {"trailing_text", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,)} x\n"},
      {"call", "{'descr': '<f8', 'fortran_order': False, 'shape': tuple([2])}\n"},
      {"expression", "{'descr': '<f8', 'fortran_order': False, 'shape': (1+1,)}\n"},
      {"truthy", "{'descr': '<f8', 'fortran_order': Falsey, 'shape': (2,)}\n"},
      {"unclosed_tuple", "{'descr': '<f8', 'fortran_order': False, 'shape': (2,}\n"},
      {"nul", std::string("{'descr': '<f8',") + '\0' + " 'fortran_order': False, 'shape': (2,)}\n"},
      {"escape", "{'descr': '<f8\\n', 'fortran_order': False, 'shape': (2,)}\n"},
  };
  for (const auto& [name, header] : cases)
    check_bad_npy(dir, name, npy_file(header, le_bytes<double>({1, 2})), {"not a valid Python dict literal"});
  // Nesting is bounded: no stack exhaustion on "((((((...".
  check_bad_npy(dir, "deep", npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': " + std::string(100000, '(') + "}\n"),
                {"nested more than"});
}

TEST_CASE("malformed .npy: keys") {
  temp_dir dir;
  const bytes data = le_bytes<double>({1, 2});
  check_bad_npy(dir, "no_shape", npy_file("{'descr': '<f8', 'fortran_order': False}\n", data), {"no 'shape' key"});
  check_bad_npy(dir, "no_descr", npy_file("{'fortran_order': False, 'shape': (2,)}\n", data), {"no 'descr' key"});
  check_bad_npy(dir, "no_order", npy_file("{'descr': '<f8', 'shape': (2,)}\n", data), {"no 'fortran_order' key"});
  check_bad_npy(dir, "empty_dict", npy_file("{}\n", data), {"no 'descr' key"});
  check_bad_npy(dir, "extra_key", npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'name': 'W'}\n", data),
                {"unexpected key 'name'"});
  check_bad_npy(dir, "twice", npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (2,), 'shape': (2,)}\n", data),
                {"'shape' twice"});
  check_bad_npy(dir, "order_not_bool", npy_file("{'descr': '<f8', 'fortran_order': 0, 'shape': (2,)}\n", data),
                {"'fortran_order' must be True or False"});
  check_bad_npy(dir, "order_none", npy_file("{'descr': '<f8', 'fortran_order': None, 'shape': (2,)}\n", data),
                {"'fortran_order' must be True or False, got None"});
}

TEST_CASE("malformed .npy: unsupported dtypes") {
  temp_dir dir;
  const std::vector<const char*> descrs = {"<c16", "<U3", "|O", "<f2", "|V8", "<M8[ns]", "|S5", "<i3", "b", "", "<f16"};
  for (std::size_t i = 0; i < descrs.size(); ++i) {
    const char* descr = descrs[i];
    check_bad_npy(dir, "dtype_" + std::to_string(i),
                  npy_file(std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (1,), }\n", bytes(16)),
                  {"unsupported dtype", descr});
  }
  check_bad_npy(dir, "structured", npy_file("{'descr': [('a', '<i4'), ('b', '<f8')], 'fortran_order': False, 'shape': (1,), }\n", bytes(12)),
                {"unsupported dtype", "structured"});
  check_bad_npy(dir, "descr_int", npy_file("{'descr': 8, 'fortran_order': False, 'shape': (1,), }\n", bytes(8)),
                {"unsupported dtype"});
}

TEST_CASE("malformed .npy: shapes") {
  temp_dir dir;
  auto header = [](const std::string& shape) {
    return "{'descr': '<f8', 'fortran_order': False, 'shape': " + shape + ", }\n";
  };
  check_bad_npy(dir, "shape_list", npy_file(header("[2]"), bytes(16)), {"'shape' must be a tuple"});
  check_bad_npy(dir, "shape_int", npy_file(header("2"), bytes(16)), {"'shape' must be a tuple"});
  check_bad_npy(dir, "shape_paren_int", npy_file(header("(2)"), bytes(16)), {"'shape' must be a tuple"});
  check_bad_npy(dir, "shape_string", npy_file(header("('2',)"), bytes(16)), {"'shape' must be a tuple of integers"});
  check_bad_npy(dir, "shape_nested", npy_file(header("((2,),)"), bytes(16)), {"'shape' must be a tuple of integers"});
  check_bad_npy(dir, "negative", npy_file(header("(2, -3)"), bytes(16)), {"negative extent", "(2, -3)"});
  check_bad_npy(dir, "negative_zero_product", npy_file(header("(0, -1)")), {"negative extent"});
  check_bad_npy(dir, "overflow_product", npy_file(header("(4294967296, 4294967296)"), bytes(16)), {"too large", "overflows"});
  check_bad_npy(dir, "overflow_itemsize", npy_file(header("(1152921504606846976,)"), bytes(16)), {"too large"});
  check_bad_npy(dir, "overflow_with_zero", npy_file(header("(0, 4611686018427387904, 4)")), {"too large"});
  check_bad_npy(dir, "huge_integer", npy_file(header("(123456789012345678901234567890,)"), bytes(16)), {"too large"});
  // Absurd but representable: refused on the data size, before any allocation.
  check_bad_npy(dir, "absurd", npy_file(header("(1000000000000,)"), bytes(16)),
                {"disagrees", "needs 8000000000000 bytes", "only 16"});
  check_bad_npy(dir, "mismatch", npy_file(header("(3, 2)"), bytes(40)), {"disagrees", "needs 48 bytes", "only 40"});
  check_bad_npy(dir, "rank_9", npy_file(header("(1, 1, 1, 1, 1, 1, 1, 1, 1)"), bytes(8)), {"rank 9", "FUSOR_MAX_RANK"});
  std::string rank_1000 = "(1";
  for (int i = 1; i < 1000; ++i) rank_1000 += ", 1";
  check_bad_npy(dir, "rank_1000", npy_file(header(rank_1000 + ")"), bytes(8)), {"rank 1000", "FUSOR_MAX_RANK"});
}

TEST_CASE("a missing path or a directory is an io_error naming it") {
  temp_dir dir;
  check_io_error(dir / "absent.npy", [&] { (void)fusor::read_npy(dir / "absent.npy"); }, {});
  check_io_error(dir.path, [&] { (void)fusor::read_npy(dir.path); }, {"not a regular file"});
  check_io_error(dir / "absent.npz", [&] { (void)fusor::read_npz(dir / "absent.npz"); }, {});
  check_io_error(dir.path, [&] { (void)fusor::read_npz(dir.path); }, {"not a regular file"});
}

// ===================================================================== .npz

TEST_CASE("npz: several variables of several types round trip by name") {
  temp_dir dir;
  const fs::path file = dir / "model.npz";
  auto W = fusor::shared(xt::xtensor<float, 2>{{1, 2}, {3, 4}}, "W");
  auto b = fusor::shared(xt::xarray<std::int64_t>{-5, 6, 7}, "b");
  auto step = fusor::shared(std::uint32_t{42}, "step");
  auto mask = fusor::shared(xt::xarray<bool>{{true, false, true}}, "mask");
  auto empty = fusor::shared(xt::xarray<double>::from_shape({0, 4}), "empty");
  fusor::save(file, W, b, step, mask, empty);

  const auto all = fusor::read_npz(file);
  REQUIRE(all.size() == 5);
  CHECK(all.at("W").type == fusor::dtype::float32);
  CHECK(all.at("W").shape == fusor::dims{2, 2});
  CHECK(same_bytes(all.at("W"), xt::xarray<float>{{1, 2}, {3, 4}}));
  CHECK(all.at("b").type == fusor::dtype::int64);
  CHECK(same_bytes(all.at("b"), xt::xarray<std::int64_t>{-5, 6, 7}));
  CHECK(all.at("step").shape == fusor::dims{});
  CHECK(same_bytes(all.at("step"), xt::xarray<std::uint32_t>(42)));
  CHECK(all.at("mask").type == fusor::dtype::bool_);
  CHECK(all.at("empty").shape == fusor::dims{0, 4});
  CHECK(all.at("empty").bytes.empty());

  // Load into other variables with the same names, in another order.
  auto W2 = fusor::shared(xt::xtensor<float, 2>{{0}}, "W");
  auto b2 = fusor::shared(xt::xarray<double>{0.}, "b");  // int64 -> float64 is safe
  auto step2 = fusor::shared(std::uint32_t{0}, "step");
  fusor::load(file, step2, b2, W2);
  CHECK(W2.get_value() == xt::xtensor<float, 2>{{1, 2}, {3, 4}});
  CHECK(b2.get_value() == xt::xarray<double>{-5, 6, 7});
  CHECK(step2.get_value() == 42u);
  // The entries are stored, as np.savez does.
  int code = 0;
  zip_t* z = zip_open(file.c_str(), ZIP_RDONLY, &code);
  REQUIRE(z);
  zip_stat_t st;
  REQUIRE(zip_stat(z, "W.npy", 0, &st) == 0);
  CHECK(st.comp_method == ZIP_CM_STORE);
  zip_discard(z);
}

TEST_CASE("npz: names must be non-empty and distinct") {
  temp_dir dir;
  const fs::path file = dir / "names.npz";
  auto a = fusor::shared(xt::xarray<float>{1}, "a");
  auto a_again = fusor::shared(xt::xarray<float>{2}, "a");
  auto unnamed = fusor::shared(xt::xarray<float>{3});
  auto check_value_error = [&](auto&& f, std::initializer_list<const char*> phrases) {
    try {
      f();
      FAIL("expected value_error");
    } catch (const fusor::value_error& e) {
      const std::string m = e.what();
      INFO(m);
      CHECK(contains(m, file.string()));
      for (const char* p : phrases) CHECK(contains(m, p));
    }
  };
  check_value_error([&] { fusor::save(file, a, unnamed); }, {"has no name", "argument 2"});
  check_value_error([&] { fusor::save(file, a, a_again); }, {"'a'", "distinct"});
  check_value_error([&] { fusor::save(file, a, a); }, {"'a'", "distinct"});
  CHECK(!fs::exists(file));  // nothing written
  fusor::save(file, a);
  check_value_error([&] { fusor::load(file, a, a_again); }, {"'a'", "distinct"});
  check_value_error([&] { fusor::load(file, unnamed); }, {"has no name"});
  auto named_nul = fusor::shared(xt::xarray<float>{1}, std::string("x\0y", 3));
  check_value_error([&] { fusor::save(file, named_nul); }, {"NUL"});
  CHECK(a.get_value() == xt::xarray<float>{1});
}

TEST_CASE("npz: a missing entry names the entry and the file; loading is all or nothing") {
  temp_dir dir;
  const fs::path file = dir / "set.npz";
  fusor::save(file, fusor::shared(xt::xarray<float>{1, 2}, "x"), fusor::shared(filled<double>({1, 1}, 0.5), "y"));

  auto x = fusor::shared(xt::xarray<float>{9}, "x");
  auto y = fusor::shared(filled<float>({1, 1}, 8), "y");  // float64 entry: lossy for float32
  auto z = fusor::shared(xt::xarray<float>{7}, "z");
  const float* x_before = x.get_value(fusor::borrow).data();
  const float* y_before = y.get_value(fusor::borrow).data();
  check_io_error(file, [&] { fusor::load(file, x, z); }, {"'z.npy'", "shared variable 'z'", "'x.npy'", "'y.npy'"});
  CHECK(x.get_value() == xt::xarray<float>{9});
  CHECK(x.get_value(fusor::borrow).data() == x_before);

  // x is fine, y is refused: neither changes.
  try {
    fusor::load(file, x, y);
    FAIL("expected dtype_error");
  } catch (const fusor::dtype_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, "'y.npy'"));
    CHECK(contains(m, file.string()));
    CHECK(contains(m, "'y'"));
  }
  CHECK(x.get_value() == xt::xarray<float>{9});
  CHECK(x.get_value(fusor::borrow).data() == x_before);
  CHECK(y.get_value() == filled<float>({1, 1}, 8));
  CHECK(y.get_value(fusor::borrow).data() == y_before);

  // A rank mismatch is refused the same way.
  auto y3 = fusor::shared(filled<double>({1, 1, 1}, 1), "y");
  CHECK_THROWS_AS(fusor::load(file, x, y3), fusor::rank_error);
  CHECK(x.get_value(fusor::borrow).data() == x_before);

  auto y_ok = fusor::shared(filled<double>({1, 1}, 0), "y");
  fusor::load(file, x, y_ok);
  CHECK(x.get_value() == xt::xarray<float>{1, 2});
  CHECK(y_ok.get_value() == filled<double>({1, 1}, 0.5));
}

namespace {
/// Writes a zip with the given entries through libzip (no hand-made zip bytes).
void make_zip(const fs::path& file, const std::vector<std::pair<std::string, bytes>>& entries, bool deflate = false) {
  int code = 0;
  zip_t* z = zip_open(file.c_str(), ZIP_CREATE | ZIP_TRUNCATE, &code);
  REQUIRE(z);
  for (const auto& [name, content] : entries) {
    zip_source_t* src = zip_source_buffer(z, content.data(), content.size(), 0);
    REQUIRE(src);
    const zip_int64_t i = zip_file_add(z, name.c_str(), src, 0);
    REQUIRE(i >= 0);
    REQUIRE(zip_set_file_compression(z, static_cast<zip_uint64_t>(i), deflate ? ZIP_CM_DEFLATE : ZIP_CM_STORE, 0) == 0);
  }
  REQUIRE(zip_close(z) == 0);
}

/// Replaces every occurrence of `from` by `to` (same length) in the file's bytes.
void patch(const fs::path& file, std::string_view from, std::string_view to) {
  REQUIRE(from.size() == to.size());
  bytes b = read_file(file);
  int replaced = 0;
  for (std::size_t i = 0; i + from.size() <= b.size(); ++i)
    if (std::memcmp(b.data() + i, from.data(), from.size()) == 0) {
      std::memcpy(b.data() + i, to.data(), to.size());
      ++replaced;
    }
  REQUIRE(replaced > 0);
  write_file(file, b);
}

void check_bad_npz(const fs::path& file, std::initializer_list<const char*> phrases) {
  CAPTURE(file.string());
  check_io_error(file, [&] { (void)fusor::read_npz(file); }, phrases);
}
}  // namespace

TEST_CASE("npz: reads deflated entries (np.savez_compressed) as well as stored ones") {
  temp_dir dir;
  const bytes a = fusor::npy::encode({fusor::dtype::int8, {3}, {std::byte{1}, std::byte{2}, std::byte{0xfd}}});
  std::vector<double> big(10000, 0.5);
  fusor::npy_data bd{fusor::dtype::float64, {100, 100}, bytes(80000)};
  std::memcpy(bd.bytes.data(), big.data(), 80000);
  make_zip(dir / "c.npz", {{"a.npy", a}, {"big.npy", fusor::npy::encode(bd)}}, /*deflate=*/true);
  const auto all = fusor::read_npz(dir / "c.npz");
  CHECK(all.at("a").bytes == bytes{std::byte{1}, std::byte{2}, std::byte{0xfd}});
  CHECK(all.at("big").shape == fusor::dims{100, 100});
  CHECK(all.at("big").bytes == bd.bytes);
  auto v = fusor::shared(xt::xarray<std::int16_t>{0}, "a");
  fusor::load(dir / "c.npz", v);
  CHECK(v.get_value() == xt::xarray<std::int16_t>{1, 2, -3});
}

TEST_CASE("malformed .npz: not a zip, truncated, corrupt, odd entries") {
  temp_dir dir;
  auto make_good = [&](const fs::path& file) {
    fusor::save(file, fusor::shared(xt::xarray<double>{1.25, 2.5, 3.75, 5.0}, "w"), fusor::shared(xt::xarray<std::int32_t>{1}, "k"));
  };

  write_file(dir / "text.npz", to_bytes("this is not a zip archive at all"));
  check_bad_npz(dir / "text.npz", {"not a valid .npz (zip) archive"});
  write_file(dir / "empty_file.npz", {});
  check_bad_npz(dir / "empty_file.npz", {"not a valid .npz"});
  // An .npy file is not an .npz.
  write_file(dir / "npy.npz", fusor::npy::encode({fusor::dtype::uint8, {1}, {std::byte{1}}}));
  check_bad_npz(dir / "npy.npz", {"not a valid .npz"});

  make_good(dir / "cut.npz");
  {
    bytes b = read_file(dir / "cut.npz");
    b.resize(b.size() / 2);
    write_file(dir / "cut.npz", b);
  }
  check_bad_npz(dir / "cut.npz", {"not a valid .npz"});
  auto w = fusor::shared(xt::xarray<double>{0}, "w");
  check_io_error(dir / "cut.npz", [&] { fusor::load(dir / "cut.npz", w); }, {});
  CHECK(w.get_value() == xt::xarray<double>{0});

  // A flipped data byte: the CRC check fails, naming the entry.
  make_good(dir / "crc.npz");
  {
    bytes b = read_file(dir / "crc.npz");
    double v = 2.5;
    std::byte pattern[8];
    std::memcpy(pattern, &v, 8);
    auto it = std::search(b.begin(), b.end(), pattern, pattern + 8);
    REQUIRE(it != b.end());
    *it ^= std::byte{0x01};
    write_file(dir / "crc.npz", b);
  }
  check_bad_npz(dir / "crc.npz", {"entry 'w.npy'"});
  check_io_error(dir / "crc.npz", [&] { fusor::load(dir / "crc.npz", w); }, {"entry 'w.npy'"});
  CHECK(w.get_value() == xt::xarray<double>{0});

  // An entry that is not a .npy: by name, and by content.
  make_zip(dir / "txt.npz", {{"notes.txt", to_bytes("hello")}});
  check_bad_npz(dir / "txt.npz", {"entry 'notes.txt'", "not a .npy"});
  make_zip(dir / "dir.npz", {{"sub/", {}}});
  check_bad_npz(dir / "dir.npz", {"entry 'sub/'"});
  make_zip(dir / "garbage.npz", {{"w.npy", to_bytes("garbage, not an array")}});
  check_bad_npz(dir / "garbage.npz", {"entry 'w.npy'", "magic"});
  check_io_error(dir / "garbage.npz", [&] { fusor::load(dir / "garbage.npz", w); }, {"entry 'w.npy'", "magic"});
  make_zip(dir / "empty_entry.npz", {{"w.npy", {}}});
  check_bad_npz(dir / "empty_entry.npz", {"entry 'w.npy'", "truncated"});
  // A valid entry with a malformed header: the entry is named.
  make_zip(dir / "bad_header.npz",
           {{"w.npy", npy_file("{'descr': '<c16', 'fortran_order': False, 'shape': (1,), }\n", bytes(16))}});
  check_bad_npz(dir / "bad_header.npz", {"entry 'w.npy'", "unsupported dtype '<c16'"});
  // A shape that announces far more data than the entry holds: refused on the
  // size, with nothing allocated for it.
  make_zip(dir / "bomb.npz", {{"w.npy", npy_file("{'descr': '<f8', 'fortran_order': False, 'shape': (1000000000000,), }\n", bytes(8))}});
  check_bad_npz(dir / "bomb.npz", {"entry 'w.npy'", "needs 8000000000000 bytes"});
  CHECK(w.get_value() == xt::xarray<double>{0});

  // Two entries with the same name are ambiguous.
  make_zip(dir / "dup.npz", {{"a.npy", fusor::npy::encode({fusor::dtype::uint8, {1}, {std::byte{1}}})},
                             {"b.npy", fusor::npy::encode({fusor::dtype::uint8, {1}, {std::byte{2}}})}});
  patch(dir / "dup.npz", "b.npy", "a.npy");
  check_bad_npz(dir / "dup.npz", {"two entries have the same name"});

  // A well-formed archive made by another zip writer loads.
  make_zip(dir / "one.npz", {{"a.npy", fusor::npy::encode({fusor::dtype::uint8, {1}, {std::byte{1}}})}});
  auto a = fusor::shared(xt::xarray<std::uint8_t>{0}, "a");
  fusor::load(dir / "one.npz", a);
  CHECK(a.get_value() == xt::xarray<std::uint8_t>{1});
}
