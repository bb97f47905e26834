// The checks every generated differential-test program runs (generate.py
// writes the programs; this header is what they call).
//
// A program builds one fusor::function from random expressions and calls it
// several times. Around every call, `program` snapshots what the memory model
// promises to keep (each shared variable's buffer address and bytes, each
// argument's bytes, each borrowed output kept from an earlier call) and checks
// afterwards:
//   - values equal NumPy's (read from the .npz the generator wrote with the
//     program): integers and bools exactly, floats within the per-element
//     bound stored beside them, NaN where NumPy has NaN, infinities exactly;
//   - NumPy's refusals are fusor's: where NumPy raised, the call throws a
//     fusor::error, and then no shared variable, argument or kept borrowed
//     output changed;
//   - a fresh output aliases nothing: no other output, no argument, no shared
//     variable's buffer; a borrowed output overlaps no other output and may be
//     a borrowed input's buffer only when it is exactly that buffer;
//   - an argument changed only when it was lent with In(x, borrow) and a
//     borrowed output now lives in its buffer;
//   - a shared variable that no update names kept its buffer and its bytes;
//   - a borrowed output kept from an earlier call reports stale() or still
//     shows the values it had.
#pragma once

#include <doctest/doctest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <tuple>
#include <type_traits>
#include <vector>

#include <xtensor/xtensor.hpp>

#include <fusor/fusor.hpp>
#include <fusor/io/npz.hpp>
#ifdef DIFFTEST_DEVICE
#include <fusor/device.hpp>
#include <fusor/memory/emulated_device.hpp>
#endif
#ifdef DIFFTEST_REAL_DEVICE
#include <fusor/cuda.hpp>
#endif

namespace difftest {

// The same generated programs run with their shared variables on the host,
// or, built with DIFFTEST_DEVICE, on an emulated device (the device backend's
// plans and kernels, checked against the same NumPy values); with
// DIFFTEST_REAL_DEVICE too, compiled by nvcc for the GPU suite, on a real one.
#ifdef DIFFTEST_DEVICE
inline constexpr fusor::memory_space space = fusor::cuda(0);
#else
inline constexpr fusor::memory_space space = fusor::host;
#endif

/// fusor::function, with the device kernels instantiated first where the
/// program runs on a device (fusor/device.hpp).
template <class... A>
auto function(A&&... args) {
#ifdef DIFFTEST_DEVICE
  fusor::instantiate_device<decltype(fusor::function(std::forward<A>(args)...))>();
#endif
  return fusor::function(std::forward<A>(args)...);
}

/// What every program of this executable did, printed when it exits; the
/// campaign script adds the lines of all executables up.
struct totals {
  std::size_t programs = 0, gradients = 0, hessians = 0, disconnected = 0, calls = 0, refused = 0, values = 0,
              mismatches = 0;
  ~totals() {
    std::printf(
        "difftest: %zu programs (%zu gradient checks, %zu second derivatives, %zu refused as disconnected), %zu calls "
        "(%zu refused as NumPy refuses), %zu values checked, %zu mismatches\n",
        programs, gradients, hessians, disconnected, calls, refused, values, mismatches);
  }
};
inline totals& counts() {
  static totals t;
  return t;
}

/// The expected values and the arguments of one generated unit (its .npz,
/// read once; a program may hold several units).
inline const std::map<std::string, fusor::npy_data>& data(const char* file) {
  static std::map<std::string, std::map<std::string, fusor::npy_data>> by_file;
  auto it = by_file.find(file);
  if (it == by_file.end()) it = by_file.emplace(file, fusor::read_npz(file)).first;
  return it->second;
}

/// A half-open byte range.
struct span {
  const std::byte* lo = nullptr;
  const std::byte* hi = nullptr;
  bool empty() const { return lo == hi; }
  bool overlaps(const span& o) const { return !empty() && !o.empty() && lo < o.hi && o.lo < hi; }
};

template <class E>
span bytes_of(const E* p, std::size_t n) {
  const auto* b = reinterpret_cast<const std::byte*>(p);
  return {b, b + n * sizeof(E)};
}

inline std::vector<std::byte> copy_of(const span& s) { return {s.lo, s.hi}; }

inline bool same_bytes(const span& s, const std::vector<std::byte>& seen) {
  return static_cast<std::size_t>(s.hi - s.lo) == seen.size() &&
         (seen.empty() || std::memcmp(s.lo, seen.data(), seen.size()) == 0);
}

/// An output or a value read back: its elements, in C order, and its shape.
template <class E>
struct elements {
  const E* p = nullptr;
  std::size_t n = 0;
  std::vector<std::size_t> shape;
};

template <class R>
auto elements_of(const R& r) {
  if constexpr (std::is_arithmetic_v<R>) {
    return elements<R>{&r, 1, {}};
  } else {
    using E = std::remove_cv_t<std::remove_pointer_t<decltype(r.data())>>;
    elements<E> out{r.data(), r.size(), {}};
    for (std::size_t i = 0; i < r.shape().size(); ++i) out.shape.push_back(r.shape()[i]);
    return out;
  }
}

template <class R>
inline constexpr bool is_borrowed_output = false;
template <class E, int N>
inline constexpr bool is_borrowed_output<fusor::borrowed_output<E, N>> = true;

template <class T>
std::string shape_text(const T& s) {
  std::ostringstream o;
  o << '(';
  for (std::size_t i = 0; i < s.size(); ++i) o << (i ? ", " : "") << s[i];
  o << (s.size() == 1 ? ",)" : ")");
  return o.str();
}

template <class E>
std::string number_text(E v) {
  std::ostringstream o;
  o.precision(std::is_same_v<E, float> ? 9 : 17);
  if constexpr (std::is_same_v<E, bool>) o << (v ? "True" : "False");
  else o << +v;
  return o.str();
}

class program {
 public:
  program(const char* file, std::string name) : all_(data(file)), name_(std::move(name)) { ++counts().programs; }
  program(const program&) = delete;
  program& operator=(const program&) = delete;

