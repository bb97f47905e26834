// The planner itself: which nodes a graph has (common sub-expressions found
// once), which steps a plan runs in which order, which slots they read and
// write, where temporaries sit in the arena, which writes are in place and
// why not — and when a function re-plans. Also eval / assign, which go
// through the same planner.
#define FUSOR_CHECKED 1
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

#include "test_util.hpp"

namespace {
using fusor_test::contains;

int count_kind(const fusor::plan& p, fusor::step_kind k) {
  return static_cast<int>(std::count_if(p.steps.begin(), p.steps.end(), [&](const auto& s) { return s.kind == k; }));
}
int first_of(const fusor::plan& p, fusor::step_kind k) {
  for (std::size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].kind == k) return static_cast<int>(i);
  return -1;
}
int count_nodes(const fusor::graph& g, fusor::node_kind k) {
  return static_cast<int>(std::count_if(g.nodes.begin(), g.nodes.end(), [&](const auto& n) { return n.kind == k; }));
}
using vec = xt::xtensor<double, 1>;
using mat = xt::xtensor<double, 2>;

/// One gradient step of a logistic regression (labels -1 and 1) on `w`,
/// returning the cost: a plan with a forward dot, reductions, the backward
/// dot and an update in place.
auto logistic_regression_step(fusor::shared<vec>& w) {
  fusor::matrix<double> x{"x"};
  fusor::vector<double> y{"y"};
  const auto cost = fusor::mean(fusor::softplus(-y * fusor::dot(x, w)));
  return fusor::function(fusor::inputs(x, y), fusor::outputs(cost),
                         fusor::updates(fusor::update(w, w - 0.5 * fusor::grad(cost, w))));
}
}  // namespace

TEST_CASE("the graph has one node per distinct sub-expression: a dot used three times is computed once") {
  fusor::matrix<double> x{"x"};
  fusor::vector<double> y{"y"};
  auto w = fusor::shared(vec{1, 2}, "w");
  auto p1 = fusor::sigmoid(fusor::dot(x, w));
  auto f = fusor::function(fusor::inputs(x, y),
                           fusor::outputs(fusor::mean(p1 - y), fusor::Out(p1 * 2.0, fusor::borrow)),
                           fusor::updates(fusor::update(w, w - 0.1 * fusor::dot(fusor::transpose(x), p1 - y))));
  CHECK(count_nodes(f.graph(), fusor::node_kind::dot) == 2);   // dot(x, w) once, dot(x.T, .) once
  CHECK(count_nodes(f.graph(), fusor::node_kind::input) == 2);
  CHECK(count_nodes(f.graph(), fusor::node_kind::shared) == 1);
  (void)f(mat{{1, 0}, {0, 1}, {1, 1}}, vec{1, 0, 1});
  const auto& p = f.last_plan();
  CHECK(count_kind(p, fusor::step_kind::dot) == 2);
  CHECK(count_kind(p, fusor::step_kind::reduce) == 1);
  // The transpose goes to BLAS as a flag: no copy of x; the compound operand
  // p1 - y is materialised once.
  REQUIRE(count_kind(p, fusor::step_kind::materialize) == 1);
  const auto& m = p.steps[static_cast<std::size_t>(first_of(p, fusor::step_kind::materialize))];
  CHECK(f.graph()[m.node].kind == fusor::node_kind::map);
  // Temporaries first, then outputs, then the update, in place, last: here
  // the backward product itself, accumulated into w's buffer by BLAS.
  CHECK(first_of(p, fusor::step_kind::update) == -1);
  CHECK(p.steps.back().kind == fusor::step_kind::dot);
  CHECK(p.steps.back().accumulate);
  CHECK(p.steps.back().in_place);
  CHECK(p.steps.back().dest == p.shared_slot[0]);
  CHECK(f.update_was_in_place(0));
}

TEST_CASE("steps read and write slots: inputs, shared variables, temporaries, outputs, spares") {
  fusor::vector<double> x{"x"};
  auto s = fusor::shared(vec{1, 2, 3}, "s");
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(x * fusor::sum(s)),
                           fusor::updates(fusor::update(s, fusor::exp(s) + x)));
  auto view = s.get_value(fusor::borrow);  // a held view: the update cannot be in place
  (void)f(vec{1, 1, 1});
  const auto& p = f.last_plan();
  const auto& reduce = p.steps[static_cast<std::size_t>(first_of(p, fusor::step_kind::reduce))];
  CHECK(p.slots[static_cast<std::size_t>(reduce.dest)].kind == fusor::slot_kind::temporary);
  CHECK(p.slots[static_cast<std::size_t>(reduce.reads[0])].kind == fusor::slot_kind::shared);
  const auto& out = p.steps[static_cast<std::size_t>(first_of(p, fusor::step_kind::output))];
  CHECK(p.slots[static_cast<std::size_t>(out.dest)].kind == fusor::slot_kind::output);
  CHECK(std::count(out.reads.begin(), out.reads.end(), reduce.dest) == 1);
  const auto& upd = p.steps[static_cast<std::size_t>(first_of(p, fusor::step_kind::update))];
  CHECK_FALSE(upd.in_place);
  CHECK(p.slots[static_cast<std::size_t>(upd.dest)].kind == fusor::slot_kind::spare);
  CHECK(p.steps.back().kind == fusor::step_kind::install);
  CHECK(contains(p.updates[0].why, "view"));
  CHECK(view(0) == 1.0);  // the held view keeps the old values
}

TEST_CASE("in-place decisions and their reasons") {
  auto W = fusor::shared(mat{{1, 2}, {3, 4}}, "W");
  auto M = fusor::shared(mat{{1, 2}, {3, 4}}, "M");
  auto A = fusor::shared(vec{1, 2}, "A");
  auto B = fusor::shared(vec{3, 4}, "B");
  auto f = fusor::function(fusor::inputs(), fusor::updates(fusor::update(W, W * 2.0),
                                                          fusor::update(M, fusor::transpose(M) + 1.0),
                                                          fusor::update(A, B), fusor::update(B, A)));
  f();
  const auto& p = f.last_plan();
  CHECK(p.updates[0].in_place);
  CHECK_FALSE(p.updates[1].in_place);
  CHECK(contains(p.updates[1].why, "permuted"));
  CHECK(p.updates[2].transfer_from == 3);  // a swap: each takes the other's buffer
  CHECK(p.updates[3].transfer_from == 2);
  CHECK(count_kind(p, fusor::step_kind::transfer) == 2);
  CHECK(W.get_value() == mat{{2, 4}, {6, 8}});
  CHECK(M.get_value() == mat{{2, 4}, {3, 5}});
  CHECK(A.get_value() == vec{3, 4});
  CHECK(B.get_value() == vec{1, 2});
  const std::string text = f.plan();
  CHECK(contains(text, "update of shared variable 'W': in place"));
  CHECK(contains(text, "update of shared variable 'M': not in place"));
  CHECK(contains(text, "takes the old buffer of shared variable 'B'"));
}

