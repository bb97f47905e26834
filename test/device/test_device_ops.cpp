// Every expression operation on a device — elementwise, reductions, dot,
// integer semantics, selections — run once with host variables and once with
// device variables and compared. Run on an emulated device in every CI run,
// and on a real one in the GPU suite.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include <xtensor/xadapt.hpp>
#include <xtensor/xview.hpp>

#include "../reference/numpy_cases.hpp"
#include "device_harness.hpp"

using device_test::dev;
using device_test::fixture;
using device_test::check_close;
using device_test::host_values;
using device_test::ramp;
using device_test::spaces;

TEST_CASE_FIXTURE(fixture, "reductions on a device, fused with their operand, equal the host's") {
  xt::xarray<double> xv = ramp({4, 5, 3});
  xv(1, 2, 0) = std::numeric_limits<double>::quiet_NaN();
  xt::xarray<double> outs[2][12];
  for (int k = 0; k < 2; ++k) {
    CAPTURE(spaces[k].str());
    auto X = fusor::shared(xv, {.name = "X", .space = spaces[k]});
    auto Y = fusor::shared(ramp({4, 5, 3}, 1.0), {.name = "Y", .space = spaces[k]});
    auto f = device_test::function(
        fusor::inputs(),
        fusor::outputs(fusor::sum(Y * 2.0), fusor::mean(Y, 1), fusor::max(Y, {0, 2}), fusor::min(Y, -1, fusor::keepdims),
                       fusor::prod(Y, 0), fusor::argmax(Y), fusor::argmin(Y, 1), fusor::nansum(X, 2),
                       fusor::nanmean(X, 1), fusor::nanmax(X), fusor::max(X, 2), Y / fusor::sum(Y, 1, fusor::keepdims)));
    auto r = f();
    outs[k][0] = xt::xarray<double>(std::get<0>(r));
    outs[k][1] = std::get<1>(r);
    outs[k][2] = std::get<2>(r);
    outs[k][3] = std::get<3>(r);
    outs[k][4] = std::get<4>(r);
    outs[k][5] = xt::cast<double>(std::get<5>(r));
    outs[k][6] = xt::cast<double>(std::get<6>(r));
    outs[k][7] = std::get<7>(r);
    outs[k][8] = std::get<8>(r);
    outs[k][9] = xt::xarray<double>(std::get<9>(r));
    outs[k][10] = std::get<10>(r);
    outs[k][11] = std::get<11>(r);
  }
  for (int j = 0; j < 12; ++j) {
    CAPTURE(j);
    check_close(outs[1][j], outs[0][j], 1e-12);
  }
  CHECK(std::isnan(outs[1][10](1, 2)));  // NaN propagates through max on the device too
}