  /// An array the generator stored for this program ("<program>.<key>").
  template <class T, std::size_t N>
  xt::xtensor<T, N> array(const std::string& key) const {
    const fusor::npy_data& d = entry(key);
    REQUIRE_MESSAGE(d.type == fusor::dtype_of<T>, name_, ": ", key, " is stored as another dtype");
    REQUIRE_MESSAGE(d.shape.size() == N, name_, ": ", key, " is stored with another rank");
    std::array<std::size_t, N> shape{};
    for (std::size_t i = 0; i < N; ++i) shape[i] = d.shape[i];
    xt::xtensor<T, N> out = xt::xtensor<T, N>::from_shape(shape);
    REQUIRE(d.bytes.size() == out.size() * sizeof(T));
    if (!d.bytes.empty()) std::memcpy(out.data(), d.bytes.data(), d.bytes.size());
    return out;
  }

  /// Keeps a value alive for the rest of the program (a buffer lent to a
  /// shared variable with set_value(v, borrow)).
  template <class T>
  T& hold(T value) {
    auto p = std::make_shared<T>(std::move(value));
    held_.push_back(p);
    return *p;
  }

  /// After set_value(v, borrow) of a value of the variable's dtype, the
  /// variable's storage is that buffer (on the host: a device copies it).
  template <class V, class A>
  void check_lent(const fusor::shared<V>& var, const A& lent) {
    const auto storage = var.get_value(fusor::borrow, fusor::internal_type);
    if (!fusor::host_accessible(storage.space())) return;
    if (lent.size() != 0 && storage.data() != lent.data())
      fail("set_value(v, borrow) of '" + var.name() + "' copied the buffer it was lent");
  }

  /// A gradient program's checks ran (verify_grad reports its own failures).
  void gradient_checked() { ++counts().gradients; }
  /// A Hessian-vector product was checked (verify_hessian_vector reports its own failures).
  void hessian_checked() { ++counts().hessians; }

  // ---- one call ------------------------------------------------------------

  template <class... V>
  void begin(int call, const fusor::shared<V>&... vars) {
    call_ = call;
    ++counts().calls;
    expect_error_ = has(prefix() + "error");
    refused_ = false;
    vars_.clear();
    (snapshot(vars), ...);
    args_.clear();
  }

  /// An argument's own buffer: `writable` when it is lent with In(x, borrow)
  /// as a non-const lvalue (fusor may then use it as an output's buffer).
  template <class A>
  void argument(const A& a, bool writable) {
    const span s = bytes_of(a.data(), a.size());
    for (const auto& x : args_)
      if (x.bytes.lo == s.lo && x.bytes.hi == s.hi) return;  // the same buffer passed twice
    args_.push_back({s, copy_of(s), writable});
  }

  template <class F>
  void run(F&& call) {
    outputs_.clear();
    try {
      using R = decltype(call());
      if constexpr (std::is_void_v<R>) {
        call();
        succeeded();
      } else {
        const R r = call();
        if (expect_error_) return succeeded();
        if constexpr (requires { std::tuple_size<R>::value; }) {
          [&]<std::size_t... K>(std::index_sequence<K...>) { (output(K, std::get<K>(r)), ...); }(
              std::make_index_sequence<std::tuple_size_v<R>>{});
        } else {
          output(0, r);
        }
        succeeded();
      }
    } catch (const fusor::error& e) {
      refused(e.what());
    }
  }

