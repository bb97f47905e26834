// Compiled functions: the In/Out borrowing rules (R38–R47, memory-model §3.2
// properties a–e), updates (R54–R61), argument checks, failed calls, stale
// borrowed outputs, memory and profile reports. Aliasing is checked by address.
#define FUSOR_CHECKED 1
#include <doctest/doctest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

#include "test_window.hpp"
#include "test_util.hpp"

namespace {
using fusor_test::contains;
template <class S>
const void* storage_of(const S& s) {
  return s.get_value(fusor::borrow).data();
}
using testing_types::window;
}  // namespace

TEST_CASE("one output returns its value, several a tuple, none nothing") {
  fusor::vector<double> x{"x"};
  auto one = fusor::function(fusor::inputs(x), fusor::outputs(x * 2.0));
  auto r = one(xt::xarray<double>{1, 2});
  static_assert(std::is_same_v<decltype(r), xt::xtensor<double, 1>>);
  CHECK(r == xt::xtensor<double, 1>{2, 4});
  auto two = fusor::function(fusor::inputs(x), fusor::outputs(x + 1.0, fusor::sum(x)));
  auto [a, s] = two(xt::xarray<double>{1, 2});
  CHECK(a == xt::xtensor<double, 1>{2, 3});
  CHECK(s == 3.0);
  auto w = fusor::shared(xt::xarray<double>{0, 0}, "w");
  auto none = fusor::function(fusor::inputs(x), fusor::updates(fusor::update(w, w + x)));
  static_assert(std::is_void_v<decltype(none(xt::xarray<double>{1, 2}))>);
  none(xt::xarray<double>{1, 2});
  CHECK(w.get_value() == xt::xarray<double>{1, 2});
}

TEST_CASE("Out(y): a fresh value every call, aliasing nothing (R43 a-e)") {
  fusor::vector<double> x{"x"};
  auto s = fusor::shared(xt::xtensor<double, 1>{5, 6}, "s");
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(x, s, x * 1.0));
  xt::xtensor<double, 1> xv = {1, 2};
  auto [o1, o2, o3] = f(xv);
  CHECK(o1 == xv);
  CHECK(o1.data() != xv.data());           // (a) not the input
  CHECK(o2.data() != storage_of(s));       // (c) not shared storage
  CHECK(o1.data() != o3.data());           // (b) not another output
  auto [p1, p2, p3] = f(xv);
  CHECK(p1.data() != o1.data());           // (e) not an earlier result
  o2(0) = 100;                             // the caller owns it
  CHECK(s.get_value()(0) == 5);
  CHECK(xv == xt::xtensor<double, 1>{1, 2});
}

TEST_CASE("Out(y, borrow): the same buffer every call; reading it after the next call is stale") {
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::Out(x * 2.0, fusor::borrow)));
  const xt::xtensor<double, 1> a = {1, 2, 3};
  auto r1 = f(a);
  CHECK(r1 == xt::xtensor<double, 1>{2, 4, 6});
  const void* first = r1.data();
  CHECK_FALSE(r1.stale());
  auto r2 = f(xt::xtensor<double, 1>{10, 20, 30});
  CHECK(r2.data() == first);  // buffer reused (R44, R45)
  CHECK(r1.stale());
  CHECK_THROWS_AS((void)r1(0), fusor::stale_borrow_error);
  try {
    (void)r1.data();
  } catch (const fusor::stale_borrow_error& e) {
    CHECK(contains(e.what(), "borrowed output 0"));
    CHECK(contains(e.what(), "x * 2"));
  }
  CHECK(r2(2) == 60.0);
  // A shape change keeps memory that fits, and allocates when it does not.
  auto r3 = f(xt::xtensor<double, 1>{1});
  CHECK(r3.data() == first);
  CHECK(r3(0) == 2.0);
}

TEST_CASE("In(x): the caller's buffer is only read, even under Out(borrow)") {
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::Out(x * 2.0, fusor::borrow)));
  xt::xtensor<double, 1> xv = {1, 2};
  auto r = f(xv);
  CHECK(r.data() != xv.data());
  CHECK(xv == xt::xtensor<double, 1>{1, 2});
  CHECK_FALSE(f.output_was_in_place(0));
}

