// fusor/compile/graph.hpp — an expression as data: the planner's input.
//
// Expressions are C++ types; the planner works on run-time data. When a
// function (or an eval / assign) is built, its expressions are walked once and
// flattened into a graph: one node per distinct sub-expression, children by
// index. Identical sub-trees over the same leaves (same node types, same
// inputs and shared variables, same constants bit for bit, same axes) become
// one node, so a sub-expression used twice — `dot(x, w)` in a cost and in its
// gradient — is planned, and computed, once.
//
// The graph is backend-neutral. A backend contributes one thing per node: the
// kernels compiled for the node's C++ type (`graph_node::kernels`), which only
// the backend itself interprets. Everything else — shapes, fusion groups,
// slots, liveness, in-place decisions — is decided on this data by code that
// is compiled once, not once per node type.
#pragma once

#include <array>
#include <cstdint>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include "fusor/core/operand_tuple.hpp"
#include "fusor/core/config.hpp"
#include "fusor/core/dims.hpp"
#include "fusor/core/dtype.hpp"
#include "fusor/expr/collective.hpp"
#include "fusor/expr/dot.hpp"
#include "fusor/expr/elementwise.hpp"
#include "fusor/expr/generate.hpp"
#include "fusor/expr/join.hpp"
#include "fusor/expr/take.hpp"
#include "fusor/expr/leaves.hpp"
#include "fusor/expr/place.hpp"
#include "fusor/expr/reduction.hpp"
#include "fusor/expr/ref.hpp"
#include "fusor/expr/shape_like.hpp"
#include "fusor/expr/shape_ops.hpp"
#include "fusor/expr/fusion.hpp"
#include "fusor/expr/text.hpp"
#include "fusor/expr/view.hpp"
#include "fusor/shared/variable.hpp"

