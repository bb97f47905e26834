// Loading a .npz entry into a new variable (fusor::load<T>(file, entry)), and
// the values a variable may be created from or set to without a placeholder's
// surprises: a default-constructed xt::xarray is 0-d, so a variable made from
// one has rank 0 and says so when a value of another rank arrives; a
// default-constructed fusor::array holds no buffer and is refused wherever a
// value is expected. Also the internal-object round trip
// s.set_value(s.get_value(borrow, internal_type), borrow) (O(1): same buffer,
// no allocation) and fusor::array<E> as a function argument and an eval
// binding.
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <random>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fusor/fusor.hpp>
#include <fusor/io/npy.hpp>
#include <fusor/io/npz.hpp>

#include "replace_new.hpp"
#include "test_util.hpp"

namespace fs = std::filesystem;

namespace {
std::atomic<std::size_t> allocations{0};
}

void* test_allocate(std::size_t n, std::size_t align) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return test_new::system_allocate(n, align);
}

namespace {

/// A fresh directory under the system's temporary directory, removed at the end.
struct temp_dir {
  fs::path path;
  temp_dir() {
    static std::atomic<unsigned> counter{0};
    std::random_device rd;
    for (int attempt = 0;; ++attempt) {
      path = fs::temp_directory_path() /
             ("fusor-load-entry-" + std::to_string(rd()) + "-" + std::to_string(counter++));
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

using fusor_test::address;
using fusor_test::contains;

/// Writes model.npz with W (float32, 2x3), b (float64, 3), step (int64, 0-d).
fs::path write_model(const temp_dir& dir) {
  auto W = fusor::shared(xt::xtensor<float, 2>{{1, 2, 3}, {4, 5, 6}}, "W");
  auto b = fusor::shared(xt::xarray<double>{0.5, -1.25, 1e10}, "b");
  auto step = fusor::shared(std::int64_t{42}, "step");
  const fs::path file = dir / "model.npz";
  fusor::save(file, W, b, step);
  return file;
}

}  // namespace

// ------------------------------------------------------------------ task: load<T>(file.npz, entry)

TEST_CASE("load<xt::xarray<E>>(file, entry): a new variable with the entry's rank, shape and values") {
  temp_dir dir;
  const fs::path file = write_model(dir);

  auto W = fusor::load<xt::xarray<float>>(file, "W");
  static_assert(std::is_same_v<decltype(W), fusor::shared<xt::xarray<float>>>);
  CHECK(W.name() == "W");
  CHECK(W.rank() == 2);
  CHECK(W.shape() == fusor::dims{2, 3});
  CHECK(W.dtype() == fusor::dtype::float32);
  CHECK(W.get_value() == xt::xarray<float>{{1, 2, 3}, {4, 5, 6}});

  auto b = fusor::load<xt::xarray<double>>(file, "b");
  CHECK(b.rank() == 1);
  CHECK(b.get_value() == xt::xarray<double>{0.5, -1.25, 1e10});

  auto step = fusor::load<xt::xarray<std::int64_t>>(file, "step");
  CHECK(step.rank() == 0);
  CHECK(step.get_value()() == 42);

  // The entry may be named with its ".npy", as numpy's np.load(file)["W.npy"]
  // accepts; the variable is still named "W".
  auto W2 = fusor::load<xt::xarray<float>>(file, "W.npy");
  CHECK(W2.name() == "W");
  CHECK(W2.get_value() == W.get_value());
  // options.name names it otherwise; other options apply as at construction.
  auto W3 = fusor::load<xt::xarray<float>>(file, std::string("W"), {.name = "weights", .strict = true});
  CHECK(W3.name() == "weights");
  CHECK(W3.strict());

  // Every load is a variable of its own: no two share a buffer (M3).
  CHECK(address(W.get_value(fusor::borrow)) != address(W2.get_value(fusor::borrow)));

  // An ordinary variable: any shape of its rank may be set, and fusor::load
  // into it by name works.
  W.set_value(xt::xarray<float>(7.f * xt::ones<float>({1, 1})));
  CHECK(W.shape() == fusor::dims{1, 1});
  fusor::load(file, W);
  CHECK(W.get_value() == xt::xarray<float>{{1, 2, 3}, {4, 5, 6}});
  // ... and it takes part in expressions like any other.
  CHECK(fusor::eval(fusor::sum(W3 * 2.0f))() == 42.0f);  // an xarray: W3's rank is a run-time one
}

TEST_CASE("load<T>(file, entry) with a static-rank T: the entry's rank must match") {
  temp_dir dir;
  const fs::path file = write_model(dir);
  auto W = fusor::load<xt::xtensor<float, 2>>(file, "W");
  CHECK(W.get_value() == xt::xtensor<float, 2>{{1, 2, 3}, {4, 5, 6}});
  auto b = fusor::load<std::vector<double>>(file, "b");
  CHECK(b.get_value() == std::vector<double>{0.5, -1.25, 1e10});
  auto step = fusor::load<std::int64_t>(file, "step");
  CHECK(step.get_value() == 42);
  try {
    (void)fusor::load<xt::xtensor<float, 1>>(file, "W");
    FAIL("expected rank_error");
  } catch (const fusor::rank_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, file.string()));
    CHECK(contains(m, "'W.npy'"));
    CHECK(contains(m, "rank 1"));
    CHECK(contains(m, "(2, 3)"));
  }
}

TEST_CASE("load<T>(file, entry) of another dtype follows construction's casting rules") {
  temp_dir dir;
  const fs::path file = write_model(dir);

  // float32 -> float64 is a safe upcast: converted, values exact.
  auto W = fusor::load<xt::xarray<double>>(file, "W");
  CHECK(W.dtype() == fusor::dtype::float64);
  CHECK(W.get_value() == xt::xarray<double>{{1, 2, 3}, {4, 5, 6}});

  // float64 -> float32 may lose precision: a dtype_error naming the file,
  // the entry, the variable, the expected and the found dtype.
  try {
    (void)fusor::load<xt::xarray<float>>(file, "b");
    FAIL("expected dtype_error");
  } catch (const fusor::dtype_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, file.string()));
    CHECK(contains(m, "entry 'b.npy'"));
    CHECK(contains(m, "shared variable 'b'"));
    CHECK(contains(m, "dtype float32"));
    CHECK(contains(m, "dtype float64"));
  }
  // allow_downcast converts as numpy's astype does.
  auto b32 = fusor::load<xt::xarray<float>>(file, "b", {.allow_downcast = true});
  CHECK(b32.get_value() == xt::xarray<float>{0.5f, -1.25f, 1e10f});
  auto b_int = fusor::load<xt::xarray<std::int32_t>>(file, "b", {.allow_downcast = true});
  CHECK(b_int.get_value()(0) == 0);
  CHECK(b_int.get_value()(1) == -1);
  // strict refuses any other dtype, even a safe upcast.
  try {
    (void)fusor::load<xt::xarray<double>>(file, "W", {.strict = true});
    FAIL("expected dtype_error");
  } catch (const fusor::dtype_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, "entry 'W.npy'"));
    CHECK(contains(m, "strict"));
    CHECK(contains(m, "float64"));
    CHECK(contains(m, "float32"));
  }
}