TEST_CASE("In(x, borrow) with Out(y, borrow): the input becomes the output's buffer (R47)") {
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow)), fusor::outputs(fusor::Out(2.0 * x + 1.0, fusor::borrow)));
  xt::xtensor<double, 1> xv = {1, 2, 3};
  auto r = f(xv);
  CHECK(f.output_was_in_place(0));
  CHECK(r.data() == xv.data());
  CHECK(xv == xt::xtensor<double, 1>{3, 5, 7});  // overwritten as workspace
  CHECK(r == xt::xtensor<double, 1>{3, 5, 7});
}

TEST_CASE("a shared variable's get_value(borrow) is an argument: read in place, never written") {
  // Theano's f(w.get_value(borrow=True)); found missing by the differential tests.
  fusor::vector<double> x{"x"};
  auto w = fusor::shared(xt::xtensor<double, 1>{1, 2, 3}, "w");
  auto f = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow)),
                           fusor::outputs(fusor::Out(x * 2.0, fusor::borrow)),
                           fusor::updates(fusor::update(w, w + x)));
  auto view = w.get_value(fusor::borrow);
  const void* held = view.data();
  auto r = f(view);  // x is w's own buffer, which the update replaces
  CHECK(r == xt::xtensor<double, 1>{2, 4, 6});
  CHECK(static_cast<const void*>(r.data()) != held);
  CHECK(w.get_value() == xt::xtensor<double, 1>{2, 4, 6});
  CHECK(view == xt::xtensor<double, 1>{1, 2, 3});  // the view holds the old buffer: never written
  // No variable holds that buffer any more, and it is still not the output's.
  w.set_value(xt::xtensor<double, 1>{10, 20, 30});
  auto r2 = f(view);
  CHECK(r2 == xt::xtensor<double, 1>{2, 4, 6});
  CHECK(static_cast<const void*>(r2.data()) != held);
  CHECK(view == xt::xtensor<double, 1>{1, 2, 3});
  CHECK(w.get_value() == xt::xtensor<double, 1>{11, 22, 33});
  // And in eval, bound like any value.
  CHECK(fusor::eval(x + 1.0, x = view) == xt::xtensor<double, 1>{2, 3, 4});
}

TEST_CASE("one borrow flag alone never aliases (R47, PyTensor #1082)") {
  fusor::vector<double> x{"x"};
  auto only_in = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow)), fusor::outputs(x * 2.0));
  xt::xtensor<double, 1> xv = {1, 2};
  auto r = only_in(xv);
  CHECK(r.data() != xv.data());
  CHECK(xv == xt::xtensor<double, 1>{1, 2});
}

TEST_CASE("a borrowed input passed as const or as a temporary is not written") {
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow)), fusor::outputs(fusor::Out(x * 2.0, fusor::borrow)));
  const xt::xtensor<double, 1> cv = {1, 2};
  auto r = f(cv);
  CHECK_FALSE(f.output_was_in_place(0));
  CHECK(cv == xt::xtensor<double, 1>{1, 2});
  CHECK(r == xt::xtensor<double, 1>{2, 4});
  auto t = f(xt::xtensor<double, 1>{3, 4});
  CHECK(t == xt::xtensor<double, 1>{6, 8});
}

TEST_CASE("overlapping borrowed inputs of different types stay correct (PyTensor #1026)") {
  // y is a 2x3 matrix; x (borrowed, may be written) aliases its second row.
  std::vector<double> y_mem{1, 2, 3, 4, 5, 6};
  fusor::matrix<double> y{"y"};
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow), y),
                           fusor::outputs(fusor::Out(x + 1.0, fusor::borrow), y * 2.0));
  xt::xtensor<double, 2> y_val = xt::adapt(y_mem.data(), 6, xt::no_ownership(), std::array<std::size_t, 2>{2, 3});
  window x_val{y_val.data() + 3, 3};
  auto [xo, yo] = f(x_val, y_val);
  CHECK_FALSE(f.output_was_in_place(0));  // x overlaps y: never written
  CHECK(yo == xt::xtensor<double, 2>{{2, 4, 6}, {8, 10, 12}});
  CHECK(xo == xt::xtensor<double, 1>{5, 6, 7});
  CHECK(y_val == xt::xtensor<double, 2>{{1, 2, 3}, {4, 5, 6}});
}