namespace fusor {

/// `given`: a read of a replaced input or shared variable (a function's
/// givens); its one child is the replacement, read from memory.
/// `iota`: the flat index of every element of a shape (the lazy
/// constructors' leaf; it reads no memory).
/// `size_ratio`: a rank-0 number from two nodes' shapes (`shape_of`).
/// `gate`: its one child, or (no child) a rank-0 zero.
/// `zeros_of`: zeros of another node's shape (`shape_of`); it reads nothing.
/// `place`: a gradient's adjoint put back where a selection took it from
/// (expr/place.hpp): of `shape_of[0]`'s shape, built in a temporary.
/// `collective`: its child's value combined over processes (expr/collective.hpp);
/// `leaf` indexes the graph's collective table.
enum class node_kind : std::uint8_t {
  input, shared, constant, map, cast, reduce, dot, transpose, reshape, given, view, iota, diagonal, join, take,
  specify, size_ratio, gate, zeros_of, place, collective
};

/// The arithmetic of a map node the planner looks for (an update
/// `v - c * dot(a, b)` becomes one BLAS call that accumulates into v).
enum class arith : std::uint8_t { other, plus, minus, multiplies };

/// Which selection a `place` node reverses.
enum class place_kind : std::uint8_t {
  view,      ///< `slices`: the view's items
  diagonal,  ///< `params`: offset, axis1, axis2
  join_part, ///< `shape_of[1]`: the join; `params[0]`: the part
  take,      ///< child 1: the indices; `params[0]`: the axis (the adjoint is added: indices may repeat)
};

/// What a reduction computes (the run-time name of red::*).
enum class reduce_kind : std::uint8_t { sum, mean, prod, max, min, argmax, argmin, nansum, nanmean, nanmax, nanmin };

namespace detail {
template <class Op>
constexpr reduce_kind reduce_kind_of() {
  if constexpr (std::is_same_v<Op, red::sum>) return reduce_kind::sum;
  else if constexpr (std::is_same_v<Op, red::mean>) return reduce_kind::mean;
  else if constexpr (std::is_same_v<Op, red::prod>) return reduce_kind::prod;
  else if constexpr (std::is_same_v<Op, red::max>) return reduce_kind::max;
  else if constexpr (std::is_same_v<Op, red::min>) return reduce_kind::min;
  else if constexpr (std::is_same_v<Op, red::argmax>) return reduce_kind::argmax;
  else if constexpr (std::is_same_v<Op, red::argmin>) return reduce_kind::argmin;
  else if constexpr (std::is_same_v<Op, red::nansum>) return reduce_kind::nansum;
  else if constexpr (std::is_same_v<Op, red::nanmean>) return reduce_kind::nanmean;
  else if constexpr (std::is_same_v<Op, red::nanmax>) return reduce_kind::nanmax;
  else return reduce_kind::nanmin;
}
}  // namespace detail

/// The backends a graph carries kernels for: every graph is built for both, and
/// a program runs it on the one its memory space needs (host for the host, the
/// device backend for a CUDA space, real or emulated).
enum class backend_id : std::uint8_t { host = 0, device = 1 };
inline constexpr std::size_t backend_count = 2;

/// Why a node needs a kernel of its own (a backend compiles one per role).
enum class kernel_role : std::uint8_t {
  group,   ///< evaluate the node's fused sub-tree into a destination
  reduce,  ///< a reduction fused with its operand
  reduce_read,  ///< the same reduction (a float sum or mean) of its operand's value in a temporary: one kernel per op and dtype
  dot,     ///< a dot product of two operands in memory
  check,   ///< an integer pow: refuse a negative exponent before any write
  count
};

/// One node of the graph.
/// The most operands a node has (a random draw has five: the index, the
/// stream's counter, its key and two parameters).
inline constexpr std::size_t max_arity = 8;
constexpr std::array<int, max_arity> no_children() {
  std::array<int, max_arity> c{};
  for (auto& x : c) x = -1;
  return c;
}

struct graph_node {
  node_kind kind{};
  dtype type{};                        ///< the node's element type
  int static_rank = dynamic_rank;
  int arity = 0;
  std::array<int, max_arity> child = no_children();
  int leaf = -1;                       ///< input / shared / constant: index in the graph's tables
  /// Reads its operands only at the index it computes (no reduction, dot,
  /// permutation or reshape below it): the static half of an in-place write.
  bool elementwise = false;
  /// An elementwise node computed into memory all the same, for its readers
  /// to read from there: the target of a reference that fused would make
  /// their kernels too large (expr/fusion.hpp).
  bool kept = false;
  /// Bit k: operand k is such a reference, which this node's kernels read
  /// from memory (a node's kernels are those of its first type, whose
  /// operand types set these bits; the planner reads them).
  unsigned kept_operands = 0;
  arith arithmetic = arith::other;  ///< map: +, -, * (else other)
  // reduce: the operation, its axes (empty: all), keepdims
  reduce_kind op{};
  std::array<int, max_rank> axes{};
  int naxes = 0;
  bool keepdims = false;
  // transpose: the permutation (count 0: reverse all); reshape: the extents
  std::array<index_t, max_rank> params{};
  int nparams = 0;
  // view: its index items
  view_spec slices{};
  // join: what it assembles (concatenate, roll, pad)
  join_params join{};
  // place: the selection it reverses
  place_kind placed{};
  /// Nodes whose shapes (not values) this node reads: a sum_to reduction's
  /// and a reshape_like's target shape; a size_ratio's two operands.
  std::array<int, 2> shape_of{-1, -1};
  /// The node as fusor prints it ("exp(W) + x"): plans and messages.
  std::string text;
  /// A closed gate, or a sum of them: a zero that reads nothing, which a sum
  /// leaves out of its text (expr/text.hpp, map_text).
  bool zero = false;
  /// Each backend's kernels for this node's C++ type, by role (null: none).
  std::array<std::array<const void*, static_cast<std::size_t>(kernel_role::count)>, backend_count> kernels{};
  const void* kernel(backend_id b, kernel_role r) const noexcept {
    return kernels[static_cast<std::size_t>(b)][static_cast<std::size_t>(r)];
  }
  /// Whether the node needs a kernel for role r (every backend compiles the same roles).
  bool has_kernel(kernel_role r) const noexcept { return kernel(backend_id::host, r) != nullptr; }
};

/// A symbolic input of the graph (a function's explicit input, or a value
/// bound in eval): identity, name, declared rank, dtype and pattern.
struct graph_input {
  std::uint64_t id = 0;
  std::string name;
  int rank = 0;
  dtype type{};
  std::uint32_t broadcastable = 0;  ///< bit d: axis d must have length 1
  /// Each backend's kernel converting an argument of another dtype.
  std::array<const void*, backend_count> convert{};
};

/// What the planner reads of a shared variable at each call.
struct shared_facts {
  const std::byte* data = nullptr;
  std::size_t bytes = 0;
  const dims* shape = nullptr;  ///< the storage's own shape (null without a value): not copied per call
  bool has_value = false;
  /// Someone besides the variable holds its buffer (a view from
  /// get_value(borrow), an earlier borrowed output): never written in place.
  bool viewed = false;
  bool borrowed_storage = false;
};

/// A shared variable read or updated by the graph: a type-erased handle on
/// its record (kept alive by the expressions that hold the variable).
struct graph_shared {
  const variable_base* record = nullptr;
  std::uint64_t id = 0;
  dtype type{};
  int rank = 0;
  memory_space space = host;
  shared_facts (*facts)(const variable_base*) = nullptr;
  /// Whether a view the caller holds shares the storage (the cheap half of facts()).
  bool (*viewed)(const variable_base*) = nullptr;
  /// A counter advanced after every successful call (a random stream's
  /// state), or null.
  variable_base* counter = nullptr;
  std::string describe() const { return record->describe(); }
};

/// A C++ constant of the graph, bit for bit.
struct graph_constant {
  dtype type{};
  std::uint64_t bits = 0;
};

/// A replacement (a function's given): reads of the input or shared variable
/// `id` read node `node` instead.
struct graph_given {
  std::uint64_t id = 0;
  /// Whether the target is a symbolic input (else a shared variable): the
  /// two number their identities apart, so an id alone names neither.
  bool input = false;
  std::string name;  ///< the target, as fusor prints it
  int rank = 0;
  std::uint32_t broadcastable = 0;  ///< an input target's pattern: the replacement must match it
  int node = -1;                    ///< the replacement's root
};

/// An output of the graph (a function's Out, or eval's result).
struct graph_output {
  int node = -1;
  bool borrow = false;
  bool internal = false;
  /// A borrowed elementwise output of some input's dtype: it may be written
  /// into a buffer lent with In(x, borrow) that it reads (R47).
  bool candidate = false;
};

/// An update of the graph (a function's update, or assign's destination).
struct graph_update {
  int node = -1;
  int variable = -1;  ///< index in graph::shared
  std::uint32_t broadcastable = 0;
  /// An update of a view of the variable: only `region` of it is written.
  bool partial = false;
  view_spec region{};
};

class graph {
 public:
  std::vector<graph_node> nodes;
  std::vector<graph_input> inputs;
  std::vector<graph_shared> shared;
  std::vector<graph_constant> constants;
  std::vector<graph_given> givens;
  std::vector<graph_output> outputs;
  std::vector<graph_update> updates;
  /// Per backend, a kernel computing several outputs of one shape in one pass
  /// (W6), for the outputs that are not in-place candidates; null when the
  /// backend has none.
  std::array<const void*, backend_count> multi_output_kernel{};
  /// The operations of its collective nodes (graph_node::leaf), and the
  /// current call's agreement.
  collective_table collectives;