  template <class... V>
  void end(const fusor::shared<V>&... vars) {
    std::size_t j = 0;
    (check_variable(j++, vars), ...);
    check_kept();
  }

 private:
  struct variable {
    std::string name;
    const void* data;
    std::vector<std::byte> bytes;
    std::function<span()> buffer;  ///< the variable's buffer now, where the host can see it
  };
  struct argument_record {
    span bytes;
    std::vector<std::byte> before;
    bool writable;
  };
  struct output_record {
    span bytes;
    bool borrowed;
  };
  struct kept_output {
    std::string what;
    std::function<bool()> stale;
    std::function<span()> bytes;
    std::vector<std::byte> seen;
  };

  std::string prefix() const { return "c" + std::to_string(call_) + "."; }
  std::string where() const { return name_ + " call " + std::to_string(call_); }
  void fail(const std::string& what) {
    ++counts().mismatches;
    FAIL_CHECK(where(), ": ", what);
  }

  bool has(const std::string& key) const { return all_.count(name_ + "." + key) != 0; }
  const fusor::npy_data& entry(const std::string& key) const {
    const auto it = all_.find(name_ + "." + key);
    REQUIRE_MESSAGE(it != all_.end(), "the data file has no entry ", name_, ".", key);
    return it->second;
  }

  // A variable's buffer is its internal storage (on a device, a device
  // address, compared and never read); its values are read through
  // get_value(borrow) (on a device, a host copy).
  template <class V>
  void snapshot(const fusor::shared<V>& v) {
    const auto values = v.get_value(fusor::borrow);
    vars_.push_back({v.name(), v.get_value(fusor::borrow, fusor::internal_type).data(),
                     copy_of(bytes_of(values.data(), values.size())), [&v] {
                       const auto a = v.get_value(fusor::borrow, fusor::internal_type);
                       return fusor::host_accessible(a.space()) ? bytes_of(a.data(), a.size()) : span{};
                     }});
  }

  template <class R>
  void output(std::size_t k, const R& r) {
    const auto got = elements_of(r);
    const span s = bytes_of(got.p, got.n);
    const bool borrowed = is_borrowed_output<R>;
    compare("output " + std::to_string(k), prefix() + "out" + std::to_string(k), got);
    for (std::size_t i = 0; i < outputs_.size(); ++i)
      if (s.overlaps(outputs_[i].bytes))
        fail("output " + std::to_string(k) + " overlaps output " + std::to_string(i));
    outputs_.push_back({s, borrowed});
    if constexpr (is_borrowed_output<R>) {
      kept_.push_back({where() + " output " + std::to_string(k), [r] { return r.stale(); },
                       [r] { return bytes_of(r.data(), r.size()); }, copy_of(s)});
      if (kept_.size() > 6) kept_.erase(kept_.begin());
    }
  }

  void succeeded() {
    if (expect_error_) return fail("NumPy refuses this call (see the comment above it), but fusor's call succeeded");
    for (std::size_t k = 0; k < outputs_.size(); ++k) {
      const output_record& o = outputs_[k];
      // (Checked here, while the outputs are alive.)
      for (const variable& v : vars_)
        if (!o.borrowed && o.bytes.overlaps(v.buffer()))
          fail("output " + std::to_string(k) + " aliases shared variable '" + v.name + "'");
      for (const argument_record& a : args_) {
        if (!o.bytes.overlaps(a.bytes)) continue;
        const bool in_place = o.borrowed && a.writable && o.bytes.lo == a.bytes.lo && o.bytes.hi == a.bytes.hi;
        if (!in_place)
          fail("output " + std::to_string(k) + (o.borrowed ? " (borrowed)" : "") +
               " overlaps an argument's buffer without being a borrowed output in a borrowed input's place");
      }
    }
    for (const argument_record& a : args_) {
      if (same_bytes(a.bytes, a.before)) continue;
      bool became_output = false;
      for (const output_record& o : outputs_)
        became_output |= o.borrowed && a.writable && o.bytes.lo == a.bytes.lo && o.bytes.hi == a.bytes.hi;
      if (!became_output) fail("an argument's buffer changed, and no borrowed output lives in it");
    }
  }

