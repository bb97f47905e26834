// Fault injection: "a failed call changes nothing", tested at every allocation.
//
// This binary replaces the global operator new (every form: plain, array,
// aligned, nothrow; fusor allocates all its buffers through them) with one
// that can be armed to fail at its K-th call. Each scenario below is built
// afresh for K = 1, 2, ... and its operation run with the K-th allocation
// failing, until K exceeds the allocations the operation makes. After every
// injected failure:
//   - each shared variable holds its old values in its old buffer (by address);
//   - a caller's argument lent with In(x, borrow) is unchanged;
//   - a view taken with get_value(borrow) shows the old values;
//   - a borrowed output of an earlier call shows its old values or reports
//     stale() (reading it would throw);
//   - retrying the operation succeeds and leaves exactly the state a run
//     without any failure leaves;
// and under AddressSanitizer nothing leaks (no archive, no buffer, no record),
// and no file descriptor stays open.
#define FUSOR_CHECKED 1
#include <doctest/doctest.h>

#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <new>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>
#include <fusor/io/npy.hpp>
#include <fusor/io/npz.hpp>

#include "replace_new.hpp"

// ------------------------------------------------------------------ the injector

namespace fault {
std::atomic<bool> armed{false};
std::atomic<long> remaining{0};
std::atomic<bool> fired{false};

/// Arms the injector: the k-th allocation from now fails (once).
void arm(long k) {
  fired = false;
  remaining = k;
  armed = true;
}
/// Disarms it; returns whether the failure was injected.
bool disarm() {
  armed = false;
  return fired.load();
}
bool fail_now() noexcept {
  if (!armed.load(std::memory_order_relaxed)) return false;
  if (remaining.fetch_sub(1) != 1) return false;
  armed = false;
  fired = true;
  return true;
}
}  // namespace fault

void* test_allocate(std::size_t n, std::size_t align) noexcept {
  return fault::fail_now() ? nullptr : test_new::system_allocate(n, align);
}

// ------------------------------------------------------------------ observed state