  // Destroyed out of line (compile/impl/graph.ipp): its tables' destructors
  // are compiled once, not in every unit that builds a graph.
  graph() = default;
  graph(const graph&) = default;
  graph(graph&&) noexcept = default;
  graph& operator=(const graph&) = default;
  graph& operator=(graph&&) noexcept = default;
  FUSOR_RUNTIME ~graph();

  const graph_node& operator[](int i) const noexcept { return nodes[static_cast<std::size_t>(i)]; }
  int size() const noexcept { return static_cast<int>(nodes.size()); }

  /// The shared-table index of a variable, or -1.
  int shared_index(std::uint64_t id) const noexcept {
    for (std::size_t i = 0; i < shared.size(); ++i)
      if (shared[i].id == id) return static_cast<int>(i);
    return -1;
  }
};

/// After a call of `g` succeeded: advances the counters it reads (random
/// streams' states), unless the graph updates one itself. A failed call does
/// not get here: it draws no numbers.
FUSOR_RUNTIME void advance_counters(const graph& g);

/// An integer pow with a signed integer exponent: NumPy refuses negative
/// exponents, so the exponent is checked before any kernel writes. (The
/// conversion to the power's dtype keeps the sign: promotion never narrows.)
template <class X>
inline constexpr bool is_checked_pow_v = false;
template <class S, class Base, class Exponent>
inline constexpr bool is_checked_pow_v<map_node<fn::power, S, Base, Exponent>> =
    std::is_integral_v<value_type_t<map_node<fn::power, S, Base, Exponent>>> &&
    std::is_integral_v<value_type_t<Exponent>> && std::is_signed_v<value_type_t<Exponent>> &&
    !std::is_same_v<value_type_t<Exponent>, bool>;

/// What a reduction node computes, for the backends' kernels (keyed by this,
/// not by the node type): its operation, result type and operand type. A
/// gradient's sum_to is a sum over the axes the plan's shapes name
/// (compile/shapes.hpp, reduction_of).
template <class X>
struct reduction_parts;
template <class Op, class A, int Rank>
struct reduction_parts<reduce_node<Op, A, Rank>> {
  using op = Op;
  using value_type = typename reduce_node<Op, A, Rank>::value_type;
  using operand = A;
};
template <class G, class L>
struct reduction_parts<sum_to_node<G, L>> : reduction_parts<reduce_node<red::sum, G, L::rank>> {};

/// Whether a reduction may read its operand's value from a temporary another
/// step wrote (the planner's materialised_twin): a sum or mean in a float type
/// of an operand of that type.
template <class X, class P = reduction_parts<X>>
inline constexpr bool reads_materialised_v =
    (std::is_same_v<typename P::op, red::sum> || std::is_same_v<typename P::op, red::mean>) &&
    (std::is_same_v<typename P::value_type, float> || std::is_same_v<typename P::value_type, double>) &&
    std::is_same_v<typename P::value_type, value_type_t<typename P::operand>>;

/// Whether the host sums reduction X from its operand's value in memory, with
/// the one reduce_read kernel of its dtype, instead of fused with it: a
/// gradient's sum_to. Its shapes are known only when the plan is built, and
/// most often it sums nothing (the adjoint of an elementwise operand that was
/// not broadcast): the planner then makes its value the operand's own,
/// computed by the operand's group kernel, and no step sums anything. A fused
/// sum_to kernel was a whole reduction loop over the operand's tree, compiled
/// in every unit for a step that at run time only copies. Where it does sum
/// (a bias's gradient), its operand is most often in memory already (the
/// adjoint a dot reads). A device plan reduces the fused operand (its
/// backends compile no reduce_read).
template <class X>
inline constexpr bool host_sums_from_memory_v = false;
template <class G, class L>
inline constexpr bool host_sums_from_memory_v<sum_to_node<G, L>> = reads_materialised_v<sum_to_node<G, L>>;

/// The exponent of an integer pow node (its second operand): what its check reduces.
template <class X>
struct pow_exponent;
template <class F, class S, class Base, class Exponent>
struct pow_exponent<map_node<F, S, Base, Exponent>> {
  using type = Exponent;
};
template <class X>
using pow_exponent_t = typename pow_exponent<X>::type;

template <class X>
inline constexpr bool is_dot_v = false;
template <class A, class B>
inline constexpr bool is_dot_v<dot_node<A, B>> = true;

namespace detail {
template <element E>
shared_facts tensor_facts(const variable_base* v) {
  const auto& record = *static_cast<const tensor_variable<E>*>(v);
  shared_facts f;
  f.has_value = record.has_value();
  if (!f.has_value) return f;
  const auto& a = record.storage();
  f.data = reinterpret_cast<const std::byte*>(a.data());
  f.bytes = a.bytes();
  f.shape = &a.shape();
  f.borrowed_storage = a.storage().how() == ownership::borrowed;
  f.viewed = !f.borrowed_storage && a.storage().use_count() > 1;
  return f;
}

template <element E>
bool tensor_viewed(const variable_base* v) {
  const auto& record = *static_cast<const tensor_variable<E>*>(v);
  if (!record.has_value()) return false;
  const auto& b = record.storage().storage();
  return b.how() != ownership::borrowed && b.use_count() > 1;
}

/// What a node computes besides its operands (which the key lists by node)
/// and its run-time parameters (which describe() appends): its kind, its
/// element type and rank, and its operation — not its operands' C++ types,
/// so that equal sub-expressions reached through different wrappers (a
/// reference, expr/ref.hpp) are one node.
template <class... T>
struct head_tag {};
template <class X>
struct node_head {
  using type = head_tag<X>;  // leaves, and the nodes below, whose operands do not enter
};
template <class F, class S, class... A>
struct node_head<map_node<F, S, A...>> {
  using type = head_tag<struct map_head, F, value_type_t<map_node<F, S, A...>>, typename map_node<F, S, A...>::casts>;
};
template <element T, class A>
struct node_head<cast_node<T, A>> {
  using type = head_tag<struct cast_head, T, value_type_t<A>>;
};
template <class Op, class A, int R>
struct node_head<reduce_node<Op, A, R>> {
  using type = head_tag<struct reduce_head, Op, value_type_t<A>>;
};
template <class A, class B>
struct node_head<dot_node<A, B>> {
  using type = head_tag<struct dot_head, value_type_t<A>, value_type_t<B>>;
};
template <class A>
struct node_head<transpose_node<A>> {
  using type = head_tag<struct transpose_head>;
};
template <class A, int N>
struct node_head<reshape_node<A, N>> {
  using type = head_tag<struct reshape_head>;
};
template <class A, int N>
struct node_head<view_node<A, N>> {
  using type = head_tag<struct view_head>;
};
template <class A>
struct node_head<diagonal_node<A>> {
  using type = head_tag<struct diagonal_head>;
};
template <class A>
struct node_head<specify_node<A>> {
  using type = head_tag<struct specify_head>;
};
template <class A>
struct node_head<collective_node<A>> {
  using type = head_tag<struct collective_head>;
};
template <class A, class I, int N>
struct node_head<take_node<A, I, N>> {
  using type = head_tag<struct take_head>;
};
template <int N, class... A>
struct node_head<join_node<N, A...>> {
  using type = head_tag<struct join_head>;
};
template <class G, class L>
struct node_head<sum_to_node<G, L>> {
  using type = head_tag<struct sum_to_head>;
};
template <class G, class L>
struct node_head<reshape_like_node<G, L>> {
  using type = head_tag<struct reshape_like_head>;
};
template <element T, class N, class D>
struct node_head<size_ratio_node<T, N, D>> {
  using type = head_tag<struct size_ratio_head>;
};
template <class G, class F, std::size_t K>
struct node_head<place_node<G, F, K>> {
  using type = head_tag<struct place_head>;
};
template <element T, class L>
struct node_head<zeros_of_node<T, L>> {
  using type = head_tag<struct zeros_of_head>;
};
template <class C>
struct node_head<gate_node<C>> {
  using type = head_tag<struct gate_head>;
};
}  // namespace detail

namespace detail {
/// What building a graph does whatever the node types are: the key's lookup
/// and the node's insertion, a replaced leaf's node, the tables' appends.
/// Compiled once (compile/impl/graph.ipp), not in every node type's add().
class graph_builder_base {
 protected:
  explicit graph_builder_base(graph& g) : g_(g) {}
  FUSOR_RUNTIME ~graph_builder_base();