TEST_CASE_FIXTURE(fixture, "large reductions on a device: by blocks, split between blocks and by columns, equal the host's") {
  // Large enough that a real device splits the outputs' elements between
  // blocks (partial accumulators, then a merge), and reads sum(X, 0) by
  // columns (one output per thread, rows split between blocks); ramp's
  // values repeat, so argmax and argmin meet ties across the splits.
  using fusor::_;
  using fusor::range;
  const xt::xarray<double> xv = ramp({3000, 300});
  xt::xarray<float> vv = xt::zeros<float>({5000, 40});
  for (std::size_t c = 0; c < 40; c += 3) vv(4000, c) = vv(4500, c) = -1.0f;
  xt::xarray<double> outs[2][10];
  for (int k = 0; k < 2; ++k) {
    CAPTURE(spaces[k].str());
    auto X = fusor::shared(xv, {.name = "X", .space = spaces[k]});
    auto V = fusor::shared(vv, {.name = "V", .space = spaces[k]});
    const auto XT = fusor::transpose(X);
    auto f = device_test::function(
        fusor::inputs(),
        fusor::outputs(fusor::sum(X, 0), fusor::mean(X * 2.0, 0), fusor::argmax(X, 0), fusor::argmin(V, 0),
                       fusor::sum(X, 1), fusor::sum(X), fusor::argmax(X), fusor::sum(XT, 0), fusor::sum(XT, 1),
                       fusor::min(fusor::view(X, range(_, _, -1), range(_, 40)), 0)));
    auto r = f();
    outs[k][0] = std::get<0>(r);
    outs[k][1] = std::get<1>(r);
    outs[k][2] = xt::cast<double>(std::get<2>(r));
    outs[k][3] = xt::cast<double>(std::get<3>(r));
    outs[k][4] = std::get<4>(r);
    outs[k][5] = xt::xarray<double>(std::get<5>(r));
    outs[k][6] = xt::cast<double>(std::get<6>(r));
    outs[k][7] = std::get<7>(r);
    outs[k][8] = std::get<8>(r);
    outs[k][9] = std::get<9>(r);
  }
  for (int j = 0; j < 10; ++j) {
    CAPTURE(j);
    check_close(outs[1][j], outs[0][j], 1e-10);
  }
  // Against xtensor, and the first best position (ties at rows 4000 and 4500).
  check_close(outs[1][0], xt::sum(xv, {0}), 1e-10);
  check_close(outs[1][4], xt::sum(xv, {1}), 1e-10);
  for (std::size_t c = 0; c < 40; ++c) CHECK(outs[1][3](c) == (c % 3 == 0 ? 4000.0 : 0.0));
}

TEST_CASE("how a device shares a reduction out: blocks split per output, columns split per row, warps for short outputs") {
  // An H100 has 132 multiprocessors: 528 blocks wanted by output, 1056 by column.
  CHECK(fusor::gpu::reduction_chunks(1, std::int64_t{1} << 28, 132) == 528);    // a full sum: the device filled
  CHECK(fusor::gpu::reduction_chunks(1, 10000, 132) == 2);                      // none under 8192 elements
  CHECK(fusor::gpu::reduction_chunks(600, std::int64_t{1} << 20, 132) == 1);    // enough outputs already
  CHECK(fusor::gpu::reduction_chunks(1, std::int64_t{1} << 40, 300) == 1024);   // at most 1024
  CHECK(fusor::gpu::reduction_chunks(0, 5, 132) == 1);
  CHECK(fusor::gpu::reduction_chunks(3, 0, 132) == 1);
  CHECK(fusor::gpu::column_chunks(4096, 65536, 132) == 66);   // 16 blocks of columns, 1056 wanted
  CHECK(fusor::gpu::column_chunks(300, 3000, 132) == 47);     // 2 blocks; at least 64 rows each
  CHECK(fusor::gpu::column_chunks(300000, 10, 132) == 1);     // 1172 blocks of columns
  fusor::gpu::red_space s;
  s.nred = 4096;
  CHECK(fusor::gpu::by_warps(s));
  s.nred = 8193;
  CHECK_FALSE(fusor::gpu::by_warps(s));
  s.nred = 100;
  s.chunks = 2;
  CHECK_FALSE(fusor::gpu::by_warps(s));
  s.chunks = 1;
  s.by_columns = true;
  CHECK_FALSE(fusor::gpu::by_warps(s));
}

TEST_CASE_FIXTURE(fixture, "argmax ties and NaN: the first best position, as a sequential scan finds it") {
  const xt::xarray<float> v{{1, 7, 7, 2}, {3, std::nanf(""), 9, std::nanf("")}, {5, 5, 5, 5}};
  for (int k = 0; k < 2; ++k) {
    auto V = fusor::shared(v, {.name = "V", .space = spaces[k]});
    auto f = device_test::function(fusor::inputs(), fusor::outputs(fusor::argmax(V, 1), fusor::argmin(V, 1), fusor::argmax(V)));
    auto [amax, amin, flat] = f();
    CHECK(amax == xt::xarray<std::int64_t>{1, 1, 0});
    CHECK(amin == xt::xarray<std::int64_t>{0, 1, 0});
    CHECK(flat() == 5);
  }
}