namespace {
namespace fs = std::filesystem;

using values = std::vector<double>;

/// What the caller can observe of one shared variable, one argument or one view.
struct observed {
  std::string what;
  values data;
  const void* address = nullptr;
  bool operator==(const observed&) const = default;
};

template <class T>
observed observe(const std::string& what, const fusor::shared<T>& s) {
  observed o{what, {}, nullptr};
  if (!s.has_value()) return o;
  const auto v = s.get_value(fusor::borrow);
  const auto* p = v.data();
  std::size_t n = 1;
  if constexpr (requires { v.size(); }) n = v.size();
  for (std::size_t i = 0; i < n; ++i) o.data.push_back(static_cast<double>(p[i]));
  o.address = p;
  return o;
}
template <class C>
observed observe_container(const std::string& what, const C& c) {
  observed o{what, {}, c.data()};
  for (std::size_t i = 0; i < c.size(); ++i) o.data.push_back(static_cast<double>(c.data()[i]));
  return o;
}

std::size_t open_descriptors() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

/// A scenario: `act` is the operation under test; `state` what the caller can
/// observe (variables, lent arguments, views); `views_ok` checks the borrowed
/// outputs of earlier calls after a failure (unchanged or stale).
struct scenario {
  std::function<void()> act;
  std::function<std::vector<observed>()> state;
  std::function<bool()> views_ok = [] { return true; };
};

/// Runs `make()`'s scenario with its K-th allocation failing, for every K it
/// performs; returns the number of failures injected. `allocates`: whether the
/// operation must allocate at all (borrowing, say, must not).
template <class Make>
int every_failure(Make make, bool allocates = true) {
  // The state a run without failure leaves: what every retry must reach.
  scenario golden = make();
  golden.act();
  const std::vector<observed> want_after = golden.state();
  int injected = 0;
  for (long k = 1;; ++k) {
    CAPTURE(k);
    scenario s = make();
    const std::vector<observed> before = s.state();
    const std::size_t fds = open_descriptors();
    bool threw = false;
    fault::arm(k);
    try {
      s.act();
    } catch (const std::bad_alloc&) {
      threw = true;
    }
    const bool fired = fault::disarm();
    if (!fired) {
      REQUIRE_FALSE(threw);
      break;
    }
    ++injected;
    if (threw) {
      // The failure reached the caller: nothing observable changed.
      const auto after = s.state();
      REQUIRE(after.size() == before.size());
      for (std::size_t i = 0; i < after.size(); ++i) {
        CAPTURE(after[i].what);
        CHECK(after[i].data == before[i].data);
        CHECK(after[i].address == before[i].address);
      }
      CHECK(s.views_ok());
      CHECK(open_descriptors() == fds);
      s.act();  // a retry succeeds
    }
    // Either way, the state is the one of a run without failure (values only:
    // addresses of fresh buffers differ between runs).
    const auto after = s.state();
    REQUIRE(after.size() == want_after.size());
    for (std::size_t i = 0; i < after.size(); ++i) {
      CAPTURE(after[i].what);
      CHECK(after[i].data == want_after[i].data);
    }
  }
  MESSAGE("failures injected: " << injected);
  CHECK((injected > 0) == allocates);  // a scenario that allocates tested something
  return injected;
}

using vec = xt::xtensor<double, 1>;
using mat = xt::xtensor<double, 2>;

/// The variables of a training step with every kind of update and output: w
/// through dot (in place), b a scalar (in place), A and B swapped (a transfer,
/// no copy), M through its transpose (not in place: ping-pong), with a view of
/// M held; a borrowed output, a plain one, and an input lent with
/// In(z, borrow) that a borrowed elementwise output may overwrite (R47);
/// `last` takes y's shape, so a call with a longer y allocates its new buffer
/// after the outputs are written.
struct model {
  fusor::matrix<double> x{"x"};
  fusor::vector<double> y{"y"};
  fusor::vector<double> z{"z"};
  fusor::shared<vec> w{vec{0.5, -0.25, 1.0}, "w"};
  fusor::shared<double> b{0.1, "b"};
  fusor::shared<vec> A{vec{1, 2}, "A"};
  fusor::shared<vec> B{vec{3, 4}, "B"};
  fusor::shared<mat> M{mat{{1, 2}, {3, 4}}, "M"};
  fusor::borrowed<mat> m_view = M.get_value(fusor::borrow);
  fusor::shared<vec> last{vec{0, 0}, "last"};  // takes y's shape: a buffer allocated after the outputs are written

  std::vector<observed> variables() const {
    return {observe("w", w),         observe("b", b), observe("A", A), observe("B", B), observe("M", M),
            observe_container("view of M", m_view), observe("last", last)};
  }
};

auto training_step(model& t) {
  auto err = fusor::sigmoid(fusor::dot(t.x, t.w) + t.b) - t.y;
  return fusor::function(
      fusor::inputs(t.x, t.y, fusor::In(t.z, fusor::borrow)),
      fusor::outputs(fusor::Out(fusor::mean(err * err), fusor::borrow), fusor::Out(err),
                     fusor::Out(t.z * 2.0 + 1.0, fusor::borrow)),
      fusor::updates(fusor::update(t.w, t.w - 0.1 * fusor::dot(fusor::transpose(t.x), err)),
                     fusor::update(t.b, t.b - 0.1 * fusor::mean(err)), fusor::update(t.A, t.B),
                     fusor::update(t.B, t.A), fusor::update(t.M, fusor::transpose(t.M) + 1.0),
                     fusor::update(t.last, t.y * 2.0)));
}
using training_function = decltype(training_step(std::declval<model&>()));

mat data_x(std::size_t rows) {
  mat x = mat::from_shape({rows, 3});
  for (std::size_t i = 0; i < x.size(); ++i) x.data()[i] = std::sin(double(i)) * 0.5;
  return x;
}
vec data_y(std::size_t rows) {
  vec y = vec::from_shape({rows});
  for (std::size_t i = 0; i < rows; ++i) y(i) = double(i % 2);
  return y;
}
}  // namespace

