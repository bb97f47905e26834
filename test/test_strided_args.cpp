// Strided arguments: xtensor views, strided views, transposes and adaptors
// passed to functions and eval, read where they are (no copy) when they have
// the input's dtype, converted through their strides otherwise; never written,
// even lent with In(x, borrow); a plan per layout.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <xtensor/xadapt.hpp>
#include <xtensor/xmanipulation.hpp>
#include <xtensor/xstrided_view.hpp>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>

namespace {
xt::xtensor<double, 2> offset_ramp(std::size_t rows, std::size_t cols) {
  xt::xtensor<double, 2> a = xt::xtensor<double, 2>::from_shape({rows, cols});
  for (std::size_t i = 0; i < a.size(); ++i) a.data()[i] = static_cast<double>(i) * 0.25 - 1.0;
  return a;
}
}  // namespace

TEST_CASE("xtensor views as function arguments: read in place through their strides") {
  auto data = offset_ramp(8, 6);
  fusor::matrix<double> x{"x"};
  auto W = fusor::shared(xt::xtensor<double, 1>{1, 2, 3, 4, 5, 6}, "W");
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(x * W + 1.0));
  auto rows = xt::view(data, xt::range(2, 5), xt::all());  // a minibatch of rows: contiguous rows
  CHECK(f(rows) == xt::xtensor<double, 2>(rows * xt::xtensor<double, 1>{1, 2, 3, 4, 5, 6} + 1.0));
  CHECK(f.last_plan().arena_bytes == 0);  // no copy of the argument
  auto stepped = xt::view(data, xt::range(7, 0, -3), xt::range(0, 6));  // negative row step
  CHECK(f(stepped) == xt::xtensor<double, 2>(stepped * xt::xtensor<double, 1>{1, 2, 3, 4, 5, 6} + 1.0));
  auto g = fusor::function(fusor::inputs(x), fusor::outputs(fusor::sum(x, 0)));
  auto cols = xt::view(data, xt::all(), xt::range(1, 4));
  CHECK(xt::allclose(g(cols), xt::sum(cols, {0})));
  auto turned = xt::transpose(data);
  CHECK(xt::allclose(g(turned), xt::sum(turned, {0})));
  auto sv = xt::strided_view(data, {xt::range(0, 8, 2), xt::all()});
  CHECK(xt::allclose(g(sv), xt::sum(sv, {0})));
  // Back to a contiguous argument: another plan.
  CHECK(xt::allclose(g(data), xt::sum(data, {0})));
}

TEST_CASE("adaptors over a pointer, eval bindings, and conversions through strides") {
  std::vector<float> raw = {1, 2, 3, 4, 5, 6};
  auto adapted = xt::adapt(raw.data(), raw.size(), xt::no_ownership(), std::vector<std::size_t>{2, 3});
  fusor::matrix<double> x{"x"};
  // float32 into a float64 input: converted, reading through the layout.
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(x * 2.0));
  CHECK(f(adapted) == xt::xtensor<double, 2>{{2, 4, 6}, {8, 10, 12}});
  auto data = offset_ramp(4, 5);
  auto v = xt::view(data, xt::range(1, 3), xt::range(4, 0, -2));
  CHECK(fusor::eval(x + 1.0, x = v) == xt::xtensor<double, 2>(v + 1.0));
  auto fv = xt::view(adapted, xt::all(), 1);
  fusor::vector<double> y{"y"};
  CHECK(fusor::eval(y * 10.0, y = fv) == xt::xtensor<double, 1>{20, 50});
}

TEST_CASE("a strided argument lent with In(x, borrow) is never written") {
  auto data = offset_ramp(4, 4);
  const auto before = data;
  fusor::matrix<double> x{"x"};
  auto f = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow)), fusor::outputs(fusor::Out(x * 3.0, fusor::borrow)));
  auto v = xt::view(data, xt::range(0, 4, 2), xt::all());
  auto r = f(v);
  CHECK(r == xt::xtensor<double, 2>(v * 3.0));
  CHECK(data == before);
}

namespace {
/// A registered view type: a column of a row-major matrix, declaring its strides.
struct column {
  const double* first;
  std::size_t rows;
  std::size_t stride;
};
}  // namespace

template <>
struct fusor::shared_constructor<column> {
  using element_type = double;
  static constexpr int rank = 1;
  static dims shape(const column& c) { return {c.rows}; }
  static const double* data(const column& c) noexcept { return c.first; }
  static std::array<index_t, max_rank> strides(const column& c) {
    std::array<index_t, max_rank> s{};
    s[0] = static_cast<index_t>(c.stride);
    return s;
  }
  static column make(const dims&, const double*) { return {}; }
};

TEST_CASE("a registered type that declares strides is read through them") {
  auto data = offset_ramp(5, 4);
  const column c{data.data() + 2, 5, 4};  // column 2
  fusor::vector<double> y{"y"};
  auto f = fusor::function(fusor::inputs(y), fusor::outputs(y * 2.0));
  CHECK(f(c) == xt::xtensor<double, 1>(xt::view(data, xt::all(), 2) * 2.0));
  CHECK(f.last_plan().arena_bytes == 0);
  CHECK(fusor::eval(fusor::sum(y), y = c) == doctest::Approx(xt::sum(xt::view(data, xt::all(), 2))()));
}

TEST_CASE("a lent argument whose bytes a shared variable holds is not written") {
  auto S = fusor::shared(xt::xtensor<double, 1>{1, 2, 3}, "s");
  auto held = S.get_value(fusor::borrow, fusor::internal_type);  // the variable's own buffer
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(fusor::In(x, fusor::borrow)), fusor::outputs(fusor::Out(x * 2.0, fusor::borrow)));
  auto r = f(held);
  CHECK(r == xt::xtensor<double, 1>{2, 4, 6});
  CHECK(S.get_value() == xt::xtensor<double, 1>{1, 2, 3});
  CHECK_FALSE(f.output_was_in_place(0));
}

TEST_CASE("an empty strided argument (a transposed empty array) is bound without touching its pointer") {
  // Found by the differential tests under UBSan: binding it applied the
  // offset of its lowest element, -stride, to a null data pointer.
  fusor::matrix<double> m{"m"};
  auto f = fusor::function(fusor::inputs(m), fusor::outputs(m * 2.0, fusor::sum(m, 0)));
  const xt::xtensor<double, 2> empty = xt::xtensor<double, 2>::from_shape({3, 0});
  auto [twice, sums] = f(xt::transpose(empty));  // shape (0, 3)
  CHECK(twice.shape()[0] == 0);
  CHECK(twice.shape()[1] == 3);
  CHECK(sums == xt::xtensor<double, 1>{0.0, 0.0, 0.0});
}