TEST_CASE_FIXTURE(fixture, "empty reductions on a device: NaN for mean, the identity for sum, an error for max") {
  auto E = fusor::shared(xt::xarray<double>::from_shape({0, 3}), {.name = "E", .space = dev});
  auto f = device_test::function(fusor::inputs(), fusor::outputs(fusor::mean(E, 0), fusor::sum(E, 0)));
  auto [m, s] = f();
  REQUIRE(m.size() == 3);
  CHECK(std::isnan(m(0)));
  CHECK(s == xt::xarray<double>{0, 0, 0});
  auto g = device_test::function(fusor::inputs(), fusor::outputs(fusor::max(E, 0)));
  CHECK_THROWS_AS(g(), fusor::value_error);
}

TEST_CASE_FIXTURE(fixture, "dot on a device: every form, transposed operands as flags, integers wrapping") {
  const auto av = ramp({3, 4}), bv = ramp({4, 2}, -0.5), vv = ramp({4}, 0.2);
  xt::xarray<double> outs[2][5];
  for (int k = 0; k < 2; ++k) {
    auto A = fusor::shared(av, {.name = "A", .space = spaces[k]});
    auto B = fusor::shared(bv, {.name = "B", .space = spaces[k]});
    auto v = fusor::shared(vv, {.name = "v", .space = spaces[k]});
    auto f = device_test::function(
        fusor::inputs(), fusor::outputs(fusor::dot(A, B), fusor::dot(A, v), fusor::dot(v, B), fusor::dot(v, v),
                                        fusor::dot(fusor::transpose(B), fusor::transpose(A))));
    auto [mm, mv, vm, vdot, tt] = f();
    outs[k][0] = mm;
    outs[k][1] = mv;
    outs[k][2] = vm;
    outs[k][3] = xt::xarray<double>(vdot);
    outs[k][4] = tt;
  }
  for (int j = 0; j < 5; ++j) check_close(outs[1][j], outs[0][j], 1e-12);
  auto I = fusor::shared(xt::xarray<std::int32_t>{{2147483647, 2}, {3, 4}}, {.name = "I", .space = dev});
  auto g = device_test::function(fusor::inputs(), fusor::outputs(fusor::dot(I, I)));
  const xt::xarray<std::int32_t> r = g();
  // 2147483647 * 2147483647 + 2 * 3 wraps modulo 2^32, as NumPy's does.
  const std::uint32_t expect = static_cast<std::uint32_t>(2147483647u) * 2147483647u + 6u;
  CHECK(static_cast<std::uint32_t>(r(0, 0)) == expect);
}

TEST_CASE_FIXTURE(fixture, "integers wrap and casts truncate on a device; a negative integer exponent changes nothing") {
  auto I = fusor::shared(xt::xarray<std::int32_t>{2147483647, -2147483647 - 1, 7}, {.name = "I", .space = dev});
  auto F = fusor::shared(xt::xarray<double>{1.9, -1.9, 1e300}, {.name = "F", .space = dev});
  auto f = device_test::function(fusor::inputs(),
                           fusor::outputs(I + 1, -I, fusor::abs(I), fusor::cast<std::int32_t>(F), fusor::pow(I, 2)));
  auto [plus, neg, ab, cast, sq] = f();
  CHECK(plus == xt::xarray<std::int32_t>{-2147483647 - 1, -2147483647, 8});
  CHECK(neg == xt::xarray<std::int32_t>{-2147483647, -2147483647 - 1, -7});
  CHECK(ab == xt::xarray<std::int32_t>{2147483647, -2147483647 - 1, 7});
  CHECK(cast == xt::xarray<std::int32_t>{1, -1, -2147483647 - 1});  // 1e300: NumPy's -2^31, as on the host
  CHECK(sq(2) == 49);

  fusor::vector<std::int32_t> e{"e"};
  auto g = device_test::function(fusor::inputs(e), fusor::updates(fusor::update(I, fusor::pow(I, e))));
  const auto* before = I.get_value(fusor::borrow, fusor::internal_type).data();
  CHECK_THROWS_AS(g(xt::xarray<std::int32_t>{1, -1, 2}), fusor::value_error);
  CHECK(I.get_value() == xt::xarray<std::int32_t>{2147483647, -2147483647 - 1, 7});
  CHECK(I.get_value(fusor::borrow, fusor::internal_type).data() == before);
  g(xt::xarray<std::int32_t>{1, 1, 2});
  CHECK(I.get_value()(2) == 49);
}