TEST_CASE("temporaries whose lifetimes do not overlap share arena bytes") {
  fusor::matrix<double> a{"a"}, b{"b"}, c{"c"}, d{"d"};
  auto f = fusor::function(fusor::inputs(a, b, c, d), fusor::outputs(fusor::dot(fusor::dot(fusor::dot(a, b), c), d)));
  const mat i2 = {{1, 0}, {0, 1}};
  const mat r = f(mat{{1, 2}, {3, 4}}, i2, i2, i2);
  CHECK(r == mat{{1, 2}, {3, 4}});
  const auto& p = f.last_plan();
  std::vector<int> dots;
  for (const auto& s : p.steps)
    if (s.kind == fusor::step_kind::dot) dots.push_back(s.dest);
  REQUIRE(dots.size() == 3);
  const auto& t0 = p.slots[static_cast<std::size_t>(dots[0])];
  const auto& t2 = p.slots[static_cast<std::size_t>(dots[2])];
  CHECK(t0.last < t2.first);          // a(b) is dead when the third dot is written
  CHECK(t2.offset == t0.offset);      // so the third reuses its bytes
  CHECK(p.arena_bytes < 3 * 64 * 2);  // two live temporaries at most, 64-byte slots
}

TEST_CASE("outputs of one shape are one fused pass") {
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(x + 1.0, x * 2.0, fusor::exp(x)));
  auto [a, b, c] = f(vec{0, 1});
  CHECK(a == vec{1, 2});
  CHECK(b == vec{0, 2});
  CHECK(c(0) == 1.0);
  const auto& p = f.last_plan();
  CHECK(count_kind(p, fusor::step_kind::outputs) == 1);
  CHECK(p.steps[0].group.size() == 3);
}

TEST_CASE("a plan is built once per signature, and kept for alternating shapes") {
  fusor::vector<double> x{"x"};
  auto s = fusor::shared(vec{0, 0}, "s");
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::Out(fusor::sum(x), fusor::borrow)));
  (void)f(vec{1, 2});
  (void)f(vec{3, 4});
  CHECK(f.plans_built() == 1);
  (void)f(vec{1, 2, 3});
  CHECK(f.plans_built() == 2);
  for (int i = 0; i < 5; ++i) {
    CHECK(f(vec{1, 2}).value() == 3.0);
    CHECK(f(vec{1, 2, 3}).value() == 6.0);
  }
  CHECK(f.plans_built() == 2);
  // An argument of another dtype is another signature: a conversion step.
  CHECK(f(xt::xtensor<float, 1>{1.5f, 2.5f}).value() == 4.0);
  CHECK(f.plans_built() == 3);
  CHECK(count_kind(f.last_plan(), fusor::step_kind::convert) == 1);
  (void)s;
}

TEST_CASE("an integer pow's exponent is checked first, before anything is written") {
  fusor::vector<std::int64_t> e{"e"};
  auto w = fusor::shared(xt::xtensor<std::int64_t, 1>{2, 3}, "w");
  auto f = fusor::function(fusor::inputs(e), fusor::updates(fusor::update(w, fusor::pow(w, e + 1))));
  f(xt::xtensor<std::int64_t, 1>{1, 0});
  CHECK(w.get_value() == xt::xtensor<std::int64_t, 1>{4, 3});
  CHECK(f.last_plan().steps.front().kind == fusor::step_kind::check);
  CHECK_THROWS_AS(f(xt::xtensor<std::int64_t, 1>{-3, 0}), fusor::value_error);
  CHECK(w.get_value() == xt::xtensor<std::int64_t, 1>{4, 3});
}

TEST_CASE("assign follows the functions' in-place policy: a live borrowed view keeps its values") {
  auto W = fusor::shared(vec{1, 2, 3}, "W");
  const void* before = W.get_value(fusor::borrow).data();
  fusor::assign(W, W * 2.0);  // no view held: in place
  CHECK(W.get_value(fusor::borrow).data() == before);
  CHECK(W.get_value() == vec{2, 4, 6});
  {
    auto view = W.get_value(fusor::borrow);
    fusor::assign(W, W * 2.0);  // a view is held: fresh storage, the view unchanged
    CHECK(view == vec{2, 4, 6});
    CHECK(W.get_value() == vec{4, 8, 12});
    CHECK(W.get_value(fusor::borrow).data() != view.data());
  }
  // The same expression type over other variables and constants: re-planned, right.
  auto V = fusor::shared(vec{1, 1, 1}, "V");
  fusor::assign(V, V * 3.0);
  CHECK(V.get_value() == vec{3, 3, 3});
  CHECK(W.get_value() == vec{4, 8, 12});
}

TEST_CASE("eval plans once per expression type and leaves, and re-plans for others") {
  fusor::vector<double> x{"x"};
  auto a = fusor::shared(vec{1, 2}, "a");
  auto b = fusor::shared(vec{10, 20}, "b");
  for (int i = 0; i < 3; ++i) {
    const vec ra = fusor::eval(x * a + 1.0, x = vec{2, 2});
    CHECK(ra == vec{3, 5});
    const vec rb = fusor::eval(x * b + 1.0, x = vec{2, 2});  // same type, another variable
    CHECK(rb == vec{21, 41});
    const vec rc = fusor::eval(x * b + 2.0, x = vec{1, 1});  // another constant
    CHECK(rc == vec{12, 22});
  }
}