TEST_CASE("a function's first call: every update kind, borrowed and plain outputs, a lent input") {
  struct holder {
    model t;
    training_function f = training_step(t);
    mat x = data_x(5);
    vec y = data_y(5);
    vec z{1, 2, 3};
  };
  every_failure([] {
    auto h = std::make_shared<holder>();
    scenario s;
    s.act = [h] { (void)h->f(h->x, h->y, h->z); };
    s.state = [h] {
      auto v = h->t.variables();
      v.push_back(observe_container("lent z", h->z));
      return v;
    };
    return s;
  });
}

TEST_CASE("a later call with larger shapes: arena, output and spare buffers grow; earlier borrowed outputs") {
  struct holder {
    model t;
    training_function f = training_step(t);
    mat x1 = data_x(2), x2 = data_x(40);
    vec y1 = data_y(2), y2 = data_y(40);
    vec z1{1, 2, 3}, z2 = vec::from_shape({70});
    std::optional<fusor::borrowed_output<double, 0>> cost;
    std::optional<fusor::borrowed_output<double, 1>> twice;
    double cost_value = 0;
    values twice_values;
  };
  every_failure([] {
    auto h = std::make_shared<holder>();
    for (std::size_t i = 0; i < h->z2.size(); ++i) h->z2(i) = double(i);
    {
      auto [c, e, t2] = h->f(h->x1, h->y1, h->z1);
      h->cost.emplace(c);
      h->twice.emplace(t2);
      h->cost_value = c.value();
      for (std::size_t i = 0; i < t2.size(); ++i) h->twice_values.push_back(t2.flat(i));
    }
    scenario s;
    s.act = [h] { (void)h->f(h->x2, h->y2, h->z2); };
    s.state = [h] {
      auto v = h->t.variables();
      v.push_back(observe_container("lent z", h->z2));
      return v;
    };
    s.views_ok = [h] {
      bool ok = h->cost->stale() || h->cost->value() == h->cost_value;
      if (!h->twice->stale())
        for (std::size_t i = 0; i < h->twice_values.size(); ++i) ok = ok && h->twice->flat(i) == h->twice_values[i];
      return ok;
    };
    return s;
  });
}

TEST_CASE("set_value: copied with a conversion, borrowed, adopted") {
  struct holder {
    fusor::shared<xt::xarray<double>> s{xt::xarray<double>{1, 2, 3}, "s"};
    fusor::borrowed<xt::xarray<double>> view = s.get_value(fusor::borrow);
    xt::xarray<std::int32_t> ints{7, 8, 9, 10};
    xt::xarray<double> lent{11, 12};
  };
  // One operation per run: "changes nothing" is a property of each call.
  const std::pair<std::function<void(holder&)>, bool> operations[] = {
      {[](holder& h) { h.s.set_value(h.ints); }, true},
      {[](holder& h) { h.s.set_value(h.lent, fusor::borrow); }, false},  // aliasing allocates nothing
      {[](holder& h) { h.s.set_value(xt::xarray<double>{13, 14, 15}); }, true},
  };
  for (const auto& [op, allocates] : operations)
    every_failure(
        [op = op] {
          auto h = std::make_shared<holder>();
          scenario s;
          s.act = [h, op] { op(*h); };
          s.state = [h] { return std::vector<observed>{observe("s", h->s), observe_container("view of s", h->view)}; };
          return s;
        },
        allocates);
}