TEST_CASE_FIXTURE(fixture, "where, clip, comparisons and NaN-ignoring selections on a device") {
  const xt::xarray<double> v{-2, 0.5, std::nan(""), 3};
  xt::xarray<double> outs[2][4];
  for (int k = 0; k < 2; ++k) {
    auto V = fusor::shared(v, {.name = "V", .space = spaces[k]});
    auto f = device_test::function(fusor::inputs(),
                             fusor::outputs(fusor::where(V > 0.0, V, -V), fusor::clip(V, -1.0, 1.0),
                                            fusor::fmax(V, 0.0), fusor::maximum(0.0, V)));
    auto [w, c, fm, mx] = f();
    outs[k][0] = w;
    outs[k][1] = c;
    outs[k][2] = fm;
    outs[k][3] = mx;
  }
  for (int j = 0; j < 4; ++j) check_close(outs[1][j], outs[0][j]);
  CHECK(outs[1][2](2) == 0.0);          // fmax ignores NaN
  CHECK(std::isnan(outs[1][3](2)));     // maximum keeps it, from either side
}

TEST_CASE_FIXTURE(fixture, "every expression operation on a device equals the host's") {
  const xt::xarray<double> av = ramp({3, 4}, 0.3, 0.21), bv = ramp({4}, -0.8, 0.37);
  const xt::xarray<std::int32_t> iv{{7, -7, 9, 0}, {-3, 5, 6, 11}, {2, -1, 8, 4}};
  xt::xarray<double> outs[2][20];
  for (int k = 0; k < 2; ++k) {
    CAPTURE(spaces[k].str());
    auto A = fusor::shared(av, {.name = "A", .space = spaces[k]});
    auto b = fusor::shared(bv, {.name = "b", .space = spaces[k]});
    auto I = fusor::shared(iv, {.name = "I", .space = spaces[k]});
    auto f = device_test::function(
        fusor::inputs(),
        fusor::outputs(A / b - fusor::sqrt(A), fusor::expm1(A) + fusor::log1p(A), fusor::sin(A) * fusor::cos(b),
                       fusor::tan(b), fusor::softplus(A - 1.0), fusor::pow(A, b), fusor::minimum(A, b),
                       fusor::fmin(A, 0.5), fusor::cast<double>(I % 3), fusor::cast<double>((A > b) && !(I < 0)),
                       fusor::cast<double>((A == A) || (I != I)), fusor::cast<double>(A <= 0.9),
                       fusor::cast<double>(A >= b), fusor::transpose(A) * 2.0, fusor::reshape(A + 1.0, {2, -1}),
                       fusor::transpose(fusor::exp(A), {1, 0}), -fusor::abs(b), fusor::cast<double>(I / 2),
                       fusor::where(I > 0, A, b), fusor::cast<double>(fusor::pow(I, 2))));
    auto r = f();
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      ((outs[k][J] = xt::xarray<double>(std::get<J>(r))), ...);
    }(std::make_index_sequence<20>{});
  }
  for (int j = 0; j < 20; ++j) {
    CAPTURE(j);
    check_close(outs[1][j], outs[0][j], 1e-12);
  }
}