TEST_CASE("load<T>(file, entry): a missing entry names it, the file and the entries present; a missing file") {
  temp_dir dir;
  const fs::path file = write_model(dir);
  try {
    (void)fusor::load<xt::xarray<float>>(file, "w");
    FAIL("expected io_error");
  } catch (const fusor::io_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, file.string()));
    CHECK(contains(m, "'w'"));
    CHECK(contains(m, "'w.npy'"));
    CHECK(contains(m, "'W.npy', 'b.npy', 'step.npy'"));
  }
  try {
    (void)fusor::load<xt::xarray<float>>(dir / "absent.npz", "W");
    FAIL("expected io_error");
  } catch (const fusor::io_error& e) {
    CHECK(contains(e.what(), (dir / "absent.npz").string()));
  }
  // A .npy file is not an archive.
  fusor::save(fusor::shared(xt::xarray<float>{1, 2}, "v"), dir / "v.npy");
  CHECK_THROWS_AS((void)fusor::load<xt::xarray<float>>(dir / "v.npy", "v"), fusor::io_error);
  // ... and the .npy overload with options is still the one a braced list picks.
  CHECK(fusor::load<xt::xarray<float>>(dir / "v.npy", {.name = "w"}).name() == "w");
}

// ------------------------------------------------------------------ task: default / empty values

