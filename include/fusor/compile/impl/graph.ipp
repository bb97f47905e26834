// fusor/compile/impl/graph.ipp — what building a graph does whatever the node
// types are (compile/graph.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/compile/graph.hpp"

namespace fusor {

FUSOR_RUNTIME graph::~graph() = default;

FUSOR_RUNTIME void advance_counters(const graph& g) {
  for (std::size_t j = 0; j < g.shared.size(); ++j) {
    variable_base* c = g.shared[j].counter;
    if (!c) continue;
    bool updated = false;
    for (const auto& u : g.updates) updated = updated || u.variable == static_cast<int>(j);
    if (!updated) c->advance()(*c);
  }
}

namespace detail {

FUSOR_RUNTIME graph_builder_base::~graph_builder_base() = default;

FUSOR_RUNTIME graph_builder_base::pending& graph_builder_base::begin(const void* head, dtype type, int rank) {
  if (depth_ == begun_.size()) begun_.push_back(std::make_unique<pending>());
  pending& p = *begun_[depth_];
  p.node = graph_node{};
  p.node.type = type;
  p.node.static_rank = rank;
  p.key.assign({static_cast<std::uint64_t>(reinterpret_cast<std::uintptr_t>(head)), static_cast<std::uint64_t>(type),
                static_cast<std::uint64_t>(static_cast<std::int64_t>(rank))});
  ++depth_;
  return p;
}

FUSOR_RUNTIME int graph_builder_base::finish() {
  pending& p = *begun_[--depth_];
  for (int c = 0; c < p.node.arity; ++c)
    p.key.push_back(static_cast<std::uint64_t>(p.node.child[static_cast<std::size_t>(c)]));
  if (auto found = index_.find(p.key); found != index_.end()) return ~found->second;
  g_.nodes.push_back(FUSOR_MOVE(p.node));
  const int id = g_.size() - 1;
  index_.emplace(FUSOR_MOVE(p.key), id);
  return id;
}

FUSOR_RUNTIME bool graph_builder_base::describe_given(std::uint64_t id, bool input, graph_node& n,
                                                    std::vector<std::uint64_t>& key) {
  if (replacing_) return false;
  for (std::size_t k = 0; k < g_.givens.size(); ++k)
    if (g_.givens[k].id == id && g_.givens[k].input == input) {
      n.kind = node_kind::given;
      n.arity = 1;
      n.child[0] = g_.givens[k].node;
      n.leaf = static_cast<int>(k);
      n.elementwise = false;  // it reads the replacement's memory
      key.push_back(id);
      key.push_back(~std::uint64_t{0});
      return true;
    }
  return false;
}

FUSOR_RUNTIME void graph_builder_base::describe_map(graph_node& n, const char* symbol, bool infix,
                                                   unsigned parenthesized, arith arithmetic) {
  n.elementwise = true;
  n.arithmetic = arithmetic;
  std::array<std::string_view, max_arity> texts;
  unsigned zero_terms = 0;  // a sum's operands that are known zeros (closed gates)
  for (int c = 0; c < n.arity; ++c) {
    const graph_node& operand = g_[n.child[static_cast<std::size_t>(c)]];
    n.elementwise = n.elementwise && operand.elementwise;
    texts[static_cast<std::size_t>(c)] = operand.text;
    if (arithmetic == arith::plus && operand.zero) zero_terms |= 1u << c;
  }
  if (arithmetic == arith::plus) n.zero = zero_terms == 3u;
  n.text = map_text(symbol, infix, std::span<const std::string_view>(texts.data(), static_cast<std::size_t>(n.arity)),
                    parenthesized, zero_terms);
}

FUSOR_RUNTIME void graph_builder_base::set_held(graph_node& n, const int* ids, std::size_t operands, std::size_t count,
                                               unsigned kept) {
  n.arity = static_cast<int>(operands);
  for (std::size_t k = 0; k < count; ++k) {
    if (k < operands) n.child[k] = ids[k];
    else n.shape_of[k - operands] = ids[k];
  }
  n.kept_operands |= kept & ((1u << operands) - 1u);
}

FUSOR_RUNTIME void graph_builder_base::set_kernel(int node, backend_id b, kernel_role r, const void* kernel) {
  auto& slot = g_.nodes[static_cast<std::size_t>(node)].kernels[static_cast<std::size_t>(b)][static_cast<std::size_t>(r)];
  if (!slot) slot = kernel;
}

FUSOR_RUNTIME int graph_builder_base::push_input(graph_input&& gi) {
  g_.inputs.push_back(FUSOR_MOVE(gi));
  return static_cast<int>(g_.inputs.size()) - 1;
}

FUSOR_RUNTIME int graph_builder_base::push_shared(const graph_shared& gs) {
  g_.shared.push_back(gs);
  return static_cast<int>(g_.shared.size()) - 1;
}

FUSOR_RUNTIME int graph_builder_base::push_constant(const graph_constant& c) {
  g_.constants.push_back(c);
  return static_cast<int>(g_.constants.size()) - 1;
}

}  // namespace detail
}  // namespace fusor