  /// A node being added: its description and its key, begun with the node's
  /// head (its kind and parameters' types: a tag's address), dtype and rank.
  struct pending {
    graph_node node;
    std::vector<std::uint64_t> key;
  };

  /// Begins a node: the nodes being added (each below its parent, while its
  /// operands are added) are the builder's, kept for reuse, not each node
  /// type's add()'s: a graph_node is large, and a local one would give every
  /// add() its construction, its destruction and a cleanup for when
  /// something throws (what an unoptimised build compiles per node type).
  /// A node abandoned by an exception stays on the stack unfinished; the
  /// builder is not used after one.
  FUSOR_RUNTIME pending& begin(const void* head, dtype type, int rank);
  /// Completes the key of the node begun last with its children and adds
  /// the node under it; returns the new node, or ~node of the identical one
  /// already there.
  FUSOR_RUNTIME int finish();
  /// A read of a replaced leaf becomes a `given` node over the replacement
  /// (outside replacements only); its key differs from the plain leaf's.
  FUSOR_RUNTIME bool describe_given(std::uint64_t id, bool input, graph_node& n, std::vector<std::uint64_t>& key);
  /// The rest of an elementwise operation's node once its operands are added:
  /// whether it is elementwise, its arithmetic, whether it is a sum of known
  /// zeros (a gradient's closed gates), its text.
  FUSOR_RUNTIME void describe_map(graph_node& n, const char* symbol, bool infix, unsigned parenthesized,
                                  arith arithmetic);
  /// Stores a node's sub-expressions' nodes: the first `operands` of `ids`
  /// as its children, the rest (up to `count`) as the nodes whose shapes it
  /// reads; `kept` marks the operands whose targets are kept in memory
  /// (its bits below `operands` only).
  FUSOR_RUNTIME void set_held(graph_node& n, const int* ids, std::size_t operands, std::size_t count, unsigned kept);
  /// Gives node `node` backend b's kernel for role r, unless it has one.
  FUSOR_RUNTIME void set_kernel(int node, backend_id b, kernel_role r, const void* kernel);
  /// Appends to the graph's tables; each returns the new entry's index.
  FUSOR_RUNTIME int push_input(graph_input&& gi);
  FUSOR_RUNTIME int push_shared(const graph_shared& gs);
  FUSOR_RUNTIME int push_constant(const graph_constant& c);

