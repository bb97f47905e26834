// The thread-safety contract (README, "Thread safety"), exercised so that
// ThreadSanitizer can see every access it promises is race-free:
//   - one function object is not re-entered: a concurrent call throws;
//   - distinct functions run concurrently when they update no common variable
//     and no thread changes a variable another function reads;
//   - shared variables may be created, borrowed, read and destroyed on many
//     threads at once (the registry that keeps buffers unique is locked);
//   - reading one variable from many threads (get_value, eval, functions that
//     only read it) is safe; the settings are atomic.
// CI runs this binary under ThreadSanitizer as well as in the normal builds.
#include <doctest/doctest.h>

#include <atomic>
#include <thread>
#include <vector>

#include <fusor/fusor.hpp>

namespace {
/// A value whose data() waits until released: holds a call open.
struct gate {
  static inline std::atomic<bool> entered{false};
  static inline std::atomic<bool> open{false};
  double v = 1.0;
};

constexpr int threads = 4;

template <class F>
void on_threads(F f) {
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) pool.emplace_back([&f, t] { f(t); });
  for (auto& th : pool) th.join();
}
}  // namespace

template <>
struct fusor::shared_constructor<gate> {
  using element_type = double;
  static constexpr int rank = 0;
  static fusor::dims shape(const gate&) { return {}; }
  static const double* data(const gate& g) {
    gate::entered = true;
    while (!gate::open) std::this_thread::yield();
    return &g.v;
  }
  static gate make(const fusor::dims&, const double* src) { return gate{*src}; }
};

TEST_CASE("one function object is not re-entered: a concurrent call throws and changes nothing") {
  fusor::scalar<double> x{"x"};
  auto acc = fusor::shared(0.0, "acc");
  auto f = fusor::function(fusor::inputs(x), fusor::updates(fusor::update(acc, acc + x)));
  std::thread t([&] { f(gate{}); });
  while (!gate::entered) std::this_thread::yield();
  CHECK_THROWS_AS(f(1.0), fusor::error);  // the first call is still running
  gate::open = true;
  t.join();
  CHECK(acc.get_value() == 1.0);
  f(2.0);  // and the function is usable again
  CHECK(acc.get_value() == 3.0);
}

TEST_CASE("distinct functions run concurrently: common reads, distinct updates") {
  auto a = fusor::shared(xt::xtensor<double, 1>{0, 0}, "a");
  auto b = fusor::shared(xt::xtensor<double, 1>{0, 0}, "b");
  auto k = fusor::shared(xt::xtensor<double, 1>{1, 2}, "k");  // read by both, updated by neither
  fusor::vector<double> x{"x"};
  auto fa = fusor::function(fusor::inputs(), fusor::updates(fusor::update(a, a + k)));
  auto fb = fusor::function(fusor::inputs(x), fusor::outputs(fusor::Out(fusor::sum(x * k), fusor::borrow)),
                            fusor::updates(fusor::update(b, b + k * 2.0)));
  std::thread ta([&] {
    for (int i = 0; i < 2000; ++i) fa();
  });
  double last = 0;
  std::thread tb([&] {
    const xt::xtensor<double, 1> xv = {1, 1};
    for (int i = 0; i < 2000; ++i) last = fb(xv).value();
  });
  ta.join();
  tb.join();
  CHECK(a.get_value() == xt::xtensor<double, 1>{2000, 4000});
  CHECK(b.get_value() == xt::xtensor<double, 1>{4000, 8000});
  CHECK(last == 3.0);
}

TEST_CASE("shared variables are created, borrowed and destroyed on many threads at once") {
  // Every thread borrows a buffer of its own, and also tries to borrow one
  // buffer that another variable holds: the registry must answer each
  // question under its lock (unique buffers: the second borrow copies).
  xt::xtensor<double, 1> common = {1, 2, 3};
  auto holder = fusor::shared(common, fusor::borrow, "holder");
  REQUIRE(holder.get_value(fusor::borrow).data() == common.data());
  std::atomic<int> aliased{0}, copied{0}, wrong{0};
  on_threads([&](int t) {
    for (int i = 0; i < 200; ++i) {
      xt::xtensor<double, 1> own = {double(t), double(i)};
      auto mine = fusor::shared(own, fusor::borrow, "mine");
      if (mine.get_value(fusor::borrow).data() == own.data()) ++aliased;
      auto again = fusor::shared(common, fusor::borrow, "again");
      if (again.get_value(fusor::borrow).data() != common.data()) ++copied;
      auto moved = fusor::shared(xt::xtensor<double, 1>{double(i)});
      moved.set_value(xt::xtensor<double, 1>{double(t), 1.0});
      if (moved.get_value()(0) != double(t)) ++wrong;
    }
  });
  CHECK(aliased == threads * 200);
  CHECK(copied == threads * 200);
  CHECK(wrong == 0);
}

TEST_CASE("one variable read from many threads: get_value, views, eval, functions that only read it") {
  auto w = fusor::shared(xt::xtensor<double, 1>{1, 2, 3, 4}, "w");
  fusor::vector<double> x{"x"};
  std::atomic<int> wrong{0};
  on_threads([&](int) {
    auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::dot(w, x)));  // one function per thread
    const xt::xtensor<double, 1> ones = {1, 1, 1, 1};
    for (int i = 0; i < 300; ++i) {
      if (w.get_value()(3) != 4.0) ++wrong;
      const auto view = w.get_value(fusor::borrow);
      if (view(0) != 1.0) ++wrong;
      if (fusor::eval(fusor::sum(w * x), x = ones) != 10.0) ++wrong;
      if (f(ones) != 10.0) ++wrong;
    }
  });
  CHECK(wrong == 0);
}

TEST_CASE("the settings are atomic: .value() reads the flag while another thread sets it") {
  auto s = fusor::shared(xt::xtensor<double, 1>{5, 6}, "s");
  std::atomic<bool> go{false};
  std::atomic<int> wrong{0};
  constexpr int rounds = 2000;
  std::thread toggler([&] {
    while (!go) std::this_thread::yield();
    for (int i = 0; i < rounds; ++i) fusor::config().shared_value_borrows = (i % 2) == 0;
  });
  std::thread reader([&] {
    while (!go) std::this_thread::yield();
    for (int i = 0; i < rounds; ++i)
      if (s.value()(1) != 6.0) ++wrong;
  });
  go = true;
  toggler.join();
  reader.join();
  fusor::config().shared_value_borrows = true;
  CHECK(wrong == 0);
}