TEST_CASE("a steady call reuses the last plan and slots; anything that could invalidate them is noticed") {
  fusor::vector<double> x{"x"};
  auto w = fusor::shared(vec{1, 2, 3}, "w");
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::Out(w * x, fusor::borrow)),
                           fusor::updates(fusor::update(w, w + 1.0)));
  vec a{1, 1, 1}, b{2, 2, 2};
  CHECK(f(a) == vec{1, 2, 3});
  CHECK(f(a) == vec{2, 3, 4});  // steady: same argument, w written in place
  CHECK(f.update_was_in_place(0));
  CHECK(f(b) == vec{6, 8, 10});  // another argument buffer: rebound
  // set_value replaces w's buffer: the next call reads the new one.
  w.set_value(vec{10, 20, 30});
  CHECK(f(a) == vec{10, 20, 30});
  CHECK(w.get_value() == vec{11, 21, 31});
  // A view of w appears: the update is no longer in place, the view keeps its values.
  {
    auto view = w.get_value(fusor::borrow);
    CHECK(f(a) == vec{11, 21, 31});
    CHECK_FALSE(f.update_was_in_place(0));
    CHECK(view == vec{11, 21, 31});
    CHECK(w.get_value() == vec{12, 22, 32});
  }
  // The view is gone: in place again (w's buffer is now the spare of the
  // previous call's ping-pong; either way the values are right).
  CHECK(f(a) == vec{12, 22, 32});
  CHECK(f(a) == vec{13, 23, 33});
  CHECK(f.update_was_in_place(0));
  // A shape change and back: both plans kept.
  w.set_value(vec{1, 1});
  CHECK(f(vec{5, 5}) == vec{5, 5});
  w.set_value(vec{1, 1, 1});
  CHECK(f(a) == vec{1, 1, 1});
  CHECK(f.plans_built() <= 4);
  // A variable emptied by take_value: the call is refused and changes nothing.
  (void)w.take_value();
  CHECK_THROWS_AS(f(a), fusor::value_error);
  w.set_value(vec{0, 0, 0});
  CHECK(f(a) == vec{0, 0, 0});
}

TEST_CASE("every temporary an in-place write reads is computed before any in-place write") {
  auto w = fusor::shared(vec{2, 4}, "w");
  auto b = fusor::shared(vec{10, 10}, "b");
  auto f = fusor::function(fusor::inputs(), fusor::updates(fusor::update(w, w * 0.5),
                                                          fusor::update(b, b - fusor::sum(w))));
  f();
  CHECK(f.update_was_in_place(0));
  CHECK(f.update_was_in_place(1));
  CHECK(w.get_value() == vec{1, 2});
  CHECK(b.get_value() == vec{4, 4});  // 10 - (2 + 4): the sum of w before the call
  const auto& p = f.last_plan();
  const int reduce = first_of(p, fusor::step_kind::reduce);
  const int first_in_place = first_of(p, fusor::step_kind::update);
  CHECK(reduce < first_in_place);
}

TEST_CASE("copy(swap(...)): the same function over other shared variables") {
  fusor::matrix<double> x{"x"};
  auto w1 = fusor::shared(vec{1, 0}, "w1");
  auto b1 = fusor::shared(0.5, "b1");
  auto w2 = fusor::shared(vec{0, 2}, "w2");
  auto b2 = fusor::shared(-1.0, "b2");
  auto predict = fusor::function(fusor::inputs(x), fusor::outputs(fusor::dot(x, w1) + b1));
  auto predict2 = predict.copy(fusor::swap(w1, w2), fusor::swap(b1, b2));
  const mat data = {{1, 2}, {3, 4}};
  CHECK(predict(data) == vec{1.5, 3.5});
  CHECK(predict2(data) == vec{3, 7});
  // Updates follow the swap: the copy updates the new variable.
  auto step = fusor::function(fusor::inputs(), fusor::updates(fusor::update(w1, w1 * 2.0)));
  auto step2 = step.copy(fusor::swap(w1, w2));
  step2();
  CHECK(w2.get_value() == vec{0, 4});
  CHECK(w1.get_value() == vec{1, 0});
  step();
  CHECK(w1.get_value() == vec{2, 0});
  // A variable the function does not use cannot be swapped.
  CHECK_THROWS_AS((void)step.copy(fusor::swap(b1, b2)), fusor::value_error);
}

TEST_CASE("givens: an input replaced by a shared variable (a minibatch held by fusor), read where it lives") {
  fusor::matrix<double> x{"x"};
  auto data = fusor::shared(mat{{1, 2}, {3, 4}}, "data");
  auto w = fusor::shared(vec{1, -1}, "w");
  auto f = fusor::function(fusor::inputs(), fusor::outputs(fusor::dot(x, w), fusor::Out(x * 1.0, fusor::borrow)),
                           fusor::givens(fusor::given(x, data)));
  auto [y, z] = f();
  CHECK(y == vec{-1, -1});
  CHECK(z == mat{{1, 2}, {3, 4}});
  // The replacement is read at each call, not copied when the function is built.
  data.set_value(mat{{5, 1}, {2, 2}});
  CHECK(std::get<0>(f()) == vec{4, 0});
  // dot reads the variable's buffer itself: no step copies it.
  for (const auto& s : f.last_plan().steps) CHECK(s.kind != fusor::step_kind::materialize);
  CHECK(f.graph().inputs.empty());
}

TEST_CASE("givens: a shared variable replaced by an expression; its value and its update are its own") {
  auto w = fusor::shared(vec{1, 2}, "w");
  auto c = fusor::shared(vec{10, 20}, "c");
  fusor::vector<double> s{"s"};
  // given(w, w * 2): the replacement is taken as written, so it reads w itself.
  auto f = fusor::function(fusor::inputs(s), fusor::outputs(w + s), fusor::givens(fusor::given(w, w * 2.0)));
  CHECK(f(vec{0.5, 0.5}) == vec{2.5, 4.5});
  CHECK(w.get_value() == vec{1, 2});  // the variable is not touched
  // The update still targets w; its expression reads the replacement.
  auto g = fusor::function(fusor::inputs(), fusor::updates(fusor::update(w, w + 1.0)), fusor::givens(fusor::given(w, c)));
  g();
  CHECK(w.get_value() == vec{11, 21});
  CHECK(c.get_value() == vec{10, 20});
}