  graph& g_;
  std::map<std::vector<std::uint64_t>, int> index_;
  std::vector<std::unique_ptr<pending>> begun_;  ///< begin()'s nodes, reused
  std::size_t depth_ = 0;                         ///< how many of them are being added
  bool replacing_ = false;  ///< adding a given's replacement: givens do not apply
};
}  // namespace detail

/// Flattens expressions into a graph. Each of `Backends` provides its
/// `static constexpr backend_id id`, and, for a role R and a node type X,
/// `template <kernel_role R, class X> static const void* kernel()`: the
/// compiled kernel the backend will prepare steps from; and
/// `template <class T> static const void* convert_kernel()` for inputs of T.
template <class... Backends>
class graph_builder : detail::graph_builder_base {
 public:
  explicit graph_builder(graph& g) : graph_builder_base(g) {}

  /// Declares an explicit input (in call order); returns its index.
  template <class T, int N>
  int declare_input(const input<T, N>& in) {
    graph_input gi;
    gi.id = in.id();
    gi.name = in.str();
    gi.rank = N;
    gi.type = dtype_of<T>;
    for (int d = 0; d < N; ++d)
      if (in.broadcastable(static_cast<std::size_t>(d))) gi.broadcastable |= 1u << d;
    ((gi.convert[static_cast<std::size_t>(Backends::id)] = Backends::template convert_kernel<T>()), ...);
    return push_input(FUSOR_MOVE(gi));
  }

  /// Adds an expression whose value is needed in memory (an output, an
  /// update, a materialised operand); returns its node.
  template <class X>
  int add_root(const X& e) {
    if constexpr (is_ref_v<X>) {
      return add_root(e.target());
    } else {
      const int n = add(e);
      mark<kernel_role::group, X>(n);
      return n;
    }
  }

  /// Registers the replacement of an input or shared variable (a given):
  /// reads of the target added after this read `replacement`. The
  /// replacement itself is added as written — givens do not apply inside it.
  template <class Target, class X>
  void add_given(const Target& target, const X& replacement) {
    graph_given gg;
    gg.id = target.id();
    gg.input = !requires { target.record(); };
    if constexpr (requires { target.record(); }) {
      gg.name = target.record()->describe();
      gg.rank = static_cast<int>(target.rank());
    } else {
      gg.name = "input '" + target.str() + "'";
      gg.rank = Target::rank;
      for (int d = 0; d < Target::rank; ++d)
        if (target.broadcastable(static_cast<std::size_t>(d))) gg.broadcastable |= 1u << d;
    }
    for (const auto& other : g_.givens)
      if (other.id == gg.id && other.input == gg.input)
        throw value_error("fusor::function: " + gg.name + " is replaced twice in givens(...)");
    replacing_ = true;
    try {
      gg.node = add_root(replacement);
    } catch (...) {
      replacing_ = false;
      throw;
    }
    replacing_ = false;
    g_.givens.push_back(FUSOR_MOVE(gg));
  }

  /// Adds a shared variable the graph reads or updates; returns its index.
  template <class T>
  int add_shared(const shared<T>& s) {
    const int existing = g_.shared_index(s.id());
    if (existing >= 0) return existing;
    graph_shared gs;
    gs.record = s.record().get();
    gs.id = s.id();
    gs.type = dtype_of<element_type_of<T>>;
    gs.rank = static_cast<int>(s.rank());
    gs.space = s.space();
    gs.facts = &detail::tensor_facts<element_type_of<T>>;
    gs.viewed = &detail::tensor_viewed<element_type_of<T>>;
    if (s.record()->advance()) gs.counter = s.record().get();
    return push_shared(gs);
  }