TEST_CASE("updates are simultaneous (R57, test_clone0)") {
  auto x = fusor::shared(xt::xtensor<double, 1>{4, 4, 4}, "x");
  auto y = fusor::shared(xt::xtensor<double, 1>{4, 4, 4}, "y");
  auto z = fusor::shared(xt::xtensor<double, 1>{2, 2, 2}, "z");
  auto f = fusor::function(fusor::inputs(), fusor::updates(fusor::update(x, x * 5.0), fusor::update(y, x * 5.0 + y),
                                                           fusor::update(z, fusor::pow(x * 5.0 + y, z))));
  f();
  CHECK(x.get_value() == xt::xtensor<double, 1>{20, 20, 20});
  CHECK(y.get_value() == xt::xtensor<double, 1>{24, 24, 24});
  // pow of floats is xsimd's (exp of y log x) when vectorised: within an ulp or
  // two of 576, not always exactly 576 (SSE2 gives 575.9999999999999).
  CHECK(xt::allclose(z.get_value(), xt::xtensor<double, 1>{576, 576, 576}, 1e-14));
}

TEST_CASE("a swap {A: B, B: A} exchanges buffers without copying (R61)") {
  auto A = fusor::shared(xt::xtensor<double, 1>{1, 2}, "A");
  auto B = fusor::shared(xt::xtensor<double, 1>{3, 4}, "B");
  const void* a0 = storage_of(A);
  const void* b0 = storage_of(B);
  auto swap = fusor::function(fusor::inputs(), fusor::updates(fusor::update(A, B), fusor::update(B, A)));
  swap();
  CHECK(A.get_value() == xt::xtensor<double, 1>{3, 4});
  CHECK(B.get_value() == xt::xtensor<double, 1>{1, 2});
  CHECK(storage_of(A) == b0);
  CHECK(storage_of(B) == a0);
  CHECK(swap.update_was_transfer(0));
  CHECK(swap.update_was_transfer(1));
  swap();
  CHECK(storage_of(A) == a0);
  CHECK(A.get_value() == xt::xtensor<double, 1>{1, 2});
}

TEST_CASE("{A: B} alone copies; {A: B, B: C} hands B's buffer to A and copies C (R61)") {
  auto A = fusor::shared(xt::xtensor<double, 1>{1, 2}, "A");
  auto B = fusor::shared(xt::xtensor<double, 1>{3, 4}, "B");
  auto copy = fusor::function(fusor::inputs(), fusor::updates(fusor::update(A, B)));
  copy();
  CHECK(A.get_value() == B.get_value());
  CHECK(storage_of(A) != storage_of(B));  // uniqueness (M3)

  fusor::vector<double> C{"C"};
  const void* b0 = storage_of(B);
  auto chain = fusor::function(fusor::inputs(C), fusor::updates(fusor::update(A, B), fusor::update(B, C)));
  xt::xtensor<double, 1> cv = {7, 8};
  chain(cv);
  CHECK(A.get_value() == xt::xtensor<double, 1>{3, 4});
  CHECK(storage_of(A) == b0);
  CHECK(B.get_value() == xt::xtensor<double, 1>{7, 8});
  CHECK(storage_of(B) != cv.data());
}

TEST_CASE("{A: D, B: D} from one input: distinct buffers, neither the argument (R61)") {
  auto A = fusor::shared(xt::xtensor<double, 1>{0, 0});
  auto B = fusor::shared(xt::xtensor<double, 1>{0, 0});
  fusor::vector<double> D{"D"};
  auto f = fusor::function(fusor::inputs(fusor::In(D, fusor::borrow)), fusor::updates(fusor::update(A, D), fusor::update(B, D)));
  xt::xtensor<double, 1> dv = {5, 6};
  f(dv);
  CHECK(A.get_value() == dv);
  CHECK(B.get_value() == dv);
  CHECK(storage_of(A) != storage_of(B));
  CHECK(storage_of(A) != dv.data());
  CHECK(storage_of(B) != dv.data());
}