TEST_CASE("givens: a shared variable's replacement is not read for an input that happens to share its number") {
  // Inputs and shared variables are numbered apart, so an input and a
  // variable can have one number; a given names its target by number and
  // kind. (The input x once read w's replacement: x * w gave (2w)^2.)
  auto w = fusor::shared(vec{1, 3}, "w");
  fusor::vector<double> x{"x"};
  while (x.id() < w.id()) x = fusor::vector<double>{"x"};
  while (w.id() < x.id()) w = fusor::shared(vec{1, 3}, "w");
  REQUIRE(x.id() == w.id());
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(x * w), fusor::givens(fusor::given(w, w * 2.0)));
  CHECK(f(vec{1, 2}) == vec{2, 12});
  // A replacement the stable rewrites change (log(1 + w) -> log1p(w)).
  auto g = fusor::function(fusor::inputs(x), fusor::outputs(x * w), fusor::givens(fusor::given(w, fusor::log(1.0 + w))));
  CHECK(xt::allclose(g(vec{1, 2}), vec{std::log1p(1.0), 2 * std::log1p(3.0)}, 1e-15, 1e-15));
}

TEST_CASE("givens: a replacement over explicit inputs is computed once into the arena; views are read strided") {
  fusor::vector<double> x{"x"}, y{"y"};
  auto f = fusor::function(fusor::inputs(y), fusor::outputs(x + 1.0, x * x), fusor::givens(fusor::given(x, y * 2.0)));
  auto [a, b] = f(vec{1, 2, 3});
  CHECK(a == vec{3, 5, 7});
  CHECK(b == vec{4, 16, 36});
  int materialised = 0;
  for (const auto& s : f.last_plan().steps) materialised += s.kind == fusor::step_kind::materialize;
  CHECK(materialised == 1);
  CHECK(f.last_plan().arena_bytes >= 3 * sizeof(double));

  fusor::matrix<double> m{"m"};
  auto data = fusor::shared(mat{{1, 2, 3}, {4, 5, 6}}, "data");
  auto t = fusor::function(fusor::inputs(), fusor::outputs(m + 0.0), fusor::givens(fusor::given(m, fusor::transpose(data))));
  CHECK(t() == mat{{1, 4}, {2, 5}, {3, 6}});
  CHECK(t.last_plan().steps.size() == 1);  // the transpose is read in place, strided
}

TEST_CASE("givens: refused when they cannot mean anything, and a failed call changes nothing") {
  fusor::vector<double> x{"x"}, y{"y"};
  auto w = fusor::shared(vec{1, 2}, "w");
  // A replaced input is not an input any more (R40).
  CHECK_THROWS_WITH_AS(fusor::function(fusor::inputs(x), fusor::outputs(x + 1.0), fusor::givens(fusor::given(x, w))),
                       doctest::Contains("also an explicit input"), fusor::value_error);
  // A given nothing reads is a mistake, not a no-op.
  CHECK_THROWS_WITH_AS(fusor::function(fusor::inputs(y), fusor::outputs(y + 1.0), fusor::givens(fusor::given(x, w))),
                       doctest::Contains("which no output or update expression reads"), fusor::value_error);
  // Two replacements of one target.
  CHECK_THROWS_AS(fusor::function(fusor::inputs(), fusor::outputs(x + 1.0),
                                  fusor::givens(fusor::given(x, w), fusor::given(x, w * 2.0))),
                  fusor::value_error);
  // A replacement of the wrong rank (known only at call time) is refused
  // before anything is written.
  auto grid = fusor::shared(xt::xarray<double>{{1, 2}, {3, 4}}, "grid");
  auto g = fusor::function(fusor::inputs(), fusor::outputs(x * 2.0), fusor::updates(fusor::update(w, w + 1.0)),
                           fusor::givens(fusor::given(x, grid)));
  CHECK_THROWS_WITH_AS(g(), doctest::Contains("has rank 1"), fusor::rank_error);
  CHECK(w.get_value() == vec{1, 2});
  // A broadcastable input's replacement keeps length 1 on that axis.
  fusor::matrix<double> row{"row", {true, false}};
  auto two_rows = fusor::shared(mat{{1, 2}, {3, 4}}, "two_rows");
  auto h = fusor::function(fusor::inputs(), fusor::outputs(row + 1.0), fusor::givens(fusor::given(row, two_rows)));
  CHECK_THROWS_WITH_AS(h(), doctest::Contains("broadcastable"), fusor::shape_error);
}

TEST_CASE("givens follow copy(swap(...)): one predict() over several datasets") {
  fusor::matrix<double> x{"x"};
  auto data1 = fusor::shared(mat{{1, 0}, {0, 1}}, "data1");
  auto data2 = fusor::shared(mat{{2, 2}, {3, 3}}, "data2");
  auto w = fusor::shared(vec{1, 10}, "w");
  auto f = fusor::function(fusor::inputs(), fusor::outputs(fusor::dot(x, w)), fusor::givens(fusor::given(x, data1)));
  auto f2 = f.copy(fusor::swap(data1, data2));
  CHECK(f() == vec{1, 10});
  CHECK(f2() == vec{22, 33});
}