  /// Adds a node (or finds the identical one already there). What depends on
  /// the node's type (its description, its text, its kernels) is here; what
  /// does not (making the node and its key, the key's lookup, the node's
  /// insertion) is in graph_builder_base, compiled once instead of once per
  /// node type. One function per node type, as few as can be: each is named
  /// by the node's whole type, in the symbol table and the debug information.
  /// (Nothing in nvcc's device pass, core/config.hpp: the per-node-type walks
  /// are not instantiated there; the device kernels are, by their own walk
  /// over the types, backend/gpu/instantiate.hpp.)
  template <class X>
  int add(const X& e) {
#if FUSOR_DEVICE_PASS
    (void)e;
    return 0;
#else
    if constexpr (detail::reads_kept_v<X>) {
      // A reference whose target, fused, would be large: the target is
      // computed into memory by a kernel of its own (expr/fusion.hpp).
      const int id = add(e.target());
      g_.nodes[static_cast<std::size_t>(id)].kept = true;
      mark<kernel_role::group, typename X::target_type>(id);
      return id;
    } else if constexpr (is_ref_v<X>) {
      return add(e.target());  // a reference is its target's node
    } else {
      // The head is the node's kind and parameters' types without its
      // operands' (node_head): a tag's address, no function per node type.
      pending& p = begin(&detail::type_tag<typename detail::node_head<X>::type>, dtype_of<value_type_t<X>>, X::rank);
      describe(e, p.node, p.key);  // adds the operands, then writes the node's text from theirs (expr/text.hpp)
      const int id = finish();
      if (id < 0) return ~id;
      if constexpr (detail::has<detail::member::operation, X>) {
        mark<kernel_role::reduce, X>(id);
        if constexpr (reads_materialised_v<X>) mark<kernel_role::reduce_read, X>(id);
        // The host materialises the operand of what it sums from memory.
        if constexpr (host_sums_from_memory_v<X>)
          mark<kernel_role::group, typename reduction_parts<X>::operand, backend_id::host>(g_[id].child[0]);
      }
      if constexpr (is_dot_v<X>) mark<kernel_role::dot, X>(id);
      if constexpr (is_checked_pow_v<X>) mark<kernel_role::check, X>(id);
      return id;
    }
#endif
  }


 private:
  /// Whether backend b is one of `Only`, or `Only` names none.
  template <backend_id... Only>
  static constexpr bool named_in(backend_id b) {
    return sizeof...(Only) == 0 || ((b == Only) || ...);
  }
  /// Gives `node` each backend's kernel of node type X for role Role (only
  /// the backends named in `Only`, when some are: the others need none).
  /// The slots are filled by set_kernel, compiled once: here only the
  /// kernels' addresses are per node type.
  template <kernel_role Role, class X, backend_id... Only>
  FUSOR_FOLDED void mark(int node) {
    (mark_for<Role, X, Backends, Only...>(node), ...);
  }
  template <kernel_role Role, class X, class B, backend_id... Only>
  FUSOR_FOLDED void mark_for(int node) {
    if constexpr (named_in<Only...>(B::id)) set_kernel(node, B::id, Role, B::template kernel<Role, X>());
  }

  /// The text of operand c of node n (already in the graph).
  const std::string& text(const graph_node& n, int c) const { return g_[n.child[static_cast<std::size_t>(c)]].text; }

  /// Adds what node X holds (expr/node.hpp): its value operands as its
  /// children, each read from memory (materialised when compound) or fused
  /// into X's loop as X's from_memory says (the device units' kernel walk reads
  /// the same, backend/gpu/instantiate.hpp); the rest as the nodes whose
  /// shapes it reads (shape_of).
  template <class X>
  FUSOR_FOLDED void add_held(const X& e, graph_node& n) {
    static_assert(X::operand_types::size <= max_arity, "fusor: a node has more operands than max_arity");
    add_parts<X::from_memory>(e.held(), n, X::operand_types::size, detail::indices_of<decltype(e.held())>);
  }
  /// The sub-expressions' nodes are gathered into one array and stored by
  /// set_held, compiled once: a brace list is evaluated in order, as the
  /// sub-expressions must be added, and it needs no closure per
  /// sub-expression (what an unoptimised build would otherwise copy around
  /// in every node type's add()).
  template <unsigned FromMemory, class Held, std::size_t... K>
  FUSOR_FOLDED void add_parts(const Held& held, graph_node& n, std::size_t operands, std::index_sequence<K...>) {
    const int ids[] = {add_operand<((FromMemory >> K) & 1u) != 0>(detail::get<K>(held))..., 0};
    constexpr unsigned kept = ((detail::reads_kept_v<std::remove_cvref_t<decltype(detail::get<K>(held))>>
                                    ? 1u << K
                                    : 0u) |
                               ... | 0u);
    set_held(n, ids, operands, sizeof...(K), kept);
  }
  /// A sub-expression: read from memory (materialised when compound) or
  /// fused into its node's loop, as the node's from_memory says.
  template <bool InMemory, class C>
  FUSOR_FOLDED int add_operand(const C& c) {
    if constexpr (InMemory) return operand_in_memory(c);
    else return add(c);
  }