TEST_CASE("a default-constructed xt::xarray is 0-d: the variable has rank 0, and says why a matrix is refused") {
  xt::xarray<double> placeholder;  // xtensor: shape (), one element
  REQUIRE(placeholder.dimension() == 0);
  REQUIRE(placeholder.size() == 1);
  auto W = fusor::shared(placeholder, "W");
  CHECK(W.rank() == 0);
  CHECK(W.get_value()() == 0.0);
  const void* before = address(W.get_value(fusor::borrow));

  try {
    W.set_value(xt::xarray<double>{{1, 2}, {3, 4}});
    FAIL("expected rank_error");
  } catch (const fusor::rank_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, "shared variable 'W': wrong number of dimensions: expected 0, got 2 with shape (2, 2)"));
    CHECK(contains(m, "default-constructed xt::xarray is 0-d"));
    CHECK(contains(m, "xt::xarray<E>::from_shape({0, 0})"));
    CHECK(contains(m, "fusor::load<xt::xarray<E>>(file.npz, entry)"));
  }
  // The refusal changed nothing (M7).
  CHECK(address(W.get_value(fusor::borrow)) == before);
  CHECK(W.get_value()() == 0.0);
  // 0-d values are what it holds.
  W.set_value(xt::xarray<double>(5.0));
  CHECK(W.get_value()() == 5.0);
  W.set_value(2.5);
  CHECK(W.get_value()() == 2.5);
  // The other set_value forms say the same.
  xt::xarray<double> m = {{1, 2}};
  CHECK_THROWS_WITH_AS(W.set_value(m, fusor::borrow), doctest::Contains("default-constructed xt::xarray"),
                       fusor::rank_error);
  CHECK_THROWS_WITH_AS(W.set_value(xt::xarray<double>{{1, 2}}), doctest::Contains("default-constructed xt::xarray"),
                       fusor::rank_error);
}

TEST_CASE("loading a file into a 0-d placeholder is refused with the same hint; from_shape({0, 0}) is the placeholder") {
  temp_dir dir;
  const fs::path file = write_model(dir);
  fusor::save(fusor::shared(xt::xarray<float>{{1, 2}}, "v"), dir / "v.npy");

  auto W = fusor::shared(xt::xarray<float>{}, "W");
  try {
    fusor::load(file, W);
    FAIL("expected rank_error");
  } catch (const fusor::rank_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, file.string()));
    CHECK(contains(m, "entry 'W.npy'"));
    CHECK(contains(m, "expected 0, got 2 with shape (2, 3)"));
    CHECK(contains(m, "default-constructed xt::xarray is 0-d"));
  }
  CHECK(W.rank() == 0);
  CHECK_THROWS_WITH_AS(fusor::load_into(W, dir / "v.npy"), doctest::Contains("default-constructed xt::xarray"),
                       fusor::rank_error);

  // A placeholder of rank 2 with no elements takes the file's values.
  auto W2 = fusor::shared(xt::xarray<float>::from_shape({0, 0}), "W");
  CHECK(W2.rank() == 2);
  CHECK(W2.shape() == fusor::dims{0, 0});
  fusor::load(file, W2);
  CHECK(W2.get_value() == xt::xarray<float>{{1, 2, 3}, {4, 5, 6}});

  // A static rank is unaffected: the message is the plain one.
  auto v = fusor::shared(xt::xtensor<float, 1>{1, 2}, "v");
  try {
    fusor::load_into(v, dir / "v.npy");
    FAIL("expected rank_error");
  } catch (const fusor::rank_error& e) {
    CHECK(contains(e.what(), "expected 1, got 2"));
    CHECK(!contains(e.what(), "default-constructed"));
  }
}

