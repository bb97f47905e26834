// fusor::grad of whole models: the gradient as an expression (it prints, fuses
// and trains as an update), stop_gradient, disconnected targets and the
// refusals, and a two-layer perceptron against hand-written backpropagation.
// test_grad_sharing.cpp has variables and sub-expressions read more than once
// and second derivatives; test_grad.cpp, test_grad_reductions.cpp and
// test_grad_shapes.cpp the node-by-node rules.
//
// Tolerance and step: verify_grad.hpp.
#include <doctest/doctest.h>

#include <cxxabi.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <regex>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>

#include <fusor/fusor.hpp>

#include "verify_grad.hpp"

using grad_check::mat;
using grad_check::vec;

namespace {
/// A term `0` of a sum in printed text ("0 + x", "x + 0"), not a number
/// ending in 0 ("t10 + b1") nor a constant 0 elsewhere ("where(c, 0, x)").
bool has_zero_term(const std::string& text) {
  static const std::regex zero_term(R"((^|[ (])0 \+ |\+ 0($|[ ),]))");
  return std::regex_search(text, zero_term);
}

std::string demangled(const std::type_info& type) {
  int status = 0;
  char* text = abi::__cxa_demangle(type.name(), nullptr, nullptr, &status);
  REQUIRE(status == 0);
  std::string out(text);
  std::free(text);
  return out;
}

/// The variables of a two-layer perceptron (4 features, 3 hidden units, 2
/// classes), drawn from `seed` on.
struct perceptron {
  explicit perceptron(int seed)
      : W1(fusor::shared(mat(4, 3, -1, 1, seed), "W1")),
        b1(fusor::shared(vec(3, -0.1, 0.1, seed + 1), "b1")),
        W2(fusor::shared(mat(3, 2, -1, 1, seed + 2), "W2")),
        b2(fusor::shared(vec(2, -0.1, 0.1, seed + 3), "b2")) {}
  fusor::shared<xt::xtensor<double, 2>> W1;
  fusor::shared<xt::xtensor<double, 1>> b1;
  fusor::shared<xt::xtensor<double, 2>> W2;
  fusor::shared<xt::xtensor<double, 1>> b2;
};
}  // namespace

TEST_CASE("the gradient is an expression: it prints, fuses, and trains as an update") {
  auto w = fusor::shared(xt::xtensor<double, 1>{3.0, -2.0}, "w");
  const auto g = fusor::grad(fusor::sum(w * w), w);
  CHECK(!g.str().empty());
  auto step = fusor::function(fusor::inputs(), fusor::outputs(fusor::sum(w * w)),
                              fusor::updates(fusor::update(w, w - 0.25 * g)));
  for (int i = 0; i < 3; ++i) (void)step();
  // w <- w - 0.25 * 2w = w / 2, three times
  CHECK(w.get_value() == xt::xtensor<double, 1>{0.375, -0.25});
}

TEST_CASE("a gradient prints without its closed gates: the text, the plan and the profile read as written by hand") {
  CHECK(has_zero_term("0 + x"));
  CHECK(has_zero_term("(x + 0) * y"));
  CHECK(!has_zero_term("t10 + b1"));
  CHECK(!has_zero_term("where(c, 0, x) + 10"));
  // u and v are one C++ type: u's gradient is built with a gate around each
  // of their contributions, v's closed when grad is called.
  auto u = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0}, "u");
  auto v = fusor::shared(xt::xtensor<double, 1>{3.0, 5.0}, "v");
  const auto cost = fusor::sum(u * 2.0) + fusor::sum(v * v) + fusor::sum(u * v);
  auto [gu, gv] = fusor::grad(cost, u, v);
  CHECK(!has_zero_term(gu.str()));
  CHECK(!has_zero_term(gv.str()));
  auto f = fusor::function(fusor::inputs(), fusor::outputs(gu, gv));
  f.enable_profiling();
  auto [a, b] = f();
  CHECK(a == xt::xtensor<double, 1>{5.0, 7.0});   // 2 + v
  CHECK(b == xt::xtensor<double, 1>{7.0, 12.0});  // 2v + u
  CHECK(!has_zero_term(f.plan()));
  CHECK(!has_zero_term(f.profile().str(1000)));
}

