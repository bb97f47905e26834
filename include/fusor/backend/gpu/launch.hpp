// fusor/backend/gpu/launch.hpp — how a prepared device step reaches a
// kernel: type-erased launchers, found by the evaluator type they were
// compiled for.
//
// A launcher is a host function that enqueues a kernel on a stream. CUDA
// launchers are compiled by nvcc — in a .cu of the program that names its
// expressions with FUSOR_CUDA_INSTANTIATE (fusor/gpu/cuda/instantiate.cuh) — and
// register themselves, keyed by the C++ type they run (typeid names agree
// between nvcc and g++ units: nvcc compiles host code with g++). A g++ unit
// looks them up when its function is built for a device, and a missing one is
// a kernel_not_instantiated_error naming the expression and the macro.
//
// The emulated device needs no registration: every unit compiles the host
// loops below for the evaluators it uses, and the emulation runs those.
// Portable: no CUDA header here.
#pragma once

#include <mutex>
#include <string>
#include <typeinfo>
#include <unordered_map>

#include "fusor/backend/gpu/evaluator.hpp"
#include "fusor/backend/gpu/reduce.hpp"

namespace fusor::gpu {

/// dest[i] = element i of the group, for i in [0, s.n), on `stream` (dest
/// through s.out_strides when the destination is a view).
using group_launcher = void (*)(const void* ev, void* dest, const ew_space* s, void* stream);
/// out[o] = the reduction of output o's elements, for o in [0, s.nout).
/// `partials`: room for s.nout * s.chunks accumulators when s.chunks > 1
/// (each output's elements split between blocks, then merged).
using reduce_launcher = void (*)(const void* ev, void* out, const red_space* s, void* partials, void* stream);

/// Several outputs of one shape in one pass: dests[k][i] = element i of
/// evaluator k, where `evs` is a gpu::tuple of the evaluators.
using multi_launcher = void (*)(const void* evs, void* const* dests, const ew_space* s, void* stream);

/// The keys launchers are registered under.
template <class E, class Ev>
struct group_tag {};
template <class Evs, class... E>
struct multi_tag {};
template <class Op, class R, class Ev>
struct reduce_tag {};

class launcher_registry {
 public:
  using any_launcher = void (*)();

  static launcher_registry& instance() {
    static launcher_registry r;
    return r;
  }
  void add(const char* key, any_launcher fn) {
    std::lock_guard lock(mutex_);
    map_[key] = fn;
  }
  any_launcher find(const char* key) const {
    std::lock_guard lock(mutex_);
    const auto it = map_.find(key);
    return it == map_.end() ? nullptr : it->second;
  }
  std::size_t size() const {
    std::lock_guard lock(mutex_);
    return map_.size();
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_map<std::string, any_launcher> map_;
};

template <class Tag>
const char* launcher_key() noexcept {
  return typeid(Tag).name();
}

template <class Tag, class Fn>
void register_launcher(Fn fn) {
  launcher_registry::instance().add(launcher_key<Tag>(), reinterpret_cast<launcher_registry::any_launcher>(fn));
}

template <class Tag, class Fn>
Fn find_launcher() {
  return reinterpret_cast<Fn>(launcher_registry::instance().find(launcher_key<Tag>()));
}

// ---------------------------------------------------------------- the emulation's launchers

template <class E, class Ev>
void emulated_group(const void* ev, void* dest, const ew_space* sp, void*) {
  const ew_space& s = *sp;
  const Ev& e = *static_cast<const Ev*>(ev);
  E* out = static_cast<E*>(dest);
  for (index_t i = 0; i < s.n; ++i) out[destination_of(s, i)] = static_cast<E>(element_at(e, s, i));
}

template <class Evs, class... E>
void emulated_multi(const void* evs, void* const* dests, const ew_space* sp, void*) {
  const ew_space& s = *sp;
  const Evs& e = *static_cast<const Evs*>(evs);
  [&]<std::size_t... K>(std::index_sequence<K...>) {
    for (index_t i = 0; i < s.n; ++i) ((static_cast<E*>(dests[K])[i] = static_cast<E>(element_at(get<K>(e), s, i))), ...);
  }(std::index_sequence_for<E...>{});
}

template <class Op, class R, class Ev>
void emulated_reduce(const void* ev, void* out, const red_space* sp, void*, void*) {
  const red_space& s = *sp;
  const Ev& e = *static_cast<const Ev*>(ev);
  using Out = decltype(finish(accumulator<Op, R, typename Ev::value_type>::identity(), 0));
  Out* o = static_cast<Out*>(out);
  for (index_t k = 0; k < s.nout; ++k) o[k] = finish(reduce_share<Op, R>(e, s, k, 0, 1), s.nred);
}

}  // namespace fusor::gpu
