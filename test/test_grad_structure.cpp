// The cut points grad chooses (grad/structure.hpp, cuts_of), against a
// reference that reads the definition literally, node by node of the tree.
//
// cuts_of works on the cost's distinct types and the operand edges between
// them: a type's occurrences are the paths to it from the root, and a chosen
// cut point passes one occurrence on to what is below it. The reference
// below writes the tree out in pre-order instead (every node, with repeats),
// marks the reachable nodes, and for each candidate, larger trees first,
// counts its reachable occurrences that are not inside a second occurrence
// of a cut point chosen before it, then marks the trees below its own second
// and later occurrences. Both must choose the same types in the same order,
// with the same counts of reachable occurrences: the walks rely on the order
// (a cut point before every cut point inside it) and the counts (the size of
// each cut point's table of sites).
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <type_traits>
#include <utility>

#include <xtensor/xtensor.hpp>

#include <fusor/fusor.hpp>

namespace cut_reference {

using fusor::detail::tlist;
namespace ad = fusor::detail::ad;

/// Every node type of X's tree, in pre-order, with repeats.
template <class X, class Children = typename fusor::detail::children_of<X>::type>
struct preorder;
template <class X, class... C>
struct preorder<X, tlist<C...>> {
  using type = typename ad::concat_lists<tlist<X>, typename preorder<C>::type...>::type;
};

template <class Cost, class Ws, class Nodes = typename preorder<Cost>::type>
struct reference_cuts;
template <class Cost, class... W, class... X>
struct reference_cuts<Cost, tlist<W...>, tlist<X...>> {
  static constexpr std::size_t n = sizeof...(X);
  struct result {
    std::size_t at[n];    // the chosen types' first positions, in order
    std::size_t live[n];  // their reachable occurrences
    std::size_t count;
  };
  static constexpr result chosen = [] {
    const void* type[n] = {&fusor::detail::type_tag<X>...};  // equal addresses: equal types
    const std::size_t size[n] = {ad::tree_size<X>::value...};
    const std::uint64_t flows[n] = {ad::flow_bits<X>::value...};
    const bool worth[n] = {ad::cut_candidate_v<X, tlist<W...>>...};
    // Reachable: every operand edge from the root flows, and the root is a float.
    bool reached[n] = {};
    reached[0] = std::is_floating_point_v<fusor::value_type_t<Cost>>;
    for (std::size_t q = 0; q < n; ++q)
      for (std::size_t c = q + 1, k = 0; c < q + size[q]; c += size[c], ++k)
        reached[c] = reached[q] && ((flows[q] >> k) & 1) != 0;
    // Candidates: each type at its first position, larger trees first, then
    // in pre-order.
    std::size_t candidate[n] = {};
    std::size_t m = 0;
    for (std::size_t j = 0; j < n; ++j) {
      bool repeat = false;
      for (std::size_t i = 0; i < j && !repeat; ++i) repeat = type[i] == type[j];
      if (repeat) continue;
      std::size_t at = m++;
      for (; at > 0 && size[candidate[at - 1]] < size[j]; --at) candidate[at] = candidate[at - 1];
      candidate[at] = j;
    }
    bool below_repeat[n] = {};  // inside a second or later occurrence of a chosen cut point
    result out{};
    for (std::size_t c = 0; c < m; ++c) {
      const std::size_t f = candidate[c];
      if (!worth[f]) continue;
      std::size_t reachable = 0, kept = 0;
      for (std::size_t j = 0; j < n; ++j)
        if (type[j] == type[f] && reached[j]) {
          ++reachable;
          kept += !below_repeat[j];
        }
      if (kept < 2) continue;
      out.at[out.count] = f;
      out.live[out.count] = reachable;
      ++out.count;
      bool first = true;
      for (std::size_t j = 0; j < n; ++j) {
        if (type[j] != type[f] || !reached[j] || below_repeat[j]) continue;
        if (first) {
          first = false;
          continue;
        }
        for (std::size_t q = j + 1; q < j + size[j]; ++q) below_repeat[q] = true;
      }
    }
    return out;
  }();