TEST_CASE("a gradient's text: no double negation, an infix operand in parentheses") {
  auto w = fusor::shared(xt::xtensor<double, 1>{0.5, -1.0, 2.0}, "w");
  fusor::vector<double> y{"y"};
  // d/dw of -(-exp(w)) * (1 - y): the adjoint's factor (1 - y) prints as one
  // operand, and the double negation as written (not as C++'s --).
  const auto gw = fusor::grad(fusor::sum(-(-fusor::exp(w)) * (1 - y)), w);
  const std::string text = gw.str();
  CHECK(text.find(") * (1 - y)) * exp(w)") != std::string::npos);
  CHECK(text.find("-(-exp(w))") != std::string::npos);
  CHECK(text.find("--") == std::string::npos);
  auto f = fusor::function(fusor::inputs(y), fusor::outputs(gw));
  const xt::xtensor<double, 1> yv{0.25, 2.0, -1.0};
  const xt::xtensor<double, 1> got = f(yv);
  const xt::xtensor<double, 1> want = xt::exp(xt::xtensor<double, 1>{0.5, -1.0, 2.0}) * (1.0 - yv);
  CHECK(xt::allclose(got, want, 1e-15, 0.0));
  // The logistic regression's adjoint: (g * -y) * sigmoid(u), where it was
  // -(-(g * -y) * sigmoid(u)), and the same values (a negation is exact).
  auto b = fusor::shared(0.1, "b");
  const auto u = w * 2.0 + b;
  const auto p = fusor::sigmoid(u);
  const auto cost = fusor::mean(-y * fusor::log(p) - (1 - y) * fusor::log(1 - p));
  auto [gw2, gb] = fusor::grad(cost, w, b);
  CHECK(gw2.str().find("--") == std::string::npos);
  CHECK(gw2.str().find("-(-") == std::string::npos);
  auto h = fusor::function(fusor::inputs(y), fusor::outputs(gw2, gb));
  auto [a, c] = h(yv);
  const xt::xtensor<double, 1> pv = 1.0 / (1.0 + xt::exp(-(xt::xtensor<double, 1>{0.5, -1.0, 2.0} * 2.0 + 0.1)));
  CHECK(xt::allclose(a, 2.0 * (pv - yv) / 3.0, 1e-14, 1e-15));
  CHECK(std::abs(c - xt::mean(pv - yv)()) < 1e-14);
}

TEST_CASE("stop_gradient, disconnected targets and nodes without a gradient") {
  auto w = fusor::shared(xt::xtensor<double, 1>{1.0, 2.0}, "w");
  auto u = fusor::shared(xt::xtensor<double, 1>{3.0, 4.0}, "u");
  const xt::xtensor<double, 1> g = fusor::eval(fusor::grad(fusor::sum(w * fusor::stop_gradient(w)), w));
  CHECK(g == xt::xtensor<double, 1>{1.0, 2.0});
  // u does not appear: Theano's disconnected input, refused
  CHECK_THROWS_AS((void)fusor::grad(fusor::sum(w * w), u), fusor::value_error);
  try {  // w only below stop_gradient; u, of w's type, is the differentiable path
    (void)fusor::grad(fusor::sum(fusor::stop_gradient(w) * u), w);
    FAIL("a target only below stop_gradient has no gradient");
  } catch (const fusor::value_error& e) {
    CHECK(std::string(e.what()).find("does not appear") != std::string::npos);
  }
  // through an edge pad: refused, naming the node (test_grad_views.cpp and test_grad_joins.cpp have the selections)
  try {
    (void)fusor::grad(fusor::sum(fusor::pad(w, 1, fusor::edge)) + fusor::sum(w * w), w);
    FAIL("an edge pad is not differentiated");
  } catch (const fusor::value_error& e) {
    CHECK(std::string(e.what()).find("edge pad") != std::string::npos);
  }
  // ...but another variable of w's type read through one is fine: d/dw sum(pad(u)) * sum(w) = 3+3+4+4
  const xt::xtensor<double, 1> g2 =
      fusor::eval(fusor::grad(fusor::sum(fusor::pad(u, 1, fusor::edge)) * fusor::sum(w), w));
  CHECK(g2 == xt::xtensor<double, 1>{14.0, 14.0});
  // ...and an edge pad over a value used twice (stack(w, w) reads w[:, None]
  // twice: a cut point, whose walk the leaf's stops at) is refused too, not
  // left to the planner (found by the differential tests: "internal error").
  auto m = fusor::shared(xt::xtensor<double, 2>{{0.5, -0.2}, {0.3, 0.9}}, "m");
  auto padded = fusor::pad(fusor::stack(std::tuple(m, m), 1), {{1, 2}, {0, 0}, {0, 0}}, fusor::edge);
  try {
    (void)fusor::grad(fusor::sum(fusor::where(padded > 0.1, padded, padded)), m);
    FAIL("an edge pad over a shared value is not differentiated");
  } catch (const fusor::value_error& e) {
    CHECK(std::string(e.what()).find("edge pad") != std::string::npos);
  }
}