TEST_CASE("a default-constructed fusor::array holds no buffer: refused wherever a value is expected") {
  const fusor::array<double> none;
  REQUIRE(none.data() == nullptr);
  REQUIRE(none.size() == 1);  // shape (): one element, and no bytes behind it

  // As the value of a new variable.
  try {
    (void)fusor::shared(none, "a");
    FAIL("expected value_error");
  } catch (const fusor::value_error& e) {
    const std::string m = e.what();
    CHECK(contains(m, "fusor::shared 'a'"));
    CHECK(contains(m, "fusor::array<double> of shape ()"));
    CHECK(contains(m, "needs 8 bytes"));
    CHECK(contains(m, "buffer of 0 bytes"));
    CHECK(contains(m, "default-constructed"));
  }
  CHECK_THROWS_AS((void)fusor::shared(fusor::array<double>{}), fusor::value_error);
  CHECK_THROWS_AS((void)fusor::shared(fusor::array<double>{}, fusor::borrow), fusor::value_error);

  // As the new value of a variable, in every form; nothing changes.
  auto s = fusor::shared(xt::xarray<double>{1.0, 2.0}, "s");
  const void* before = address(s.get_value(fusor::borrow));
  fusor::array<double> lvalue;
  CHECK_THROWS_WITH_AS(s.set_value(none), doctest::Contains("shared variable 's': received a fusor::array<double>"),
                       fusor::value_error);
  CHECK_THROWS_AS(s.set_value(none, fusor::copy), fusor::value_error);
  CHECK_THROWS_AS(s.set_value(lvalue, fusor::borrow), fusor::value_error);
  CHECK_THROWS_AS(s.set_value(fusor::array<double>{}, fusor::borrow), fusor::value_error);
  CHECK(address(s.get_value(fusor::borrow)) == before);
  CHECK(s.get_value() == xt::xarray<double>{1.0, 2.0});
  auto a = fusor::shared(fusor::array<double>::copy_of({2}, std::vector<double>{1, 2}.data()), "a");
  CHECK_THROWS_AS(a.set_value(fusor::array<double>{}), fusor::value_error);
  CHECK(a.get_value(fusor::borrow, fusor::internal_type).data()[1] == 2.0);

  // As an eval binding or a function argument.
  fusor::scalar<double> x{"x"};
  CHECK_THROWS_WITH_AS((void)fusor::eval(x * 2.0, x = none), doctest::Contains("default-constructed"),
                       fusor::value_error);
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(x + 1.0));
  CHECK_THROWS_AS((void)f(none), fusor::value_error);
  CHECK(f(fusor::array<double>::copy_of({}, std::vector<double>{2}.data())) == 3.0);

  // An empty array of rank 1 is a value (no elements, no bytes needed).
  auto e = fusor::shared(fusor::array<double>::allocate({0}), "e");
  CHECK(e.shape() == fusor::dims{0});
}

// ------------------------------------------------------------------ task: internal objects

TEST_CASE("s.set_value(s.get_value(borrow, internal_type), borrow) compiles and is O(1): same buffer, no allocation") {
  auto check = [](auto s) {
    const void* before = address(s.get_value(fusor::borrow, fusor::internal_type));
    const auto copy = s.get_value(fusor::copy, fusor::internal_type);
    const std::size_t a0 = allocations.load();
    for (int i = 0; i < 100; ++i) s.set_value(s.get_value(fusor::borrow, fusor::internal_type), fusor::borrow);
    CHECK(allocations.load() - a0 == 0);
    const auto now = s.get_value(fusor::borrow, fusor::internal_type);
    CHECK(address(now) == before);
    CHECK(now.shape() == copy.shape());
    CHECK(std::equal(copy.data(), copy.data() + copy.size(), now.data()));
    // The control: a copy in does allocate (so the count above is live).
    const std::size_t a1 = allocations.load();
    s.set_value(copy, fusor::copy);
    CHECK(allocations.load() > a1);
    CHECK(address(s.get_value(fusor::borrow, fusor::internal_type)) != before);
  };
  check(fusor::shared(xt::xarray<double>(xt::arange<double>(1 << 20)), "big"));
  check(fusor::shared(xt::xtensor<float, 2>{{1, 2}, {3, 4}}, "m"));
  check(fusor::shared(std::vector<std::int32_t>{1, 2, 3}, "v"));
  check(fusor::shared(fusor::array<double>::copy_of({3}, std::vector<double>{1, 2, 3}.data()), "arr"));

  // A view held across the round trip still shows the values (it is the same
  // buffer), and a compiled function reading the variable keeps working.
  auto s = fusor::shared(xt::xarray<double>{1, 2, 3}, "s");
  auto view = s.get_value(fusor::borrow);
  auto f = fusor::function(fusor::inputs(), fusor::outputs(fusor::sum(s)));
  CHECK(f()() == 6.0);
  s.set_value(s.get_value(fusor::borrow, fusor::internal_type), fusor::borrow);
  CHECK(view(2) == 3.0);
  CHECK(f()() == 6.0);

  // Another variable borrowing that array gets a copy (M3: no two variables
  // hold one buffer).
  auto t = fusor::shared(xt::xarray<double>{0}, "t");
  t.set_value(s.get_value(fusor::borrow, fusor::internal_type), fusor::borrow);
  CHECK(address(t.get_value(fusor::borrow)) != address(s.get_value(fusor::borrow)));
  CHECK(t.get_value() == xt::xarray<double>{1, 2, 3});
}