TEST_CASE_FIXTURE(fixture, "views on a device: offsets and strides in the device kernels, as on the host") {
  using fusor::_;
  using fusor::all;
  using fusor::newaxis;
  using fusor::range;
  const auto uv = ramp({6, 5}, -1.0, 0.3);
  xt::xarray<double> outs[2][6];
  for (int k = 0; k < 2; ++k) {
    auto U = fusor::shared(uv, {.name = "U", .space = spaces[k]});
    auto f = device_test::function(
        fusor::inputs(),
        fusor::outputs(fusor::view(U, range(1, -1), range(_, _, -1)),
                       (fusor::view(U, range(_, -2), range(1, -1)) + fusor::view(U, range(2, _), range(1, -1))) / 2.0,
                       fusor::view(U, 3) * fusor::view(U, all, 2, newaxis),
                       fusor::sum(fusor::view(U, range(_, _, 2)), 1),
                       fusor::view(fusor::exp(U), range(2, 4), -1),
                       fusor::dot(fusor::view(U, range(1, 3)), fusor::view(U, 0))));
    auto r = f();
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      ((outs[k][J] = xt::xarray<double>(std::get<J>(r))), ...);
    }(std::make_index_sequence<6>{});
  }
  for (int j = 0; j < 6; ++j) {
    CAPTURE(j);
    check_close(outs[1][j], outs[0][j], 1e-12);
  }
}

TEST_CASE_FIXTURE(fixture, "updates of views on a device: the stencil through a spare buffer, in place, reversed") {
  using fusor::_;
  using fusor::range;
  const auto uv = ramp({7, 6}, -2.0, 0.37);
  const auto xv = ramp({9}, 1.0, 0.5);
  xt::xarray<double> u_after[2], x_after[2];
  bool in_place[2] = {};
  for (int k = 0; k < 2; ++k) {
    auto U = fusor::shared(uv, {.name = "u", .space = spaces[k]});
    auto X = fusor::shared(xv, {.name = "x", .space = spaces[k]});
    auto v = [&](auto rows, auto cols) { return fusor::view(U, rows, cols); };
    auto stencil = device_test::function(
        fusor::inputs(),
        fusor::updates(fusor::update(v(range(1, -1), range(1, -1)),
                                     (v(range(_, -2), range(1, -1)) + v(range(2, _), range(1, -1)) +
                                      v(range(1, -1), range(_, -2)) + v(range(1, -1), range(2, _))) *
                                         0.25),
                       fusor::update(fusor::view(X, range(_, _, -1)), X * 2.0)));
    auto scale = device_test::function(
        fusor::inputs(), fusor::updates(fusor::update(v(range(1, -1), range(_, _, 2)), v(range(1, -1), range(_, _, 2)) - 1.0)));
    for (int step = 0; step < 5; ++step) stencil();
    scale();
    in_place[k] = scale.update_was_in_place(0);
    u_after[k] = U.get_value();
    x_after[k] = X.get_value();
  }
  CHECK(in_place[0]);
  CHECK(in_place[1]);
  check_close(u_after[1], u_after[0], 1e-12);
  check_close(x_after[1], x_after[0], 1e-12);
}

TEST_CASE_FIXTURE(fixture, "constructors on a device: the flat index computed in the kernel, as on the host") {
  const auto wv = ramp({3, 4}, 0.5, 0.25);
  xt::xarray<double> outs[2][5];
  for (int k = 0; k < 2; ++k) {
    auto W = fusor::shared(wv, {.name = "W", .space = spaces[k]});
    fusor::vector<std::int64_t> y{"y"};
    auto f = device_test::function(
        fusor::inputs(y),
        fusor::outputs(W + fusor::cast<double>(fusor::arange(4)), W * fusor::eye(3, 4, 1),
                       fusor::sum(fusor::linspace(0.0, 1.0, 9) + fusor::zeros({3, 9}), 0), fusor::one_hot(y, 4),
                       fusor::full_like(W, 2) - W));
    auto r = f(xt::xtensor<std::int64_t, 1>{3, 1, 0, 9});
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      ((outs[k][J] = xt::xarray<double>(std::get<J>(r))), ...);
    }(std::make_index_sequence<5>{});
  }
  for (int j = 0; j < 5; ++j) {
    CAPTURE(j);
    check_close(outs[1][j], outs[0][j], 1e-12);
  }
  CHECK(outs[0][1](0, 1) == wv(0, 1));
  CHECK(outs[0][3](0, 3) == 1.0);
}