TEST_CASE("printed plans name what earlier steps computed, and the shapes shape-only nodes refer to") {
  using fusor::detail::elide_read_values;
  using fusor::detail::with_known_shapes;
  // A call is a whole operand wherever it occurs (but not inside a longer name).
  CHECK(elide_read_values("sigmoid(dot(x, w) + b) - xdot(x, w)", {{"dot(x, w)", "t5"}}) == "sigmoid(t5 + b) - xdot(x, w)");
  // Another expression only where it is a whole argument: "b + c" is no operand of "a * b + c".
  CHECK(elide_read_values("a * b + c", {{"b + c", "t1"}}) == "a * b + c");
  CHECK(elide_read_values("f(b + c, d) * g(d, b + c)", {{"b + c", "t1"}}) == "f(t1, d) * g(d, t1)");
  // The longest first: an expression holding another is named whole.
  CHECK(elide_read_values("h(sum(dot(x, w)), dot(x, w))", {{"dot(x, w)", "t5"}, {"sum(dot(x, w))", "t6"}}) ==
        "h(t6, t5)");
  // A step's own expression is not replaced by the temporary it reads.
  CHECK(elide_read_values("exp(y)", {{"exp(y)", "t2"}}) == "exp(y)");
  CHECK(with_known_shapes("reshape(a, shape(x)) + size(x)", {{"shape(x)", "(3,)"}, {"size(x)", "3"}}) ==
        "reshape(a, (3,)) + 3");

  // A logistic regression's gradient: the backward dot reads the forward dot's
  // adjoint from a temporary, and no line spells out the forward expression
  // for a shape.
  auto w = fusor::shared(xt::xtensor<double, 1>{0.1, -0.2, 0.3}, "w");
  auto f = logistic_regression_step(w);
  (void)f(xt::xtensor<double, 2>{{1, 2, 3}, {4, 5, 6}}, xt::xtensor<double, 1>{1, -1});
  const std::string text = f.plan();
  INFO(text);
  const auto& p = f.last_plan();
  int backward_dots = 0;
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const auto& s = p.steps[i];
    if (s.kind != fusor::step_kind::dot || s.label.find("transpose(x)") == std::string::npos) continue;
    ++backward_dots;
    // "dot(transpose(x), tN)": the adjoint named by the temporary the step reads
    const auto line_at = text.find("  " + std::to_string(i) + " dot");
    REQUIRE(line_at != std::string::npos);
    const std::string line = text.substr(line_at, text.find('\n', line_at) - line_at);
    // (the update's own dot, accumulated into w by BLAS: "w += -0.5 * dot(transpose(x), tN)")
    CHECK(line.find("dot(transpose(x), t") != std::string::npos);
  }
  CHECK(backward_dots == 1);
  CHECK(text.find("zeros(shape(") == std::string::npos);
  CHECK(text.find("size(") == std::string::npos);
  CHECK(text.find("zeros((2,))") != std::string::npos);  // the adjoint of the mean, over two samples
}

// ---------------------------------------------------------------- updates accumulated by BLAS

namespace {
/// The steps of a plan that accumulate a product into a variable.
std::vector<const fusor::step_info*> accumulating(const fusor::plan& p) {
  std::vector<const fusor::step_info*> r;
  for (const auto& s : p.steps)
    if (s.kind == fusor::step_kind::dot && s.accumulate) r.push_back(&s);
  return r;
}
mat product_at(const mat& a, const mat& b) {  // a.T . b
  mat r = xt::zeros<double>({a.shape(1), b.shape(1)});
  for (std::size_t i = 0; i < a.shape(1); ++i)
    for (std::size_t j = 0; j < b.shape(1); ++j)
      for (std::size_t k = 0; k < a.shape(0); ++k) r(i, j) += a(k, i) * b(k, j);
  return r;
}
}  // namespace

TEST_CASE("an update v - c * dot(a, b) is one BLAS call accumulating into v's buffer, with no temporary") {
  const mat W0{{1, 2}, {3, 4}, {5, 6}};
  const mat av{{1, -2, 3}, {0.5, 4, -1}}, bv{{2, 1}, {-1, 3}};
  auto W = fusor::shared(W0, "W");
  const double* before = W.get_value(fusor::borrow).data();
  fusor::matrix<double> a{"a"}, b{"b"};
  auto f = fusor::function(fusor::inputs(a, b), fusor::outputs(),
                           fusor::updates(fusor::update(W, W - 0.25 * fusor::dot(fusor::transpose(a), b))));
  f(av, bv);
  const mat expected = W0 - 0.25 * product_at(av, bv);
  CHECK(xt::allclose(W.get_value(), expected, 1e-14, 1e-14));
  CHECK(W.get_value(fusor::borrow).data() == before);  // in place: the variable kept its buffer
  const auto& p = f.last_plan();
  const auto acc = accumulating(p);
  REQUIRE(acc.size() == 1);
  CHECK(acc[0]->alpha == -0.25);
  CHECK(acc[0]->in_place);
  CHECK(count_kind(p, fusor::step_kind::update) == 0);
  CHECK(p.arena_bytes == 0);  // the product has no temporary
  CHECK(contains(f.plan(), "by BLAS: W += -0.25 * dot(transpose(a), b)"));
  // v + dot(a, b) * c and c * dot(a, b) + v: the same call
  auto g = fusor::function(fusor::inputs(a, b), fusor::outputs(),
                           fusor::updates(fusor::update(W, fusor::dot(fusor::transpose(a), b) * 2.0 + W)));
  const mat W1 = W.get_value();
  g(av, bv);
  CHECK(xt::allclose(W.get_value(), W1 + 2.0 * product_at(av, bv), 1e-14, 1e-14));
  REQUIRE(accumulating(g.last_plan()).size() == 1);
  CHECK(accumulating(g.last_plan())[0]->alpha == 2.0);
  // a steady call repeats it
  g(av, bv);
  CHECK(xt::allclose(W.get_value(), W1 + 4.0 * product_at(av, bv), 1e-14, 1e-14));
}