TEST_CASE("fusor::array<E> as a function argument: read, lent with In(x, borrow), converted, fed back from Out(y, internal_type)") {
  auto w = fusor::shared(xt::xarray<double>{10, 20, 30}, "w");
  fusor::vector<double> x{"x"};
  const auto arr = fusor::array<double>::copy_of({3}, std::vector<double>{1, 2, 3}.data());

  auto f = fusor::function(fusor::inputs(x), fusor::outputs(x * 2.0 + w));
  CHECK(f(arr) == xt::xarray<double>{12, 24, 36});
  CHECK(f(fusor::array<double>(arr)) == xt::xarray<double>{12, 24, 36});  // an rvalue
  CHECK(arr.data()[0] == 1.0);                                             // only read

  // Another dtype is converted by the casting rules (int32 -> float64 is safe).
  const auto ints = fusor::array<std::int32_t>::copy_of({3}, std::vector<std::int32_t>{1, 2, 3}.data());
  CHECK(f(ints) == xt::xarray<double>{12, 24, 36});
  // Rank is checked, naming the input.
  const auto matrix = fusor::array<double>::copy_of({1, 3}, std::vector<double>{1, 2, 3}.data());
  CHECK_THROWS_WITH_AS((void)f(matrix), doctest::Contains("expected 1, got 2"), fusor::rank_error);

  // Out(y, internal_type) is an array; it can be the next call's argument.
  auto g = fusor::function(fusor::inputs(x), fusor::outputs(fusor::Out(x + 1.0, fusor::internal_type)));
  fusor::array<double> r = g(arr);
  for (int i = 0; i < 3; ++i) r = g(r);
  CHECK(r.shape() == fusor::dims{3});
  CHECK(r.data()[0] == 5.0);
  CHECK(r.data()[2] == 7.0);

  // Lent with In(x, borrow) as a non-const lvalue: the output may take its buffer (R47).
  auto lent = fusor::array<double>::copy_of({3}, std::vector<double>{1, 2, 3}.data());
  auto h = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow)), fusor::outputs(fusor::Out(x * 3.0, fusor::borrow)));
  auto out = h(lent);
  CHECK(out(2) == 9.0);
  CHECK(address(out) == address(lent));
}

TEST_CASE("fusor::array<E> as an eval / assign binding: x = arr") {
  fusor::vector<double> x{"x"};
  fusor::matrix<double> m{"m"};
  const auto arr = fusor::array<double>::copy_of({3}, std::vector<double>{1, 2, 3}.data());
  xt::xtensor<double, 1> y = fusor::eval(x * 3.0, x = arr);
  CHECK(y == xt::xtensor<double, 1>{3, 6, 9});
  CHECK(fusor::eval(fusor::sum(x), x = arr) == 6.0);
  // A shared variable's own storage, bound without a copy.
  auto s = fusor::shared(xt::xarray<double>{4, 5, 6}, "s");
  xt::xtensor<double, 1> z = fusor::eval(x + s, x = s.get_value(fusor::borrow, fusor::internal_type));
  CHECK(z == xt::xtensor<double, 1>{8, 10, 12});
  // assign into a variable, reading the array.
  fusor::assign(s, s + x, x = arr);
  CHECK(s.get_value() == xt::xarray<double>{5, 7, 9});
  // The rank is checked, naming the input.
  CHECK_THROWS_WITH_AS((void)fusor::eval(m * 3.0, m = arr),
                       doctest::Contains("input 'm': wrong number of dimensions: expected 2, got 1"), fusor::rank_error);
}