  template <class T, int N>
  FUSOR_FOLDED void describe(const input<T, N>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.text = e.str();
    if (describe_given(e.id(), true, n, key)) return;
    n.kind = node_kind::input;
    n.elementwise = true;
    n.leaf = -1;
    for (std::size_t i = 0; i < g_.inputs.size(); ++i)
      if (g_.inputs[i].id == e.id()) n.leaf = static_cast<int>(i);
    if (n.leaf < 0) n.leaf = declare_input(e);
    key.push_back(e.id());
  }
  template <class L>
    requires is_basic_shared_leaf_v<L>
  FUSOR_FOLDED void describe(const L& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.text = e.str();
    if (describe_given(e.variable().id(), false, n, key)) return;
    n.kind = node_kind::shared;
    n.elementwise = true;
    n.leaf = add_shared(e.variable());
    key.push_back(e.variable().id());
  }
  template <element E>
  FUSOR_FOLDED void describe(const constant<E>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::constant;
    n.text = e.str();
    n.elementwise = true;
    graph_constant c;
    c.type = dtype_of<E>;
    const E v = e.value();
    std::memcpy(&c.bits, &v, sizeof(E));
    n.leaf = push_constant(c);
    key.push_back(c.bits);
  }
  template <int N>
  FUSOR_FOLDED void describe(const iota_node<N>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::iota;
    n.text = e.str();
    n.elementwise = true;
    n.nparams = static_cast<int>(e.shape().rank());
    for (int d = 0; d < n.nparams; ++d)
      n.params[static_cast<std::size_t>(d)] = static_cast<index_t>(e.shape()[static_cast<std::size_t>(d)]);
    e.append_params(key);
  }
  template <class F, class S, class... A>
  FUSOR_FOLDED void describe(const map_node<F, S, A...>& e, graph_node& n, std::vector<std::uint64_t>&) {
    n.kind = node_kind::map;
    add_held(e, n);
    using X = map_node<F, S, A...>;
    constexpr arith a = std::is_same_v<F, fn::plus>          ? arith::plus
                        : std::is_same_v<F, fn::minus>       ? arith::minus
                        : std::is_same_v<F, fn::multiplies> ? arith::multiplies
                                                             : arith::other;
    describe_map(n, F::symbol, X::infix, X::parenthesized, a);
  }
  template <element T, class A>
  FUSOR_FOLDED void describe(const cast_node<T, A>& e, graph_node& n, std::vector<std::uint64_t>&) {
    n.kind = node_kind::cast;
    add_held(e, n);
    n.elementwise = g_[n.child[0]].elementwise;
    n.text = detail::cast_text(name(dtype_of<T>), text(n, 0));
  }
  template <class Op, class A, int R>
  FUSOR_FOLDED void describe(const reduce_node<Op, A, R>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::reduce;
    n.op = detail::reduce_kind_of<Op>();
    add_held(e, n);
    n.naxes = e.axis_count();
    for (int i = 0; i < n.naxes; ++i) n.axes[static_cast<std::size_t>(i)] = e.axis(i);
    n.keepdims = e.keeps_dims();
    e.append_params(key);
    n.text = detail::reduce_text(Op::name, text(n, 0), n.naxes, n.axes.data(), n.keepdims);
  }
  template <class A, class B>
  FUSOR_FOLDED void describe(const dot_node<A, B>& e, graph_node& n, std::vector<std::uint64_t>&) {
    using V = typename dot_node<A, B>::value_type;
    n.kind = node_kind::dot;
    n.arity = 2;
    // BLAS multiplies operands of the result's dtype: another one is cast
    // (and so materialised) first.
    auto as_v = [&](const auto& operand) {
      using O = std::remove_cvref_t<decltype(operand)>;
      if constexpr (std::is_same_v<value_type_t<O>, V>) return operand_in_memory(operand);
      else return operand_in_memory(cast<V>(operand));
    };
    n.child[0] = as_v(e.lhs());
    n.child[1] = as_v(e.rhs());
    // An operand cast to V is written as given, without the cast.
    auto given = [&](const auto& operand, int c) -> const std::string& {
      const int node = n.child[static_cast<std::size_t>(c)];
      if constexpr (std::is_same_v<value_type_t<std::remove_cvref_t<decltype(operand)>>, V>) return g_[node].text;
      else return g_[g_[node].child[0]].text;
    };
    n.text = detail::dot_text(given(e.lhs(), 0), given(e.rhs(), 1));
  }
  template <class A>
  FUSOR_FOLDED void describe(const transpose_node<A>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::transpose;
    add_held(e, n);
    n.nparams = e.count();
    for (int i = 0; i < n.nparams; ++i) n.params[static_cast<std::size_t>(i)] = e.perm(i);
    e.append_params(key);
    n.text = detail::transpose_text(text(n, 0), n.nparams, n.params.data());
  }
  template <class A>
  FUSOR_FOLDED void describe(const specify_node<A>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::specify;
    add_held(e, n);
    n.nparams = e.count();
    for (int i = 0; i < e.count(); ++i) n.params[static_cast<std::size_t>(i)] = e.extent(i);
    e.append_params(key);
    n.text = detail::shaped_text("specify_shape", text(n, 0), n.nparams, n.params.data());
  }
  template <class A>
  FUSOR_FOLDED void describe(const collective_node<A>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::collective;
    add_held(e, n);
    e.append_params(key);
    n.text = e.op().text(text(n, 0));
    n.leaf = g_.collectives.add(e.shared_op());
  }
  template <class A, class I, int N>
  FUSOR_FOLDED void describe(const take_node<A, I, N>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::take;
    add_held(e, n);
    n.nparams = 1;
    n.params[0] = e.axis();
    e.append_params(key);
    n.text = detail::take_text(text(n, 0), text(n, 1), e.axis());
  }
  template <int N, class... A>
  FUSOR_FOLDED void describe(const join_node<N, A...>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::join;
    add_held(e, n);
    n.join = e.join();
    e.append_params(key);
    std::string parts;
    for (int c = 0; c < n.arity; ++c) parts += (c ? ", " : "") + text(n, c);
    n.text = detail::join_text(parts, n.join, join_node<N, A...>::fill_text(n.join));
  }
  template <class A>
  FUSOR_FOLDED void describe(const diagonal_node<A>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::diagonal;
    add_held(e, n);
    n.nparams = 3;
    n.params[0] = e.offset();
    n.params[1] = e.axis1();
    n.params[2] = e.axis2();
    e.append_params(key);
    n.text = detail::diagonal_text(text(n, 0), n.params[0], n.params[1], n.params[2]);
  }
  template <class A, int N>
  FUSOR_FOLDED void describe(const view_node<A, N>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::view;
    add_held(e, n);
    n.slices = e.spec();
    e.append_params(key);
    n.text = detail::view_text(text(n, 0), n.slices.str());
  }
  template <class A, int N>
  FUSOR_FOLDED void describe(const reshape_node<A, N>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::reshape;
    add_held(e, n);
    n.nparams = N;
    for (int i = 0; i < N; ++i) n.params[static_cast<std::size_t>(i)] = e.extent(i);
    e.append_params(key);
    n.text = detail::shaped_text("reshape", text(n, 0), N, n.params.data());
  }