  void refused(const std::string& message) {
    ++counts().refused;
    if (!expect_error_) fail("fusor refused a call NumPy computes: " + message);
    for (const argument_record& a : args_)
      if (!same_bytes(a.bytes, a.before)) fail("a refused call changed an argument");
    refused_ = true;
  }

  template <class V>
  void check_variable(std::size_t j, const fusor::shared<V>& v) {
    const auto storage = v.get_value(fusor::borrow);
    const auto internal = v.get_value(fusor::borrow, fusor::internal_type);
    const span now = bytes_of(storage.data(), storage.size());
    const variable& before = vars_.at(j);
    const bool updated = !refused_ && has(prefix() + "v" + std::to_string(j));
    if (!updated) {
      if (internal.data() != before.data && storage.size() != 0)
        fail("shared variable '" + v.name() + "' is not updated by this call but its buffer moved");
      if (!same_bytes(now, before.bytes))
        fail("shared variable '" + v.name() + "' is not updated by this call but its values changed");
    } else {
      compare("shared variable '" + v.name() + "'", prefix() + "v" + std::to_string(j), elements_of(storage));
    }
  }

  void check_kept() {
    for (kept_output& k : kept_) {
      if (k.stale()) continue;
      if (!same_bytes(k.bytes(), k.seen)) fail(k.what + ", kept, reports stale() == false but its values changed");
    }
    // A borrowed output in a borrowed input's place lives in the caller's
    // argument, which the program drops after this call: keep it no longer.
    std::erase_if(kept_, [&](const kept_output& k) {
      if (k.stale()) return false;
      const span b = k.bytes();
      for (const argument_record& a : args_)
        if (b.overlaps(a.bytes)) return true;
      return false;
    });
  }

 public:
  /// A gradient or a second derivative fusor refuses because the cost (or
  /// the gradient) reads the variable only through comparisons (abs, clip,
  /// max...) or shapes (a cost linear in it): documented. The message is
  /// checked here; that the refusal is right, by differences
  /// (verify_no_gradient, verify_no_second_derivative).
  void disconnected(const std::string& message) {
    CHECK_MESSAGE(message.find("does not appear in the cost") != std::string::npos, message);
    ++counts().disconnected;
  }

 private:

  template <class E>
  void compare(const std::string& what, const std::string& key, const elements<E>& got) {
    const fusor::npy_data& want = entry(key);
    if (want.type != fusor::dtype_of<E>) {
      fail(what + ": dtype " + std::string(fusor::name(fusor::dtype_of<E>)) + ", NumPy's is " +
           std::string(fusor::name(want.type)));
      return;
    }
    std::vector<std::size_t> want_shape(want.shape.begin(), want.shape.begin() + want.shape.size());
    if (want_shape != got.shape) {
      fail(what + ": shape " + shape_text(got.shape) + ", NumPy's is " + shape_text(want_shape));
      return;
    }
    const E* w = reinterpret_cast<const E*>(want.bytes.data());
    const double* tol = nullptr;
    if constexpr (std::is_floating_point_v<E>) tol = reinterpret_cast<const double*>(entry(key + ".tol").bytes.data());
    int wrong = 0;
    for (std::size_t i = 0; i < got.n; ++i) {
      ++counts().values;
      const E g = got.p[i];
      bool ok = g == w[i];
      if constexpr (std::is_floating_point_v<E>) {
        if (std::isinf(tol[i])) ok = true;  // undecided: a bound reached a function's domain edge
        else if (std::isnan(w[i])) ok = std::isnan(g);
        else if (std::isfinite(w[i]) && std::isfinite(g))
          ok = std::fabs(static_cast<double>(g) - static_cast<double>(w[i])) <= tol[i];
      }
      if (!ok && ++wrong <= 4) {
        std::string bound;
        if constexpr (std::is_floating_point_v<E>) bound = " (bound " + number_text(tol[i]) + ")";
        fail(what + ": element " + std::to_string(i) + " of " + shape_text(got.shape) + " is " + number_text(g) +
             ", NumPy's " + number_text(w[i]) + bound);
      }
    }
  }

#if defined(DIFFTEST_DEVICE) && !defined(DIFFTEST_REAL_DEVICE)
  fusor::emulated_devices emulation_{fusor::emulation_options{.devices = 1}};
#endif
  const std::map<std::string, fusor::npy_data>& all_;
  std::string name_;
  int call_ = 0;
  bool expect_error_ = false;
  bool refused_ = false;
  std::vector<variable> vars_;
  std::vector<argument_record> args_;
  std::vector<output_record> outputs_;
  std::vector<kept_output> kept_;
  std::vector<std::shared_ptr<void>> held_;
};

}  // namespace difftest