TEST_CASE("a two-layer perceptron's gradients equal the hand-written backpropagation") {
  // 5 samples, 4 features, 3 hidden units (ReLU), 2 classes, softmax cross-entropy
  auto [W1, b1, W2, b2] = perceptron(31);
  fusor::matrix<double> x{"x"}, y{"y"};
  const auto a1 = fusor::dot(x, W1) + b1;
  const auto h = fusor::maximum(a1, 0.0);
  const auto z = fusor::dot(h, W2) + b2;
  const auto log_p = fusor::log_softmax(z, 1);
  const auto cost = -fusor::mean(fusor::sum(y * log_p, 1));
  auto [gW1, gb1, gW2, gb2] = fusor::grad(cost, W1, b1, W2, b2);
  // by hand
  const auto dz = (fusor::exp(log_p) - y) / 5.0;
  const auto da1 = fusor::where(a1 > 0.0, fusor::dot(dz, fusor::transpose(W2)), 0.0);
  auto f = fusor::function(fusor::inputs(x, y), fusor::outputs(gW1, gb1, gW2, gb2, fusor::dot(fusor::transpose(x), da1),
                                                               fusor::sum(da1, 0), fusor::dot(fusor::transpose(h), dz),
                                                               fusor::sum(dz, 0)));
  const xt::xtensor<double, 2> xv = mat(5, 4, -1, 1, 35);
  const xt::xtensor<double, 2> yv{{1, 0}, {0, 1}, {0, 1}, {1, 0}, {1, 0}};
  auto [g1, g2, g3, g4, h1, h2, h3, h4] = f(xv, yv);
  CHECK(xt::allclose(g1, h1, 1e-12, 1e-14));
  CHECK(xt::allclose(g2, h2, 1e-12, 1e-14));
  CHECK(xt::allclose(g3, h3, 1e-12, 1e-14));
  CHECK(xt::allclose(g4, h4, 1e-12, 1e-14));
  CHECK(xt::amax(xt::abs(h1))() > 0.0);  // the comparison is not of zeros
  // b1 and b2, W1 and W2 are one C++ type each: the gradients' gates close
  // the other's contributions, and neither the plan nor an update shows them.
  const std::string plan = f.plan();
  CHECK(plan.find("dot(") != std::string::npos);
  CHECK(!has_zero_term(plan));
  auto train = fusor::function(fusor::inputs(x, y), fusor::outputs(cost),
                               fusor::updates(fusor::update(W1, W1 - 0.1 * gW1), fusor::update(b1, b1 - 0.1 * gb1),
                                              fusor::update(W2, W2 - 0.1 * gW2), fusor::update(b2, b2 - 0.1 * gb2)));
  const xt::xtensor<double, 2> W1_0 = W1.get_value(), W2_0 = W2.get_value();
  const xt::xtensor<double, 1> b1_0 = b1.get_value(), b2_0 = b2.get_value();
  (void)train(xv, yv);
  CHECK(!has_zero_term(train.plan()));
  // W1 and W2 are updated by BLAS accumulating the backward product into
  // them (the closed gates of the other matrix seen through); the values are
  // those of the gradients computed above.
  int by_blas = 0;
  for (const auto& s : train.last_plan().steps) by_blas += s.kind == fusor::step_kind::dot && s.accumulate;
  CHECK(by_blas == 2);
  CHECK(xt::allclose(W1.get_value(), W1_0 - 0.1 * g1, 1e-12, 1e-14));
  CHECK(xt::allclose(W2.get_value(), W2_0 - 0.1 * g3, 1e-12, 1e-14));
  // The biases' gradients sum the adjoints the backward products read from
  // temporaries: those temporaries, not the expressions again.
  int sums_of_dot_operands = 0;
  for (const auto& s : train.last_plan().steps) {
    if (s.kind != fusor::step_kind::reduce || s.source < 0) continue;
    bool read_by_dot = false;
    for (const auto& d : train.last_plan().steps)
      read_by_dot = read_by_dot || (d.kind == fusor::step_kind::dot &&
                                    std::find(d.reads.begin(), d.reads.end(), s.reads.at(0)) != d.reads.end());
    sums_of_dot_operands += read_by_dot;
  }
  CHECK(sums_of_dot_operands == 2);
  // The mean's 1 / n, a rank-0 adjoint, reaches the sum inside it broadcast:
  // no step reduces a value made of constants alone (a reduction that only
  // copied, compiled as a whole reduction kernel).
  int reductions_of_constants = 0;
  for (const auto& s : train.last_plan().steps)
    reductions_of_constants += s.kind == fusor::step_kind::reduce && s.reads.empty();
  CHECK(reductions_of_constants == 0);
  CHECK(xt::allclose(b1.get_value(), b1_0 - 0.1 * g2, 1e-12, 1e-14));
  CHECK(xt::allclose(b2.get_value(), b2_0 - 0.1 * g4, 1e-12, 1e-14));
}