TEST_CASE_FIXTURE(fixture, "random streams on a device: the same numbers as on the host, the counter advanced there") {
  xt::xarray<double> outs[2][3];
  std::uint64_t calls[2] = {};
  for (int k = 0; k < 2; ++k) {
    fusor::random_stream rng(11, spaces[k]);
    auto W = fusor::shared(xt::xtensor<double, 2>(xt::zeros<double>({5, 7})), {.name = "W", .space = spaces[k]});
    auto f = device_test::function(
        fusor::inputs(),
        fusor::outputs(rng.uniform({5, 7}, -2.0, 2.0), fusor::cast<double>(rng.bernoulli(0.25, {9}))),
        fusor::updates(fusor::update(W, W + rng.normal({5, 7}, 1.0, 0.1))));
    f();
    auto r = f();
    outs[k][0] = std::get<0>(r);
    outs[k][1] = std::get<1>(r);
    outs[k][2] = W.get_value();
    calls[k] = rng.state().get_value()();
  }
  for (int j = 0; j < 3; ++j) {
    CAPTURE(j);
    check_close(outs[1][j], outs[0][j], 1e-15);
  }
  CHECK(calls[0] == 2);
  CHECK(calls[1] == 2);
}

TEST_CASE_FIXTURE(fixture, "joins on a device: concatenate, stack, roll and pad moved by the device runtime") {
  const auto av = ramp({3, 4}, -1.0, 0.5);
  xt::xarray<double> outs[2][5];
  for (int k = 0; k < 2; ++k) {
    auto A = fusor::shared(xt::xtensor<double, 2>(av), {.name = "a", .space = spaces[k]});
    auto f = device_test::function(
        fusor::inputs(),
        fusor::outputs(fusor::concatenate(std::tuple(A, A * 2.0), 1), fusor::stack(std::tuple(A, A + 1.0), 0),
                       fusor::roll(A, -5, 1), fusor::pad(A, {{1, 0}, {2, 1}}, 7.0),
                       fusor::pad(fusor::transpose(A), 2, fusor::edge)));
    auto r = f();
    [&]<std::size_t... J>(std::index_sequence<J...>) {
      ((outs[k][J] = xt::xarray<double>(std::get<J>(r))), ...);
    }(std::make_index_sequence<5>{});
  }
  for (int j = 0; j < 5; ++j) {
    CAPTURE(j);
    check_close(outs[1][j], outs[0][j], 1e-15);
  }
  CHECK(outs[0][3](0, 0) == 7.0);
  CHECK(outs[0][4](0, 0) == av(0, 0));
}

TEST_CASE_FIXTURE(fixture, "take on a device: indices read and checked, blocks moved on the device") {
  const auto xv = ramp({6, 4}, -1.0, 0.25);
  xt::xarray<double> outs[2][2];
  bool refused[2] = {};
  for (int k = 0; k < 2; ++k) {
    auto X = fusor::shared(xt::xtensor<double, 2>(xv), {.name = "X", .space = spaces[k]});
    fusor::vector<std::int64_t> idx{"idx"};
    auto f = device_test::function(fusor::inputs(idx),
                                   fusor::outputs(fusor::take(X, idx, 0) * 2.0, fusor::take(fusor::transpose(X), idx, 1)));
    auto r = f(xt::xtensor<std::int64_t, 1>{5, -6, 2, 2});
    outs[k][0] = std::get<0>(r);
    outs[k][1] = std::get<1>(r);
    try {
      f(xt::xtensor<std::int64_t, 1>{6});
    } catch (const fusor::index_error&) {
      refused[k] = true;
    }
  }
  for (int j = 0; j < 2; ++j) {
    CAPTURE(j);
    check_close(outs[1][j], outs[0][j], 1e-15);
  }
  CHECK(refused[0]);
  CHECK(refused[1]);
}

