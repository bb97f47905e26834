// fusor/core/config.hpp — compile-time configuration shared by every layer.
//
// Portable: compiled by g++ and by nvcc's front end. No xtensor, xsimd or CUDA
// headers may be included from core/.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

// One attribute macro for functions that must run on the host and on a CUDA
// device (Eigen's EIGEN_DEVICE_FUNC, CCCL's _CCCL_HOST_DEVICE). Functors in
// expr/ use it so one definition serves the scalar loop, the xsimd batch loop
// and the CUDA kernel.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define FUSOR_HD __host__ __device__
#else
#define FUSOR_HD
#endif
#define FUSOR_INLINE FUSOR_HD inline

// nvcc compiles a .cu unit twice: a device pass (__CUDA_ARCH__ defined) whose
// front end reads the whole unit, host code included, only to find the device
// code in it, and a host pass that compiles the host code. The device pass
// keeps none of the host code, so what is host code only and names no device
// code (the host loops, the graph builder's per-node-type walks, the emulated
// device's loops) is left out of it where it is instantiated: the device code
// is the same, and the device pass takes up to a quarter less time (docs/gpu.md).
#if defined(__CUDA_ARCH__)
#define FUSOR_DEVICE_PASS 1
#else
#define FUSOR_DEVICE_PASS 0
#endif

// A small step of a per-type walk, compiled into its caller even without
// optimisation: a unit at -Og or -O0 compiles (and names, in its symbol
// table) a function per step and per node type otherwise. FUSOR_FOLDED_LAMBDA
// is the same for a lambda (after its parameter list): the lambda a walk
// expands its operands in, called once, by that walk. Only for a step with
// one caller: a walk over a tree folded into its callers is copied into every
// place its subtree occurs, and a gradient's tree repeats its subtrees (the
// host evaluators' walks folded made a gradient unit's code half as large
// again and its compile nearly twice as long).
#define FUSOR_FOLDED [[gnu::always_inline]] inline
#define FUSOR_FOLDED_LAMBDA __attribute__((always_inline))
// FUSOR_PLUMBING folds a function that only passes a call or a reference on
// (the operand tuple's copies, moves and destruction, a node's accessors, a
// wrapper's members), special members declared `= default` included; nvcc
// takes it in host and device code alike. Unoptimised, g++ compiled each as a
// function per type, a third of a gradient unit's functions: folded, they are
// an instruction or two in their callers, and nothing of the tree below them
// is copied there (each passes the call on to the operands' own functions).
#define FUSOR_PLUMBING __attribute__((always_inline))

// Unroll the next loop by 8 when optimising (a block of batches kept in
// registers, as written out by hand) and leave it a loop when not. g++ and
// clang read `GCC unroll`; nvcc's front end, which also parses host code in
// .cu units, does not know it and warns, so there it is left to the host
// compiler's own choice.
#if defined(__CUDACC__) || defined(__HIPCC__)
#define FUSOR_UNROLL_8
#else
#define FUSOR_UNROLL_8 _Pragma("GCC unroll 8")
#endif

// Functors and reduction rules are called with arithmetic scalars (the scalar
// loops, CUDA kernels) and with SIMD batches (the host's vector loops). nvcc
// compiles device code for every instance of a __host__ __device__ template,
// and a SIMD register type cannot be device code; so each such template is
// declared twice: FUSOR_SCALAR_HD(T) for arithmetic T, host and device, and
// FUSOR_BATCH_HOST(T) for everything else, host only. (A plain enable_if, not
// a constraint: these are instantiated for every node type.)
#define FUSOR_SCALAR_HD(T) template <class T, std::enable_if_t<std::is_arithmetic_v<T>, int> = 0> FUSOR_INLINE
#define FUSOR_BATCH_HOST(T) template <class T, std::enable_if_t<!std::is_arithmetic_v<T>, int> = 0> inline

// std::move and std::forward, written as the casts they are. Each call of the
// std functions is a function instance named by its argument's type (with a
// std::remove_reference<T> beside it), and a debug build's information spells
// each name out in full: for an expression node of a gradient, hundreds of
// kilobytes per name, a sixth of a training unit's `-g` object. An unoptimised
// build also calls each as a function. The casts instantiate nothing. Used for
// values whose type is an expression or holds one; FUSOR_FORWARD(x) is
// std::forward<X>(x) for x declared `X&& x`.
#define FUSOR_MOVE(...) static_cast<std::remove_reference_t<decltype((__VA_ARGS__))>&&>(__VA_ARGS__)
#define FUSOR_FORWARD(x) static_cast<decltype(x)&&>(x)

// fusor's run-time half — the planner, shape inference, the program cache,
// plan printing — is ordinary code, not templates: header-only use compiles it
// (inline) in every unit that builds a function or an eval. Defining
// FUSOR_SEPARATE_COMPILATION in every unit of a program and linking libfusor
// (pkg-config fusor-runtime; meson dependency('fusor-runtime')) compiles it
// once instead. One mode per program: the library is built with the macro,
// and a unit without it would define the same functions inline.
#ifdef FUSOR_SEPARATE_COMPILATION
#define FUSOR_RUNTIME
#else
#define FUSOR_RUNTIME inline
#endif

// Checked builds detect stale borrowed outputs (fusor::stale_borrow_error).
// On by default in debug builds (no NDEBUG); force with -DFUSOR_CHECKED=0/1.
#ifndef FUSOR_CHECKED
#ifdef NDEBUG
#define FUSOR_CHECKED 0
#else
#define FUSOR_CHECKED 1
#endif
#endif

// The largest rank a fusor value may have. Shapes are stored inline (no heap)
// so that steady-state calls allocate nothing; NumPy's own limit is 32, but
// every workload we know of stays far below 8.
#ifndef FUSOR_MAX_RANK
#define FUSOR_MAX_RANK 8
#endif

// Alignment of every buffer fusor allocates on the host: one cache line, which
// is also the widest SIMD register (AVX-512).
#ifndef FUSOR_ALIGNMENT
#define FUSOR_ALIGNMENT 64
#endif

namespace fusor {

/// Signed index type used for strides and offsets everywhere (host and device),
/// so that one lowered kernel type is identical in g++ and nvcc units.
using index_t = std::int64_t;

inline constexpr std::size_t max_rank = FUSOR_MAX_RANK;
inline constexpr std::size_t alignment = FUSOR_ALIGNMENT;

/// Marks a rank only known at run time (xt::xarray).
inline constexpr int dynamic_rank = -1;

}  // namespace fusor