TEST_CASE("elementwise updates run in place; others ping-pong between two buffers") {
  auto w = fusor::shared(xt::xtensor<double, 1>{1, 2, 3}, "w");
  fusor::vector<double> g{"g"};
  auto sgd = fusor::function(fusor::inputs(g), fusor::updates(fusor::update(w, w - 0.5 * g)));
  const void* w0 = storage_of(w);
  sgd(xt::xtensor<double, 1>{2, 2, 2});
  CHECK(sgd.update_was_in_place(0));
  CHECK(storage_of(w) == w0);
  CHECK(w.get_value() == xt::xtensor<double, 1>{0, 1, 2});

  // A transposed read of W is not at the index written: ping-pong.
  auto W = fusor::shared(xt::xtensor<double, 2>{{1, 2}, {3, 4}}, "W");
  auto flip = fusor::function(fusor::inputs(), fusor::updates(fusor::update(W, fusor::transpose(W) + 1.0)));
  const void* p0 = storage_of(W);
  flip();
  CHECK_FALSE(flip.update_was_in_place(0));
  const void* p1 = storage_of(W);
  CHECK(p1 != p0);
  CHECK(W.get_value() == xt::xtensor<double, 2>{{2, 4}, {3, 5}});
  flip();
  CHECK(storage_of(W) == p0);  // the previous buffer came back
  flip();
  CHECK(storage_of(W) == p1);
  CHECK(W.get_value() == xt::xtensor<double, 2>{{4, 6}, {5, 7}});

  // A dot is computed into a temporary first, so writing W from it is safe in place.
  auto M = fusor::shared(xt::xtensor<double, 2>{{0, 1}, {1, 0}}, "M");
  auto rot = fusor::function(fusor::inputs(), fusor::updates(fusor::update(W, fusor::dot(W, M))));
  const void* q0 = storage_of(W);
  rot();
  CHECK(rot.update_was_in_place(0));
  CHECK(storage_of(W) == q0);
  CHECK(W.get_value() == xt::xtensor<double, 2>{{6, 4}, {7, 5}});
}

TEST_CASE("a user's view of a variable keeps its values: the update is not in place") {
  auto w = fusor::shared(xt::xtensor<double, 1>{1, 2}, "w");
  auto f = fusor::function(fusor::inputs(), fusor::updates(fusor::update(w, w * 10.0)));
  auto view = w.get_value(fusor::borrow);
  f();
  CHECK_FALSE(f.update_was_in_place(0));
  CHECK(view == xt::xtensor<double, 1>{1, 2});
  CHECK(w.get_value() == xt::xtensor<double, 1>{10, 20});
}

TEST_CASE("an output of an updated variable is its value before the call (R59)") {
  auto s = fusor::shared(xt::xtensor<double, 1>{1, 2}, "s");
  auto f = fusor::function(fusor::inputs(), fusor::outputs(s, fusor::Out(s + 0.0, fusor::borrow)),
                           fusor::updates(fusor::update(s, s * 2.0)));
  auto [before, view] = f();
  CHECK(before == xt::xtensor<double, 1>{1, 2});
  CHECK(view == xt::xtensor<double, 1>{1, 2});
  CHECK(s.get_value() == xt::xtensor<double, 1>{2, 4});
}

TEST_CASE("a call that throws installs no update and writes no borrowed input") {
  auto a = fusor::shared(xt::xtensor<double, 1>{1, 2}, "a");
  auto b = fusor::shared(xt::xtensor<double, 1>{3, 4}, "b");
  fusor::vector<double> x{"x"};
  fusor::vector<double> v{"v"};
  auto f = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow), v),
                           fusor::outputs(fusor::Out(x * 3.0, fusor::borrow)),
                           fusor::updates(fusor::update(a, a + 1.0), fusor::update(b, b + v)));
  const void* a0 = storage_of(a);
  const void* b0 = storage_of(b);
  xt::xtensor<double, 1> xv = {1, 1};
  CHECK_THROWS_AS(f(xv, xt::xtensor<double, 1>{1, 2, 3}), fusor::shape_error);
  CHECK(a.get_value() == xt::xtensor<double, 1>{1, 2});
  CHECK(b.get_value() == xt::xtensor<double, 1>{3, 4});
  CHECK(storage_of(a) == a0);
  CHECK(storage_of(b) == b0);
  CHECK(xv == xt::xtensor<double, 1>{1, 1});
  // A refused argument dtype: the same, nothing changes.
  fusor::vector<float> fx{"fx"};
  auto g = fusor::function(fusor::inputs(fx), fusor::updates(fusor::update(a, a + fusor::cast<double>(fx))));
  CHECK_THROWS_AS(g(xt::xtensor<double, 1>{0.5, 0.5}), fusor::dtype_error);
  CHECK(a.get_value() == xt::xtensor<double, 1>{1, 2});
  CHECK(storage_of(a) == a0);
  // And the same functions still work afterwards.
  f(xv, xt::xtensor<double, 1>{1, 2});
  CHECK(a.get_value() == xt::xtensor<double, 1>{2, 3});
  CHECK(b.get_value() == xt::xtensor<double, 1>{4, 6});
  CHECK(xv == xt::xtensor<double, 1>{3, 3});
}