  template <std::size_t... K>
  static auto list(std::index_sequence<K...>) -> tlist<ad::tlist_at_t<chosen.at[K], tlist<X...>>...>;
  using type = decltype(list(std::make_index_sequence<chosen.count>{}));
};

/// Checks cuts_of against the reference for the cost's type and the targets'
/// leaf types W; returns how many cut points both chose.
template <class Cost, class... W>
std::size_t check_cuts() {
  using fast = ad::cuts_of<Cost, tlist<W...>>;
  using slow = reference_cuts<Cost, tlist<W...>>;
  INFO("tree of ", ad::tree_size<Cost>::value, " nodes");
  CHECK(fast::count == slow::chosen.count);
  CHECK(std::is_same_v<typename fast::type, typename slow::type>);
  constexpr std::size_t both = fast::count < slow::chosen.count ? fast::count : slow::chosen.count;
  const auto live_counts = []<std::size_t... K>(std::index_sequence<K...>) {
    return std::array<std::size_t, both + 1>{fast::template live_count<K>..., 0};
  }(std::make_index_sequence<both>{});
  for (std::size_t k = 0; k < both; ++k) {
    INFO("cut point ", k);
    CHECK(live_counts[k] == slow::chosen.live[k]);
  }
  return fast::count;
}

template <class T>
using leaf_of = decltype(ad::target_leaf(std::declval<const T&>()));

}  // namespace cut_reference

using cut_reference::check_cuts;
using cut_reference::leaf_of;

TEST_CASE("cut points: the logistic regression's cost") {
  fusor::matrix<double> x{"x"};
  fusor::vector<double> y{"y"};
  auto w = fusor::shared(xt::xtensor<double, 1>({4}, 0.0), "w");
  auto b = fusor::shared(0.0, "b");
  const auto p = fusor::sigmoid(fusor::dot(x, w) + b);
  const auto cost = fusor::mean(-y * fusor::log(p) - (1 - y) * fusor::log(1 - p)) + 0.01 * fusor::sum(w * w);
  // p occurs twice: its dot is worth cutting.
  CHECK(check_cuts<decltype(cost), leaf_of<decltype(w)>, leaf_of<decltype(b)>>() >= 1);
  CHECK(check_cuts<decltype(fusor::stabilize(cost)), leaf_of<decltype(w)>, leaf_of<decltype(b)>>() >= 1);
}

TEST_CASE("cut points: the perceptron's cost, and a repeat nested in a repeat") {
  fusor::matrix<float> x{"x"}, y{"y"};
  auto W1 = fusor::shared(xt::xtensor<float, 2>({4, 3}, 0.0f), "W1");
  auto b1 = fusor::shared(xt::xtensor<float, 1>({3}, 0.0f), "b1");
  auto W2 = fusor::shared(xt::xtensor<float, 2>({3, 2}, 0.0f), "W2");
  auto b2 = fusor::shared(xt::xtensor<float, 1>({2}, 0.0f), "b2");
  const auto h = fusor::maximum(fusor::dot(x, W1) + b1, 0.0f);
  const auto z = fusor::dot(h, W2) + b2;
  const auto cost = -fusor::mean(fusor::sum(y * fusor::log_softmax(z, 1), 1));
  // The logits repeat inside log_softmax, and the hidden layer inside them is
  // met once below the logits' cut point: not a cut point of its own.
  const std::size_t cuts = check_cuts<decltype(cost), leaf_of<decltype(W1)>, leaf_of<decltype(b1)>,
                                      leaf_of<decltype(W2)>, leaf_of<decltype(b2)>>();
  CHECK(cuts >= 1);
  // The same hidden layer read twice by the cost besides: now both repeat.
  const auto cost2 = cost + fusor::sum(h * h);
  CHECK(check_cuts<decltype(cost2), leaf_of<decltype(W1)>, leaf_of<decltype(b1)>, leaf_of<decltype(W2)>,
                   leaf_of<decltype(b2)>>() > cuts);
  // Targets inside the repeats only: the cut points on no path to them go.
  CHECK(check_cuts<decltype(cost2), leaf_of<decltype(W1)>>() >= 1);
}

TEST_CASE("cut points: a gradient's tree, and one below a stop_gradient and an index") {
  auto w = fusor::shared(xt::xtensor<double, 2>({2, 3}, 0.5), "w");
  auto d = fusor::shared(xt::xtensor<double, 2>({2, 3}, 0.25), "d");
  const auto e = fusor::log(1.5 + w * w);
  const auto m = fusor::mean(e, {0, 1});
  const auto g = fusor::grad(fusor::sum(fusor::tanh(m * m) * e), w);
  // The second walk's cost: the gradient's tree, its adjoints and references.
  const auto cost2 = fusor::sum(g * d);
  CHECK(check_cuts<decltype(cost2), leaf_of<decltype(w)>>() >= 1);
  // Repeats an adjoint cannot reach are no cut points: below a
  // stop_gradient, in the indices of a take.
  const auto s = fusor::sum(fusor::dot(w, fusor::transpose(d)));
  const auto blocked = fusor::stop_gradient(s) * s + fusor::stop_gradient(s);
  check_cuts<decltype(blocked), leaf_of<decltype(w)>>();
  fusor::vector<std::int64_t> i{"i"};
  const auto taken = fusor::sum(fusor::take(w, i, 0) * fusor::take(w, i, 0));
  check_cuts<decltype(taken), leaf_of<decltype(w)>>();
}