TEST_CASE_FIXTURE(fixture, "gradients through selections on a device: places moved, take's scatter added there") {
  const auto xv = ramp({6, 4}, -1.0, 0.25);
  xt::xarray<double> outs[2];
  for (int k = 0; k < 2; ++k) {
    auto X = fusor::shared(xt::xtensor<double, 2>(xv), {.name = "X", .space = spaces[k]});
    fusor::vector<std::int64_t> idx{"idx"};
    using fusor::range;
    using fusor::_;
    const auto cost = fusor::sum(fusor::exp(fusor::take(X, idx) * 0.5)) +
                      fusor::sum(fusor::view(X, range(1, _), range(_, _, 2)) * fusor::view(X, range(_, -1), range(_, _, 2))) +
                      fusor::sum(fusor::sin(fusor::concatenate(std::tuple(X, fusor::roll(X, 1, 0)), 1))) +
                      fusor::sum(fusor::diagonal(X) * fusor::diagonal(X, -1)) + fusor::sum(fusor::pad(X, 1, 2.0) * 0.25);
    auto f = device_test::function(fusor::inputs(idx), fusor::outputs(fusor::grad(cost, X)));
    outs[k] = f(xt::xtensor<std::int64_t, 1>{5, -6, 2, 2, 0});
  }
  REQUIRE(outs[0].shape() == std::vector<std::size_t>{6, 4});
  check_close(outs[1], outs[0], 1e-12);
}

TEST_CASE_FIXTURE(fixture, "strided host arguments of a device function: gathered on the host, uploaded") {
  xt::xtensor<double, 2> data = ramp({6, 5}, -2.0, 0.5);
  auto v = xt::view(data, xt::range(5, 0, -2), xt::range(1, 4));
  xt::xarray<double> outs[2];
  for (int k = 0; k < 2; ++k) {
    auto W = fusor::shared(xt::xtensor<double, 1>{1.0, -1.0, 2.0}, {.name = "W", .space = spaces[k]});
    fusor::matrix<double> x{"x"};
    auto f = device_test::function(fusor::inputs(x), fusor::outputs(x * W));
    outs[k] = f(v);
  }
  check_close(outs[1], outs[0], 1e-15);
  CHECK(outs[0] == xt::xtensor<double, 2>(v * xt::xtensor<double, 1>{1.0, -1.0, 2.0}));
}

// ---------------------------------------------------------------- NumPy's values on a device
// The cases of test_numpy_cases.cpp and test_numpy_cases_grad.cpp, on a
// device (its loop: the emulation's scalar loop, or CUDA's pow), against the
// values NumPy and SciPy give (reference/numpy_cases.hpp).

namespace {
/// NaN where NaN, the same number (and sign of zero) elsewhere.
bool same_value(double got, double want) {
  if (std::isnan(want)) return std::isnan(got);
  return got == want && std::signbit(got) == std::signbit(want);
}
/// Units in the last place between two finite doubles of one sign.
std::int64_t ulps_apart(double a, double b) {
  std::int64_t ia = 0, ib = 0;
  std::memcpy(&ia, &a, sizeof a);
  std::memcpy(&ib, &b, sizeof b);
  return ia > ib ? ia - ib : ib - ia;
}
/// pow on a device as documented: C's special values exactly (a zero, an
/// infinity or a NaN; 1 for a zero exponent or a base of 1), other results
/// within CUDA's bound for double pow, 2 ulp (C's pow, which NumPy calls, is
/// correctly rounded; CUDA's is not). The emulated device runs C's pow: exact.
bool device_pow_value(double got, double want, double base, double exponent, bool emulated) {
  const bool special = std::isnan(want) || std::isinf(want) || want == 0 || exponent == 0 || base == 1;
  if (special || emulated) return same_value(got, want);
  return std::isfinite(got) && std::signbit(got) == std::signbit(want) && ulps_apart(got, want) <= 2;
}
xt::xarray<double> from(const std::vector<double>& v) {
  xt::xarray<double> a = xt::xarray<double>::from_shape({v.size()});
  std::copy(v.begin(), v.end(), a.begin());
  return a;
}
}  // namespace