TEST_CASE("arguments are checked; errors name the input by position and name") {
  fusor::vector<float> x{"x"};
  fusor::matrix<double> m{"m"};
  auto f = fusor::function(fusor::inputs(x, m), fusor::outputs(fusor::sum(x) + fusor::sum(m)));
  try {
    (void)f(xt::xarray<double>{1.0}, xt::xtensor<double, 2>{{1.0}});
    FAIL("float64 into float32");
  } catch (const fusor::dtype_error& e) {
    CHECK(contains(e.what(), "input 0 ('x')"));
    CHECK(contains(e.what(), "float64"));
  }
  try {
    (void)f(xt::xarray<float>{1.f}, xt::xarray<double>{1.0});
    FAIL("rank 1 into a matrix");
  } catch (const fusor::rank_error& e) {
    CHECK(contains(e.what(), "input 1 ('m')"));
    CHECK(contains(e.what(), "expected 2, got 1"));
  }
  CHECK(f(std::vector<std::int16_t>{1, 2}, xt::xtensor<double, 2>{{3.0}}) == doctest::Approx(6.0));  // int16 -> float32 is safe

  auto strict = fusor::function(fusor::inputs(fusor::In(m, fusor::in_options{.strict = true})), fusor::outputs(m * 1.0));
  CHECK_THROWS_AS((void)strict(xt::xtensor<float, 2>{{1.f}}), fusor::dtype_error);
  auto down = fusor::function(fusor::inputs(fusor::In(x, fusor::in_options{.allow_downcast = true})), fusor::outputs(x * 1.f));
  CHECK(down(xt::xtensor<double, 1>{0.1})(0) == 0.1f);

  fusor::matrix<double> row{"row", {true, false}};
  auto b = fusor::function(fusor::inputs(row), fusor::outputs(row * 2.0));
  CHECK_THROWS_AS((void)b(xt::xtensor<double, 2>{{1.0}, {2.0}}), fusor::shape_error);
}

TEST_CASE("building a function refuses bad specifications") {
  fusor::vector<double> x{"x"};
  CHECK_THROWS_AS(fusor::function(fusor::inputs(x, x), fusor::outputs(x * 1.0)), fusor::value_error);
  auto w = fusor::shared(xt::xtensor<double, 1>{1, 2}, "w");
  CHECK_THROWS_AS(fusor::function(fusor::inputs(), fusor::updates(fusor::update(w, w + 1.0), fusor::update(w, w * 2.0))),
                  fusor::value_error);
  // An update whose broadcastable pattern differs from its variable's (R55).
  auto m = fusor::shared(xt::xtensor<double, 2>{{1, 2}, {3, 4}}, "m");
  fusor::matrix<double> r{"r", {true, false}};
  try {
    fusor::function(fusor::inputs(r), fusor::updates(fusor::update(m, r * 2.0)));
    FAIL("pattern mismatch");
  } catch (const fusor::value_error& e) {
    CHECK(contains(e.what(), "shared variable 'm'"));
    CHECK(contains(e.what(), "(True, False)"));
    CHECK(contains(e.what(), "(False, False)"));
    CHECK(contains(e.what(), "fusor::cast"));
  }
  auto b = fusor::shared(xt::xtensor<double, 2>{{1, 2}}, {.name = "b", .broadcastable = {true, false}});
  auto ok = fusor::function(fusor::inputs(r), fusor::updates(fusor::update(b, b + r)));
  ok(xt::xtensor<double, 2>{{1, 1}});
  CHECK(b.get_value() == xt::xtensor<double, 2>{{2, 3}});
}

