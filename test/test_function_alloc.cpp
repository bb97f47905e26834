// Steady-state calls allocate nothing (Eigen's nomalloc test): this binary
// replaces the global operator new with a counting one and checks 0 heap
// allocations per call after the first, for functions whose outputs are
// borrowed (or that have none). A non-borrowed output must allocate: the
// caller owns a fresh value (R43e), and that is counted too, as a control.
#define FUSOR_CHECKED 1
#include <doctest/doctest.h>

#include <atomic>
#include <cstdlib>
#include <new>

#include <fusor/fusor.hpp>

#include "replace_new.hpp"

namespace {
std::atomic<std::size_t> allocations{0};
}

void* test_allocate(std::size_t n, std::size_t align) noexcept {
  allocations.fetch_add(1, std::memory_order_relaxed);
  return test_new::system_allocate(n, align);
}

namespace {
template <class F>
std::size_t allocations_per_call(F&& call, int warmup = 3, int calls = 100) {
  for (int i = 0; i < warmup; ++i) call();
  const std::size_t before = allocations.load();
  for (int i = 0; i < calls; ++i) call();
  return allocations.load() - before;
}
}  // namespace

TEST_CASE("W8-style: a 5-input fused function with a borrowed output allocates nothing") {
  fusor::vector<double> a{"a"}, b{"b"}, c{"c"}, d{"d"}, e{"e"};
  auto f = fusor::function(fusor::inputs(a, b, c, d, e), fusor::outputs(fusor::Out(a * b + c * d - e, fusor::borrow)));
  xt::xtensor<double, 1> av = xt::ones<double>({16}), bv = av * 2.0, cv = av * 3.0, dv = av * 4.0, ev = av * 5.0;
  double checksum = 0;
  const auto n = allocations_per_call([&] {
    auto r = f(av, bv, cv, dv, ev);
    checksum += r(0);
  });
  CHECK(n == 0);
  CHECK(checksum == doctest::Approx(103 * 9.0));  // 2 + 12 - 5 per call
}

TEST_CASE("updates in place, by ping-pong, and with reductions and dot allocate nothing") {
  auto w = fusor::shared(xt::xtensor<double, 1>(xt::ones<double>({64})), "w");
  auto W = fusor::shared(xt::xtensor<double, 2>(xt::ones<double>({8, 8}) * 0.01), "W");
  auto M = fusor::shared(xt::xtensor<double, 2>(xt::eye<double>(8)), "M");
  fusor::vector<double> g{"g"};
  auto f = fusor::function(fusor::inputs(fusor::In(g, fusor::borrow)),
                           fusor::outputs(fusor::Out(fusor::sum(w * g), fusor::borrow)),
                           fusor::updates(fusor::update(w, w - 0.001 * g / fusor::max(fusor::abs(g))),
                                          fusor::update(W, fusor::transpose(W) * 0.5 + fusor::dot(W, M) * 0.5)));
  xt::xtensor<double, 1> gv = xt::ones<double>({64});
  CHECK(allocations_per_call([&] { (void)f(gv); }) == 0);
  CHECK(f.update_was_in_place(0));
  CHECK_FALSE(f.update_was_in_place(1));  // ping-pong
}

TEST_CASE("a function whose only output is fresh allocates exactly that value (the control)") {
  fusor::vector<double> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(x * 2.0));
  xt::xtensor<double, 1> xv = xt::ones<double>({16});
  const auto n = allocations_per_call([&] { (void)f(xv); }, 3, 10);
  CHECK(n > 0);
  CHECK(n <= 10 * 2);  // the xtensor's buffer (and at most its shape), nothing of fusor's own
}