TEST_CASE_FIXTURE(fixture, "pow's special values, arange's fill and logsumexp at infinities on a device, as NumPy's") {
  auto X = fusor::shared(from(numpy_cases::pow_base), {.name = "X", .space = dev});
  auto Y = fusor::shared(from(numpy_cases::pow_exponent), {.name = "Y", .space = dev});
  auto f = device_test::function(fusor::inputs(), fusor::outputs(fusor::pow(X, Y), fusor::pow(fusor::cast<float>(X), fusor::cast<float>(Y))));
  // References, not a structured binding: INFO captures them in a lambda, which
  // clang before 16 does not allow for a binding.
  const auto results = f();
  const auto& p64 = std::get<0>(results);
  const auto& p32 = std::get<1>(results);
  for (std::size_t i = 0; i < numpy_cases::pow_f64.size(); ++i) {
    INFO("pow(", numpy_cases::pow_base[i], ", ", numpy_cases::pow_exponent[i], "): ", p64(i), " and ", p32(i),
         " (float32); NumPy: ", numpy_cases::pow_f64[i], " and ", numpy_cases::pow_f32[i]);
    CHECK(device_pow_value(p64(i), numpy_cases::pow_f64[i], numpy_cases::pow_base[i], numpy_cases::pow_exponent[i], emulated()));
    CHECK(same_value(p32(i), static_cast<double>(numpy_cases::pow_f32[i])));
  }

  auto R = fusor::shared(xt::xarray<double>{0.0}, {.name = "R", .space = dev});
  auto g = device_test::function(fusor::inputs(), fusor::outputs(R + fusor::arange(-5.0, 1.1, 1.2)));
  const xt::xarray<double> r = g();
  REQUIRE(r.size() == numpy_cases::arange_f64.size());
  for (std::size_t i = 0; i < r.size(); ++i) CHECK(r(i) == numpy_cases::arange_f64[i]);

  const double inf = std::numeric_limits<double>::infinity();
  auto M = fusor::shared(xt::xarray<double>{{-inf, -inf}, {0.0, 0.0}, {inf, 1.0}}, {.name = "M", .space = dev});
  auto h = device_test::function(fusor::inputs(), fusor::outputs(fusor::logsumexp(M, 1), fusor::log(fusor::sum(fusor::exp(M), 1))));
  auto [lse, rewritten] = h();
  for (const auto* v : {&lse, &rewritten}) {
    CHECK((*v)(0) == numpy_cases::lse_rows[0]);
    CHECK((*v)(1) == doctest::Approx(numpy_cases::lse_rows[1]).epsilon(1e-15));
    CHECK((*v)(2) == numpy_cases::lse_pos_inf[0]);
  }
}

TEST_CASE_FIXTURE(fixture, "stack of a braced list and an array constant on a device") {
  using vec = xt::xtensor<double, 1>;
  using mat = xt::xtensor<double, 2>;
  auto A = fusor::shared(vec{1, 2, 3}, {.name = "A", .space = dev});
  auto B = fusor::shared(vec{4, 5, 6}, {.name = "B", .space = dev});
  const auto c = fusor::constant(vec{10, 20, 30});  // a host constant, read on the device
  auto f = device_test::function(fusor::inputs(), fusor::outputs(fusor::stack({A, B}, 1), A * c));
  auto [s, ac] = f();
  CHECK(s == mat{{1, 4}, {2, 5}, {3, 6}});
  CHECK(ac == vec{10, 40, 90});
}