TEST_CASE("several outputs over one shape are one fused pass (W6); profile and memory reports") {
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::exp(x / 5.0) * 2.0, fusor::exp(x / 5.0) + 1.0));
  f.enable_profiling();
  const xt::xtensor<double, 1> xv = {0, 5, 10};
  auto [a, b] = f(xv);
  for (std::size_t i = 0; i < 3; ++i) {
    CHECK(a(i) == doctest::Approx(std::exp(xv(i) / 5.0) * 2.0));
    CHECK(b(i) == doctest::Approx(std::exp(xv(i) / 5.0) + 1.0));
  }
  (void)f(xv);
  const auto& p = f.profile();
  REQUIRE(p.kernels().size() == 1);
  CHECK(p.kernels()[0].name == "fused outputs 0 1");
  CHECK(p.kernels()[0].calls == 2);
  CHECK(p.kernels()[0].bytes == doctest::Approx(2 * 3 * 8 * 3));  // x read (per output) + 2 outputs, per call
  CHECK(contains(p.str(), "fused outputs 0 1"));
  CHECK(contains(p.str(), "GB/s"));

  auto w = fusor::shared(xt::xtensor<double, 2>(xt::ones<double>({4, 4})), "w");
  auto g = fusor::function(fusor::inputs(), fusor::outputs(fusor::Out(fusor::dot(w, w), fusor::borrow)),
                           fusor::updates(fusor::update(w, fusor::dot(w, w) * 0.5)));
  (void)g();
  const auto mem = g.memory();
  CHECK(mem.output_bytes >= 16 * sizeof(double));  // the borrowed output's buffer
  CHECK(mem.arena_bytes >= 16 * sizeof(double));       // dot results are temporaries
  CHECK(mem.temporary_bytes <= mem.arena_bytes);
  const auto allocations = mem.arena_allocations;
  (void)g();
  (void)g();
  CHECK(g.memory().arena_allocations == allocations);  // steady state: the arena does not grow
}

TEST_CASE("a shape change re-plans; memory that fits is reused") {
  fusor::vector<double> x{"x"};
  auto s = fusor::shared(xt::xtensor<double, 1>{0, 0, 0, 0}, "s");
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::Out(fusor::sum(x * x, fusor::keepdims) + x, fusor::borrow)),
                           fusor::updates(fusor::update(s, fusor::sum(x) + s)));
  auto r4 = f(xt::xtensor<double, 1>{1, 2, 3, 4});
  CHECK(r4 == xt::xtensor<double, 1>{31, 32, 33, 34});
  auto r8 = f(xt::xtensor<double, 1>{1, 1, 1, 1, 1, 1, 1, 1});
  CHECK(r8 == xt::xtensor<double, 1>{9, 9, 9, 9, 9, 9, 9, 9});
  const auto allocations = f.memory().arena_allocations;
  auto r2 = f(xt::xtensor<double, 1>{1, 2, 3, 4});
  CHECK(r2 == xt::xtensor<double, 1>{31, 32, 33, 34});
  CHECK(f.memory().arena_allocations == allocations);
  CHECK(s.get_value() == xt::xtensor<double, 1>{28, 28, 28, 28});
}

TEST_CASE("Out(y, internal_type) returns fusor::array; with borrow it is the reused buffer") {
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::Out(x + 1.0, fusor::internal_type),
                                                             fusor::Out(x + 2.0, fusor::borrow, fusor::internal_type)));
  auto [fresh, reused] = f(xt::xtensor<double, 1>{1, 2});
  static_assert(std::is_same_v<decltype(fresh), fusor::array<double>>);
  CHECK(fresh.data()[1] == 3.0);
  CHECK(reused.data()[1] == 4.0);
  auto [fresh2, reused2] = f(xt::xtensor<double, 1>{1, 2});
  CHECK(fresh2.data() != fresh.data());
  CHECK(reused2.data() == reused.data());
}