TEST_CASE("an update by a product stays a fused loop where BLAS would read what it writes or the product is read elsewhere") {
  const mat S0{{1, 2}, {3, 4}};
  const mat T0{{0.5, -1}, {2, 1}};
  fusor::matrix<double> a{"a"};
  const mat av{{1, 2}, {3, -1}};
  SUBCASE("the variable is an operand of its own product") {
    auto S = fusor::shared(S0, "S");
    auto f = fusor::function(fusor::inputs(), fusor::outputs(),
                             fusor::updates(fusor::update(S, S - 0.5 * fusor::dot(fusor::transpose(S), S))));
    f();
    CHECK(xt::allclose(S.get_value(), S0 - 0.5 * product_at(S0, S0), 1e-14, 1e-14));
    CHECK(accumulating(f.last_plan()).empty());
  }
  SUBCASE("an argument is the variable's own buffer") {
    auto S = fusor::shared(S0, "S");
    auto f = fusor::function(fusor::inputs(a), fusor::outputs(),
                             fusor::updates(fusor::update(S, S - 0.5 * fusor::dot(fusor::transpose(a), a))));
    // S's own memory as the argument, adapted (fusor does not see a view it
    // made): the update is in place, and BLAS must not read what it writes.
    double* data = const_cast<double*>(S.get_value(fusor::borrow).data());
    f(xt::adapt(data, 4, xt::no_ownership(), std::array<std::size_t, 2>{2, 2}));
    CHECK(S.get_value(fusor::borrow).data() == data);
    CHECK(xt::allclose(S.get_value(), S0 - 0.5 * product_at(S0, S0), 1e-14, 1e-14));
    CHECK(accumulating(f.last_plan()).empty());
  }
  SUBCASE("another variable the product reads is written in place by the same call") {
    auto S = fusor::shared(S0, "S");
    auto T = fusor::shared(T0, "T");
    auto f = fusor::function(fusor::inputs(), fusor::outputs(),
                             fusor::updates(fusor::update(S, S - 0.5 * fusor::dot(fusor::transpose(T), T)),
                                            fusor::update(T, T * 2.0)));
    f();  // both from the values of the call's start
    CHECK(xt::allclose(S.get_value(), S0 - 0.5 * product_at(T0, T0), 1e-14, 1e-14));
    CHECK(xt::allclose(T.get_value(), T0 * 2.0, 1e-14, 1e-14));
    auto g = fusor::function(fusor::inputs(), fusor::outputs(),
                             fusor::updates(fusor::update(T, T * 2.0),
                                            fusor::update(S, S - 0.5 * fusor::dot(fusor::transpose(T), T))));
    const mat S1 = S.get_value(), T1 = T.get_value();
    g();
    CHECK(xt::allclose(S.get_value(), S1 - 0.5 * product_at(T1, T1), 1e-14, 1e-14));
    CHECK(accumulating(f.last_plan()).empty());
    CHECK(accumulating(g.last_plan()).empty());
  }
  SUBCASE("the product is an output too: computed once, into a temporary") {
    auto S = fusor::shared(S0, "S");
    const auto d = fusor::dot(fusor::transpose(a), a);
    auto f = fusor::function(fusor::inputs(a), fusor::outputs(d), fusor::updates(fusor::update(S, S - 0.5 * d)));
    const mat out = f(av);
    CHECK(xt::allclose(out, product_at(av, av), 1e-14, 1e-14));
    CHECK(xt::allclose(S.get_value(), S0 - 0.5 * product_at(av, av), 1e-14, 1e-14));
    CHECK(accumulating(f.last_plan()).empty());
    CHECK(count_kind(f.last_plan(), fusor::step_kind::dot) == 1);
  }
}

TEST_CASE("a sum or mean of an expression materialised already reads the temporary, not the expression again") {
  fusor::matrix<double> x{"x"};
  const auto e = fusor::exp(x) * 2.0 - x;  // fused; a dot needs it in memory
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::dot(fusor::transpose(e), e), fusor::sum(e, 0),
                                                             fusor::mean(e, 1), fusor::max(e, 0)));
  const mat xv{{0.5, -1}, {2, 0.25}, {-0.5, 1}};
  auto [d, s0, m1, mx] = f(xv);
  const mat ev = xt::exp(xv) * 2.0 - xv;
  CHECK(xt::allclose(d, product_at(ev, ev), 1e-13, 1e-13));
  CHECK(xt::allclose(s0, vec{ev(0, 0) + ev(1, 0) + ev(2, 0), ev(0, 1) + ev(1, 1) + ev(2, 1)}, 1e-14, 1e-14));
  CHECK(xt::allclose(m1, vec{(ev(0, 0) + ev(0, 1)) / 2, (ev(1, 0) + ev(1, 1)) / 2, (ev(2, 0) + ev(2, 1)) / 2}, 1e-14, 1e-14));
  CHECK(xt::allclose(mx, vec{std::max({ev(0, 0), ev(1, 0), ev(2, 0)}), std::max({ev(0, 1), ev(1, 1), ev(2, 1)})}, 1e-14, 1e-14));
  const auto& p = f.last_plan();
  REQUIRE(count_kind(p, fusor::step_kind::materialize) == 1);
  const int copy = p.steps[static_cast<std::size_t>(first_of(p, fusor::step_kind::materialize))].dest;
  // Every reduction reads the product's operand from its temporary: the
  // function's reductions of an operand a product reads are built over a
  // kept reference to it (rewrite/kept_operands.hpp), so max, which has no
  // kernel reading a temporary of its own, does too.
  int reductions = 0;
  for (const auto& st : p.steps) {
    if (st.kind != fusor::step_kind::reduce) continue;
    ++reductions;
    CHECK(st.reads == std::vector<int>{copy});
  }
  CHECK(reductions == 3);
  CHECK(contains(f.plan(), "= sum(t"));
  CHECK(contains(f.plan(), "= max(t"));
}

TEST_CASE("a bias's sum in one update reads the operand another update's product computed into memory") {
  // The hand-written backward step of a dense layer: dz feeds the weights'
  // product (one update) and the bias's sum (another). The function compiles
  // no reduction fused with dz's tree; the sum reads dz's temporary.
  fusor::matrix<double> x{"x"}, y{"y"};
  const mat W0{{0.5, -0.25}, {0.1, 0.3}, {-0.2, 0.4}};
  const vec b0{0.05, -0.1};
  auto W = fusor::shared(W0, "W");
  auto b = fusor::shared(b0, "b");
  const auto z = fusor::dot(x, W) + b;
  const auto dz = (fusor::exp(z) - y) * 0.5;
  auto step = fusor::function(fusor::inputs(x, y), fusor::updates(fusor::update(W, W - 0.1 * fusor::dot(fusor::transpose(x), dz)),
                                                                   fusor::update(b, b - 0.1 * fusor::sum(dz, 0))));
  const mat xv{{1, 2, -1}, {0.5, -0.5, 2}, {-1, 0, 1}, {2, 1, 0.5}};
  const mat yv{{1, 0}, {0, 1}, {1, 1}, {0, 0}};
  step(xv, yv);
  mat zv = product_at(xt::eval(xt::transpose(xv)), W0);
  for (std::size_t i = 0; i < zv.shape(0); ++i)
    for (std::size_t j = 0; j < zv.shape(1); ++j) zv(i, j) += b0(j);
  const mat dzv = (xt::exp(zv) - yv) * 0.5;
  CHECK(xt::allclose(W.get_value(), W0 - 0.1 * product_at(xv, dzv), 1e-13, 1e-13));
  vec colsum = xt::zeros<double>({2});
  for (std::size_t i = 0; i < dzv.shape(0); ++i)
    for (std::size_t j = 0; j < 2; ++j) colsum(j) += dzv(i, j);
  CHECK(xt::allclose(b.get_value(), b0 - 0.1 * colsum, 1e-13, 1e-13));
  const auto& p = step.last_plan();
  REQUIRE(count_kind(p, fusor::step_kind::reduce) == 1);
  const auto& sum = p.steps[static_cast<std::size_t>(first_of(p, fusor::step_kind::reduce))];
  // dz is computed once, by one step, into the temporary the product and
  // the sum both read.
  REQUIRE(sum.reads.size() == 1);
  int writers = 0, products_reading = 0;
  for (const auto& st : p.steps) {
    if (st.dest == sum.reads[0]) {
      ++writers;
      CHECK(st.kind == fusor::step_kind::materialize);
    }
    if (st.kind == fusor::step_kind::dot)
      for (int r : st.reads) products_reading += r == sum.reads[0];
  }
  CHECK(writers == 1);
  CHECK(products_reading == 1);
}