  template <class G, class L>
  FUSOR_FOLDED void describe(const sum_to_node<G, L>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::reduce;
    n.op = reduce_kind::sum;
    add_held(e, n);
    key.push_back(~std::uint64_t{0} - 1);
    key.push_back(static_cast<std::uint64_t>(n.shape_of[0]));
    n.text = detail::sum_to_text(text(n, 0), g_[n.shape_of[0]].text);
  }
  template <class G, class L>
  FUSOR_FOLDED void describe(const reshape_like_node<G, L>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::reshape;
    add_held(e, n);
    key.push_back(static_cast<std::uint64_t>(n.shape_of[0]));
    n.text = detail::reshape_like_text(text(n, 0), g_[n.shape_of[0]].text);
  }
  template <element T, class Num, class Den>
  FUSOR_FOLDED void describe(const size_ratio_node<T, Num, Den>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::size_ratio;
    n.elementwise = true;
    add_held(e, n);
    key.push_back(static_cast<std::uint64_t>(n.shape_of[0]));
    key.push_back(static_cast<std::uint64_t>(n.shape_of[1]));
    n.text = detail::size_ratio_text(g_[n.shape_of[0]].text, g_[n.shape_of[1]].text);
  }
  template <element T, class L>
  FUSOR_FOLDED void describe(const zeros_of_node<T, L>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::zeros_of;
    n.elementwise = true;
    add_held(e, n);
    key.push_back(static_cast<std::uint64_t>(n.shape_of[0]));
    n.text = detail::zeros_of_text(g_[n.shape_of[0]].text);
  }
  template <class G, class F, std::size_t K>
  FUSOR_FOLDED void describe(const place_node<G, F, K>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    using Fw = std::remove_cvref_t<decltype(e.forward())>;
    const Fw& f = e.forward();
    n.kind = node_kind::place;
    n.arity = 1;
    n.child[0] = operand_in_memory(e.arg());
    n.shape_of[0] = add(e.like());
    key.push_back(static_cast<std::uint64_t>(n.shape_of[0]));
    if constexpr (detail::has<detail::member::spec, Fw>) {
      n.placed = place_kind::view;
      n.slices = f.spec();
      n.slices.append_key(key);
    } else if constexpr (detail::has<detail::member::axis1, Fw>) {
      n.placed = place_kind::diagonal;
      n.nparams = 3;
      n.params = {f.offset(), f.axis1(), f.axis2()};
    } else if constexpr (detail::has<detail::member::join, Fw>) {
      n.placed = place_kind::join_part;
      n.shape_of[1] = add(f);
      n.nparams = 1;
      n.params[0] = static_cast<index_t>(K);
    } else {
      n.placed = place_kind::take;
      n.arity = 2;
      n.child[1] = operand_in_memory(f.indices());
      n.nparams = 1;
      n.params[0] = f.axis();
    }
    key.push_back(static_cast<std::uint64_t>(n.placed));
    key.push_back(static_cast<std::uint64_t>(n.shape_of[1]));
    for (int i = 0; i < n.nparams; ++i) key.push_back(static_cast<std::uint64_t>(n.params[static_cast<std::size_t>(i)]));
    // A join's text is in the graph; a view's, a diagonal's or a take's is written here.
    using X = place_node<G, F, K>;
    if constexpr (X::join_part >= 0) n.text = detail::place_text(text(n, 0), X::join_part, g_[n.shape_of[1]].text);
    else n.text = detail::place_text(text(n, 0), X::join_part, f.str());
  }
  template <class C>
  FUSOR_FOLDED void describe(const gate_node<C>& e, graph_node& n, std::vector<std::uint64_t>& key) {
    n.kind = node_kind::gate;
    n.elementwise = true;
    e.append_params(key);
    if (!e.on()) {  // nothing below a closed gate enters the graph
      n.zero = true;
      n.text = detail::gate_text(false, {});
      return;
    }
    n.arity = 1;
    n.child[0] = add(e.arg());
    if constexpr (detail::reads_kept_v<C>) n.kept_operands = 1;
    n.elementwise = g_[n.child[0]].elementwise;
    n.text = detail::gate_text(true, text(n, 0));
  }

  /// An operand read from memory (dot, transpose, reshape): a compound one is
  /// materialised first, so it needs a group kernel.
  template <class X>
  int operand_in_memory(const X& e) {
    if constexpr (is_ref_v<X>) {
      return operand_in_memory(e.target());
    } else {
      const int n = add(e);
      // A compound operand is materialised; a view may need copying too (a
      // dot of an operand permuted beyond what BLAS takes).
      mark<kernel_role::group, X>(n);
      return n;
    }
  }
};

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/compile/impl/graph.ipp"
#endif