TEST_CASE("a gradient's type is named by its cost, not spelled out: its name stays short") {
  // The perceptron again: each weight's gradient repeats the forward
  // expression once per local derivative. grad returns references spelled
  // by a name (gradient_of: the cost and the targets' leaves), and the
  // contributions below a cut point read its adjoint by a name too
  // (adjoint_of), so every type and function over a gradient — the tuple,
  // std::get, an update by it, the function's type — is named briefly (the
  // symbol table, and the debug information that -g writes).
  auto [W1, b1, W2, b2] = perceptron(41);
  fusor::matrix<double> x{"x"}, y{"y"};
  const auto h = fusor::maximum(fusor::dot(x, W1) + b1, 0.0);
  const auto cost = -fusor::mean(fusor::sum(y * fusor::log_softmax(fusor::dot(h, W2) + b2, 1), 1));
  auto [gW1, gb1, gW2, gb2] = fusor::grad(cost, W1, b1, W2, b2);
  using G = std::remove_cvref_t<decltype(gW1)>;
  static_assert(fusor::is_ref_v<G>);
  // A function's rewrites rebuild the gradient (it holds a log), and find
  // nothing to change: the rebuilt reference keeps its name.
  static_assert(std::is_same_v<fusor::stabilized_t<G>, G>);
  // As a debugger or the debug information spells them (not the mangled
  // names, which abbreviate repeats).
  const std::string name = demangled(typeid(G)), spelled = demangled(typeid(typename G::target_type)),
                    cost_name = demangled(typeid(cost));
  INFO("gradient: ", name.size(), " characters; spelled out: ", spelled.size(), "; cost: ", cost_name.size());
  CHECK(name.size() < 2 * cost_name.size() + 400);  // the cost, once
  CHECK(spelled.size() > 4 * name.size());          // what the name saves
  CHECK(spelled.find("adjoint_of") != std::string::npos);
  CHECK(name.find("gradient_of") != std::string::npos);
  // A reference under a name is the gradient itself: the same values, the
  // same plan as the expression it names.
  auto named = fusor::function(fusor::inputs(x, y), fusor::outputs(gW1, gb1, gW2, gb2));
  auto spelled_out = fusor::function(fusor::inputs(x, y),
                                     fusor::outputs(gW1.target(), gb1.target(), gW2.target(), gb2.target()));
  const xt::xtensor<double, 2> xv = mat(5, 4, -1, 1, 45);
  const xt::xtensor<double, 2> yv{{1, 0}, {0, 1}, {0, 1}, {1, 0}, {1, 0}};
  auto [n1, n2, n3, n4] = named(xv, yv);
  auto [s1, s2, s3, s4] = spelled_out(xv, yv);
  CHECK(n1 == s1);
  CHECK(n2 == s2);
  CHECK(n3 == s3);
  CHECK(n4 == s4);
  CHECK(xt::amax(xt::abs(n1))() > 0.0);
  CHECK(named.plan() == spelled_out.plan());
}