TEST_CASE("a sum of another expression of the type a product reads computes it into memory once more, correctly") {
  // The rewrite decides from types: exp(v) * 2 over v and over u have one
  // type, but only u's is a product's operand. v's is then computed into a
  // temporary of its own (one array more), and every value is right.
  const mat u0{{0.5, -1}, {2, 0.25}, {-0.5, 1}}, v0{{1, 0.5}, {-0.25, 2}, {0, -1}};
  auto u = fusor::shared(u0, "u");
  auto v = fusor::shared(v0, "v");
  const auto eu = fusor::exp(u) * 2.0;
  const auto ev = fusor::exp(v) * 2.0;
  static_assert(std::is_same_v<decltype(eu), decltype(ev)>);
  auto f = fusor::function(fusor::inputs(), fusor::outputs(fusor::dot(fusor::transpose(eu), eu), fusor::sum(ev, 0)));
  auto [d, s] = f();
  const mat euv = xt::exp(u0) * 2.0, evv = xt::exp(v0) * 2.0;
  CHECK(xt::allclose(d, product_at(euv, euv), 1e-13, 1e-13));
  CHECK(xt::allclose(s, vec{evv(0, 0) + evv(1, 0) + evv(2, 0), evv(0, 1) + evv(1, 1) + evv(2, 1)}, 1e-13, 1e-13));
  CHECK(count_kind(f.last_plan(), fusor::step_kind::materialize) == 2);
}

TEST_CASE("a gradient's sum_to on the host: no step where the shapes agree, a sum of a temporary where they do not") {
  fusor::matrix<double> x{"x"};
  const mat xv{{0.5, -1, 0.25}, {2, 0.25, -0.5}};
  SUBCASE("w of x's shape: the adjoint is the gradient, computed once into a temporary") {
    const mat wv{{0.1, 0.2, 0.3}, {-0.1, 0.4, 0.2}};
    auto w = fusor::shared(wv, "w");
    auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::grad(fusor::sum(fusor::exp(x * w)), w)));
    const mat g = f(xv);
    CHECK(xt::allclose(g, xt::exp(xv * wv) * xv, 1e-14, 1e-14));
    const auto& p = f.last_plan();
    CHECK(count_kind(p, fusor::step_kind::reduce) == 0);
    CHECK(count_kind(p, fusor::step_kind::materialize) == 1);
  }
  SUBCASE("w of one row, broadcast along x's rows: its gradient sums the adjoint's rows, from a temporary") {
    const mat wv{{0.1, 0.2, 0.3}};
    auto w = fusor::shared(wv, "w");
    auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::grad(fusor::sum(fusor::exp(x * w)), w)));
    const mat g = f(xv);
    const mat each = xt::exp(xv * wv) * xv;
    CHECK(xt::allclose(g, mat{{each(0, 0) + each(1, 0), each(0, 1) + each(1, 1), each(0, 2) + each(1, 2)}}, 1e-14, 1e-14));
    const auto& p = f.last_plan();
    REQUIRE(count_kind(p, fusor::step_kind::reduce) == 1);
    REQUIRE(count_kind(p, fusor::step_kind::materialize) == 1);
    const auto& sum = p.steps[static_cast<std::size_t>(first_of(p, fusor::step_kind::reduce))];
    CHECK(sum.source >= 0);
    CHECK(sum.reads == std::vector<int>{p.steps[static_cast<std::size_t>(first_of(p, fusor::step_kind::materialize))].dest});
    CHECK(first_of(p, fusor::step_kind::materialize) < first_of(p, fusor::step_kind::reduce));
  }
}

// ---------------------------------------------------------------- pictures: the plan as a graph, the profile as a trace
// (The plan_pictures test runs the cases named "pictures: ..." with
// FUSOR_TEST_PICTURES naming a folder, then renders the plan there with
// Graphviz and parses the trace as JSON: test/pictures_check.py.)

namespace {
/// Where the picture cases leave their files for plan_pictures, or "" (none).
std::string pictures_folder() {
  const char* dir = std::getenv("FUSOR_TEST_PICTURES");
  return dir && *dir ? std::string(dir) + "/" : std::string();
}
std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}
std::size_t occurrences(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
  return n;
}
const mat lr_x{{1, 2, 3}, {4, 5, 6}};
const vec lr_y{1, -1};
}  // namespace

