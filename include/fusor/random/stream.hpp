// fusor/random/stream.hpp — random streams (Theano's RandomStreams).
//
//   fusor::random_stream rng(42);
//   auto W = fusor::shared(fusor::eval(rng.normal<float>({784, 128}, 0.0f, 0.05f)), "W");
//   auto noisy = fusor::function(fusor::inputs(x), fusor::outputs(x + rng.uniform({64, 784}, -0.1, 0.1)));
//
// A draw (`rng.uniform(...)`, `rng.normal(...)`, `rng.bernoulli(...)`) is an
// expression leaf: element i is Philox(key of the draw, (i, call counter))
// (random/philox.hpp), so it fuses into the kernel that reads it and gives the
// same numbers on every machine, vector width and device.
//
// The stream's state is a shared variable holding a call counter. Every
// function, eval and assign that reads a draw advances it after the call
// succeeds (Theano's default updates): two calls draw different numbers, and a
// call that fails draws none — the next call gives what the failed one would
// have. Each draw of a stream has its own key (the seed and the draw's
// number), so two draws in one expression are independent; the same draw
// read twice in one call gives the same numbers, as a Theano random variable
// does. A stream made again with the same seed, the same draws in the same
// order and the same calls gives the same numbers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <type_traits>

#include <xtensor/xtensor.hpp>

#include "fusor/expr/generate.hpp"
#include "fusor/random/philox.hpp"
#include "fusor/shared.hpp"

namespace fusor {

namespace detail {
/// Advances a random stream's call counter by one (variable_base::advance):
/// in place when fusor alone holds the buffer, else into a fresh one (a
/// caller's borrowed view keeps the old count).
inline void advance_call_counter(variable_base& v) {
  auto& r = static_cast<tensor_variable<std::uint64_t>&>(v);
  const array<std::uint64_t>& s = r.storage();
  std::uint64_t count = 0;
  copy_bytes(&count, host, s.data(), s.space(), sizeof count);
  ++count;
  if (s.storage().how() == ownership::owned && s.storage().use_count() == 1) {
    copy_bytes(r.data_for_writing(), s.space(), &count, host, sizeof count);
    r.written_in_place();
  } else {
    auto fresh = array<std::uint64_t>::allocate(dims{}, s.space());
    copy_bytes(fresh.mutable_data(), s.space(), &count, host, sizeof count);
    r.install(std::move(fresh));
  }
}
}  // namespace detail

/// A stream of random numbers: draws are lazy expressions (see the file comment).
class random_stream {
 private:
  // The draws (defined first: the public members deduce their types from them).
  template <class F, class T, int N>
  auto draw(const dims& shape, T a, T b) {
    static_assert(std::is_floating_point_v<T>, "fusor::random_stream: uniform and normal draw float or double");
    using node = ::fusor::detail::map_t<F, T, type_list<std::int64_t, std::uint64_t, std::uint64_t, T, T>,
                                        iota_node<N>, shared_leaf<state_type>, constant<std::uint64_t>, constant<T>,
                                        constant<T>>;
    return node(iota_node<N>(shape), shared_leaf<state_type>(state_), constant<std::uint64_t>(next_key()),
                constant<T>(a), constant<T>(b));
  }
  template <int N>
  auto bernoulli_draw(double p, const dims& shape) {
    if (!(p >= 0.0 && p <= 1.0))
      throw value_error("fusor::random_stream::bernoulli: p must be in [0, 1], got " + std::to_string(p));
    using node = ::fusor::detail::map_t<fn::bernoulli_at, bool,
                                        type_list<std::int64_t, std::uint64_t, std::uint64_t, double>, iota_node<N>,
                                        shared_leaf<state_type>, constant<std::uint64_t>, constant<double>>;
    return node(iota_node<N>(shape), shared_leaf<state_type>(state_), constant<std::uint64_t>(next_key()),
                constant<double>(p));
  }
  std::uint64_t next_key() noexcept { return detail::draw_key(seed_, draws_++); }

 public:
  using state_type = xt::xtensor<std::uint64_t, 0>;

  /// A stream of seed `seed`, its state (the call counter, 0) in `space`:
  /// the space of the functions that read its draws.
  explicit random_stream(std::uint64_t seed, memory_space space = host)
      : seed_(seed),
        state_(state_type(std::uint64_t{0}),
               shared_options{.name = "random_stream(" + std::to_string(seed) + ")", .space = space}) {
    state_.record()->set_advance(&detail::advance_call_counter);
  }

  std::uint64_t seed() const noexcept { return seed_; }
  /// The call counter: a rank-0 uint64 shared variable, advanced by every
  /// successful call that reads a draw of this stream.
  const shared<state_type>& state() const noexcept { return state_; }

  /// Uniform on [low, high), of dtype T (float or double).
  template <element T = double, std::size_t N>
  [[nodiscard]] auto uniform(const std::size_t (&shape)[N], T low = T(0), T high = T(1)) {
    return draw<fn::uniform_at, T, static_cast<int>(N)>(detail::shape_of_list(shape), low, high);
  }
  template <element T = double>
  [[nodiscard]] auto uniform(const dims& shape, T low = T(0), T high = T(1)) {
    return draw<fn::uniform_at, T, dynamic_rank>(shape, low, high);
  }
  /// Normal of mean `mean` and standard deviation `std`, of dtype T.
  template <element T = double, std::size_t N>
  [[nodiscard]] auto normal(const std::size_t (&shape)[N], T mean = T(0), T std = T(1)) {
    return draw<fn::normal_at, T, static_cast<int>(N)>(detail::shape_of_list(shape), mean, std);
  }
  template <element T = double>
  [[nodiscard]] auto normal(const dims& shape, T mean = T(0), T std = T(1)) {
    return draw<fn::normal_at, T, dynamic_rank>(shape, mean, std);
  }
  /// true with probability p (a dropout mask: `x * cast<float>(rng.bernoulli(0.9, {64, 128}))`).
  template <std::size_t N>
  [[nodiscard]] auto bernoulli(double p, const std::size_t (&shape)[N]) {
    return bernoulli_draw<static_cast<int>(N)>(p, detail::shape_of_list(shape));
  }
  [[nodiscard]] auto bernoulli(double p, const dims& shape) { return bernoulli_draw<dynamic_rank>(p, shape); }

 private:
  std::uint64_t seed_;
  std::uint64_t draws_ = 0;
  shared<state_type> state_;
};

}  // namespace fusor
