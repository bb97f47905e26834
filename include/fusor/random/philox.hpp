// fusor/random/philox.hpp — Philox4x32-10 (Salmon, Moraes, Dror and Shaw,
// "Parallel random numbers: as easy as 1, 2, 3", SC'11), the counter-based
// generator of fusor's random streams, and the elementwise functions that turn
// its output into distributions.
//
// A counter-based generator is a keyed bijection of a 128-bit counter: the
// n-th number of a stream is philox(key, n), computed from n alone. So a
// random leaf is elementwise — element i of a draw is a function of (key,
// call counter, i) — and fuses into the kernel that reads it, and it gives
// the same numbers whatever the loop order, vector width, thread count or
// device: the kernel that computes element i computes the same bits.
//
// Portable (FUSOR_HD): the same code runs in host loops and CUDA kernels.
#pragma once

#include <cmath>
#include <cstdint>

#include "fusor/core/config.hpp"

namespace fusor {

namespace detail {

struct philox_words {
  std::uint32_t w[4];
};

FUSOR_INLINE void philox_mulhilo(std::uint32_t a, std::uint32_t b, std::uint32_t& hi, std::uint32_t& lo) {
  const std::uint64_t p = static_cast<std::uint64_t>(a) * static_cast<std::uint64_t>(b);
  hi = static_cast<std::uint32_t>(p >> 32);
  lo = static_cast<std::uint32_t>(p);
}

/// Philox4x32 with 10 rounds: the counter c[0..3] under the key k[0..1].
FUSOR_INLINE philox_words philox4x32_10(std::uint32_t c0, std::uint32_t c1, std::uint32_t c2, std::uint32_t c3,
                                        std::uint32_t k0, std::uint32_t k1) {
  for (int round = 0; round < 10; ++round) {
    if (round > 0) {
      k0 += 0x9E3779B9u;
      k1 += 0xBB67AE85u;
    }
    std::uint32_t hi0, lo0, hi1, lo1;
    philox_mulhilo(0xD2511F53u, c0, hi0, lo0);
    philox_mulhilo(0xCD9E8D57u, c2, hi1, lo1);
    const std::uint32_t n0 = hi1 ^ c1 ^ k0, n2 = hi0 ^ c3 ^ k1;
    c0 = n0;
    c1 = lo1;
    c2 = n2;
    c3 = lo0;
  }
  return {{c0, c1, c2, c3}};
}

/// The four words of element `index` of draw `key` in call `call`: the
/// counter is (index, call), 64 bits each.
FUSOR_INLINE philox_words random_words(std::uint64_t key, std::uint64_t call, std::int64_t index) {
  const auto i = static_cast<std::uint64_t>(index);
  return philox4x32_10(static_cast<std::uint32_t>(i), static_cast<std::uint32_t>(i >> 32),
                       static_cast<std::uint32_t>(call), static_cast<std::uint32_t>(call >> 32),
                       static_cast<std::uint32_t>(key), static_cast<std::uint32_t>(key >> 32));
}

/// A double in [0, 1) from 53 bits of two words.
FUSOR_INLINE double unit_double(std::uint32_t hi, std::uint32_t lo) {
  const std::uint64_t bits = ((static_cast<std::uint64_t>(hi) << 32) | lo) >> 11;
  return static_cast<double>(bits) * (1.0 / 9007199254740992.0);
}
/// A float in [0, 1) from 24 bits of a word.
FUSOR_INLINE float unit_float(std::uint32_t w) { return static_cast<float>(w >> 8) * (1.0f / 16777216.0f); }

/// The key of draw `draw` of a stream of seed `seed` (SplitMix64's finaliser
/// of both: independent keys for the draws of one stream and for streams).
FUSOR_INLINE std::uint64_t draw_key(std::uint64_t seed, std::uint64_t draw) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ull * (draw + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace detail

namespace fn {
/// uniform(index, call, key, low, high): low + (high - low) * u, u in [0, 1).
struct uniform_at {
  static constexpr const char* symbol = "uniform";
  template <class A>
  FUSOR_INLINE A operator()(std::int64_t i, std::uint64_t call, std::uint64_t key, A low, A high) const {
    const auto r = detail::random_words(key, call, i);
    if constexpr (sizeof(A) <= 4) return static_cast<A>(low + (high - low) * detail::unit_float(r.w[0]));
    else return static_cast<A>(low + (high - low) * detail::unit_double(r.w[0], r.w[1]));
  }
};
/// normal(index, call, key, mean, std): Box–Muller on two 53-bit uniforms.
struct normal_at {
  static constexpr const char* symbol = "normal";
  template <class A>
  FUSOR_INLINE A operator()(std::int64_t i, std::uint64_t call, std::uint64_t key, A mean, A std) const {
    const auto r = detail::random_words(key, call, i);
    const double u1 = 1.0 - detail::unit_double(r.w[0], r.w[1]);  // (0, 1]: log is finite
    const double u2 = detail::unit_double(r.w[2], r.w[3]);
    const double z = std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    return static_cast<A>(static_cast<double>(mean) + static_cast<double>(std) * z);
  }
};
/// bernoulli(index, call, key, p): true with probability p.
struct bernoulli_at {
  static constexpr const char* symbol = "bernoulli";
  FUSOR_INLINE bool operator()(std::int64_t i, std::uint64_t call, std::uint64_t key, double p) const {
    const auto r = detail::random_words(key, call, i);
    return detail::unit_double(r.w[0], r.w[1]) < p;
  }
};
}  // namespace fn

}  // namespace fusor