TEST_CASE("pictures: a plan as a Graphviz graph of its steps, slots, variables and in-place writes") {
  auto w = fusor::shared(vec{0.1, -0.2, 0.3}, "w");
  auto f = logistic_regression_step(w);
  CHECK_THROWS_AS((void)f.plan_dot(), fusor::value_error);  // no plan before the first call
  (void)f(lr_x, lr_y);
  const auto& p = f.last_plan();
  const std::string dot = f.plan_dot();
  INFO(dot);
  CHECK(dot.rfind("digraph plan {\n", 0) == 0);
  CHECK(dot.substr(dot.size() - 2) == "}\n");
  CHECK(contains(dot, "label=\"plan for x (2, 3), y (2,)\\narena: " + std::to_string(p.arena_bytes) + " bytes"));
  // A node per step; what each step reads and writes, an edge.
  for (std::size_t i = 0; i < p.steps.size(); ++i) {
    const auto& st = p.steps[i];
    const std::string k = "k" + std::to_string(i);
    CHECK(occurrences(dot, "    " + k + " [") == 1);
    for (int r : st.reads) CHECK(contains(dot, "  s" + std::to_string(r) + " -> " + k + ";\n"));
    if (st.dest >= 0 && !st.in_place) CHECK(contains(dot, "  " + k + " -> s" + std::to_string(st.dest) + ";\n"));
  }
  // Every temporary a step writes, with its bytes in the arena.
  int temporaries = 0;
  for (const auto& s : p.slots)
    if (s.kind == fusor::slot_kind::temporary && s.first >= 0) {
      ++temporaries;
      CHECK(contains(dot, "\\narena [" + std::to_string(s.offset) + ", " + std::to_string(s.offset + s.bytes) + ")\\nsteps " +
                              std::to_string(s.first) + ".." + std::to_string(s.last) + "\""));
    }
  CHECK(temporaries >= 3);
  // w, updated in place: its node says so, and the update's edge back into it is bold.
  const std::string var = "s" + std::to_string(p.shared_slot[0]);
  CHECK(contains(dot, "    " + var + " [shape=box, style=\"rounded,filled\", fillcolor=\"#d9ead3\", "
                      "label=\"var:w\\nfloat64 (3,)\\nupdated in place\"];"));
  // (The update is the BLAS call accumulating into w: a dot step, in place.)
  int update = -1;
  for (std::size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].dest == p.shared_slot[0] && p.steps[i].in_place) update = static_cast<int>(i);
  REQUIRE(update >= 0);
  CHECK(contains(dot, "  k" + std::to_string(update) + " -> " + var + " [style=bold, constraint=false, label=\"in place\"];"));
  // The backward dot reads the forward dot's adjoint by its temporary's name, as f.plan() does.
  CHECK(contains(dot, "dot(transpose(x), t"));

  // One call writes it; a file that cannot be written is an io_error.
  const std::string path = pictures_folder().empty() ? std::string("fusor_test_plan.dot") : pictures_folder() + "plan.dot";
  f.write_plan_dot(path);
  CHECK(read_file(path) == dot);
  if (pictures_folder().empty()) std::remove(path.c_str());
  CHECK_THROWS_AS(f.write_plan_dot("no-such-folder/plan.dot"), fusor::io_error);

  // Names are escaped: a quote or a backslash in a variable's name does not end Graphviz's string.
  auto q = fusor::shared(vec{0.1, -0.2, 0.3}, "say \"hi\"\\");
  auto g = logistic_regression_step(q);
  (void)g(lr_x, lr_y);
  CHECK(contains(g.plan_dot(), "label=\"var:say \\\"hi\\\"\\\\\\nfloat64 (3,)\\nupdated in place\""));
  CHECK(w.get_value() == q.get_value());  // (and the pictures changed nothing)
}

TEST_CASE("pictures: a profile's trace has one event per step of each call, as Chrome's trace-event JSON") {
  auto w = fusor::shared(vec{0.1, -0.2, 0.3}, "w");
  auto f = logistic_regression_step(w);
  f.enable_profiling();
  for (int i = 0; i < 3; ++i) (void)f(lr_x, lr_y);
  const auto& p = f.last_plan();
  std::vector<std::size_t> running;  // the steps that run a kernel (not the commit's installs)
  for (std::size_t i = 0; i < p.steps.size(); ++i)
    if (p.steps[i].runs_kernel()) running.push_back(i);
  const fusor::profile_report& profile = f.profile();
  const auto events = profile.events();
  CHECK(profile.calls() == 3);
  REQUIRE(events.size() == 3 * running.size());
  double last_end = 0;
  for (std::size_t e = 0; e < events.size(); ++e) {
    const auto& ev = events[e];
    CHECK(ev.call == e / running.size());
    CHECK(ev.step == running[e % running.size()]);
    CHECK(profile.kernels()[ev.kernel].name == p.steps[ev.step].label);
    CHECK(ev.bytes == p.steps[ev.step].bytes);
    CHECK(ev.seconds >= 0);
    CHECK(ev.start >= last_end);  // one after the other
    last_end = ev.start + ev.seconds;
  }
  const std::string json = profile.chrome_trace();
  CHECK(json.rfind("{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n", 0) == 0);
  CHECK(occurrences(json, "\"ph\": \"X\"") == events.size());
  CHECK(occurrences(json, "\"args\": {\"step\": " + std::to_string(running.back()) + ", ") == 3);
  const std::string path = pictures_folder().empty() ? std::string("fusor_test_trace.json") : pictures_folder() + "trace.json";
  profile.write_chrome_trace(path);
  CHECK(read_file(path) == json);
  if (pictures_folder().empty()) std::remove(path.c_str());
  CHECK_THROWS_AS(profile.write_chrome_trace("no-such-folder/trace.json"), fusor::io_error);
  // A name with a quote, a backslash or a control character stays one JSON string.
  CHECK(fusor::detail::json_string("a\"b\\c\nd") == "\"a\\\"b\\\\c\\u000ad\"");

  // reset_profile forgets the statistics and the trace; the next call is call 0 again.
  f.reset_profile();
  CHECK(f.profile().kernels().empty());
  CHECK(f.profile().events().empty());
  (void)f(lr_x, lr_y);
  REQUIRE(f.profile().events().size() == running.size());
  CHECK(f.profile().events().front().call == 0);
}

TEST_CASE("a profile's trace keeps the most recent trace_capacity steps") {
  fusor::profile_report r;
  r.record("loose", 1e-3, 8);  // a run outside a call: in the statistics, not the trace
  CHECK(r.events().empty());
  REQUIRE(r.kernels().size() == 1);
  r.clear();
  const auto t0 = std::chrono::steady_clock::now();
  constexpr std::size_t capacity = fusor::profile_report::trace_capacity;
  for (std::size_t i = 0; i < capacity + 10; ++i) {
    r.begin_call();
    r.record("k", i, t0 + std::chrono::microseconds(i), 1e-7, 8);
  }
  const auto e = r.events();
  REQUIRE(e.size() == capacity);
  CHECK(e.front().step == 10);  // the ten oldest gave way
  CHECK(e.front().call == 10);
  CHECK(e.back().step == capacity + 9);
  CHECK(e.front().start == doctest::Approx(10e-6));
  REQUIRE(r.kernels().size() == 1);
  CHECK(r.kernels()[0].calls == capacity + 10);  // the statistics count every step
}