TEST_CASE("construction: a failed constructor registers nothing") {
  struct holder {
    xt::xarray<double> v{1, 2, 3};
    std::vector<fusor::shared<xt::xarray<double>>> made;
  };
  every_failure([] {
    auto h = std::make_shared<holder>();
    scenario s;
    s.act = [h] {
      fusor::shared<xt::xarray<double>> a(h->v, "copied");
      fusor::shared<xt::xarray<double>> b(h->v, fusor::borrow, "borrowed");
      fusor::shared<xt::xarray<double>> c(xt::xarray<double>{4, 5}, "adopted");
      h->made = {a, b, c};
    };
    s.state = [h] {
      // Values only (the borrowed one must alias v: a failed earlier attempt
      // left no registered record holding v's buffer, or it would have copied).
      std::vector<observed> v{observe_container("v", h->v)};
      for (const auto& m : h->made) {
        auto o = observe(m.name(), m);
        o.address = nullptr;
        v.push_back(o);
      }
      // 1 when the borrowed variable aliases v, as it must after a success:
      // a failed earlier attempt left no record holding v's buffer (else the
      // borrow would have copied: uniqueness, M3).
      const bool aliases = h->made.size() != 3 || h->made[1].get_value(fusor::borrow).data() == h->v.data();
      v.push_back({"borrowed aliases v", {aliases ? 1.0 : 0.0}, nullptr});
      return v;
    };
    return s;
  });
}

TEST_CASE("assign: in place and into fresh storage") {
  struct holder {
    fusor::shared<vec> W{vec{1, 2, 3}, "W"};
    std::optional<fusor::borrowed<vec>> w_view;  // a held view forbids writing in place
    fusor::vector<double> g{"g"};
    vec gv{0.5, 0.5, 0.5};
  };
  const std::function<void(holder&)> operations[] = {
      // elementwise over W plus a reduction of W: in place when no view is held
      [](holder& h) { fusor::assign(h.W, h.W - 0.1 * h.g + fusor::sum(h.W), h.g = h.gv); },
      // through a permutation: into fresh storage
      [](holder& h) { fusor::assign(h.W, fusor::reshape(fusor::transpose(fusor::reshape(h.W, {3, 1})), {3}) * 2.0); },
  };
  for (const bool view : {true, false})
    for (const auto& op : operations)
      every_failure([op, view] {
        auto h = std::make_shared<holder>();
        if (view) h->w_view.emplace(h->W.get_value(fusor::borrow));
        scenario s;
        s.act = [h, op] { op(*h); };
        s.state = [h] {
          std::vector<observed> v{observe("W", h->W)};
          if (h->w_view) v.push_back(observe_container("view of W", *h->w_view));
          return v;
        };
        return s;
      });
}

TEST_CASE("loading: several variables from one .npz, one from a .npy") {
  const fs::path dir = fs::temp_directory_path() / ("fusor-fault-" + std::to_string(std::random_device{}()));
  fs::create_directories(dir);
  {
    auto w = fusor::shared(xt::xarray<double>{1.5, 2.5, 3.5}, "w");
    auto b = fusor::shared(xt::xarray<float>{-1}, "b");
    auto k = fusor::shared(xt::xarray<std::int64_t>{{1, 2}, {3, 4}}, "k");
    fusor::save(dir / "model.npz", w, b, k);
    fusor::save(w, dir / "w.npy");
  }
  struct holder {
    fusor::shared<xt::xarray<double>> w{xt::xarray<double>{0}, "w"};
    fusor::shared<xt::xarray<double>> b{xt::xarray<double>{0, 0}, "b"};  // float32 in the file: converted
    fusor::shared<xt::xarray<std::int64_t>> k{xt::xarray<std::int64_t>{{0, 0}}, "k"};
    fusor::shared<xt::xarray<double>> single{xt::xarray<double>{9}, "single"};
    fs::path dir;
  };
  every_failure([dir] {
    auto h = std::make_shared<holder>();
    h->dir = dir;
    scenario s;
    s.act = [h] { fusor::load(h->dir / "model.npz", h->w, h->b, h->k); };
    s.state = [h] {
      return std::vector<observed>{observe("w", h->w), observe("b", h->b), observe("k", h->k)};
    };
    return s;
  });
  every_failure([dir] {
    auto h = std::make_shared<holder>();
    h->dir = dir;
    scenario s;
    s.act = [h] { fusor::load_into(h->single, h->dir / "w.npy"); };
    s.state = [h] { return std::vector<observed>{observe("single", h->single)}; };
    return s;
  });
  fs::remove_all(dir);
}

