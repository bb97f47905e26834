// fusor/compile/impl/plan.ipp — printing a plan: what compile/plan.hpp's
// plan::str writes, and the labels the planner gives updates.
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "fusor/compile/plan.hpp"

namespace fusor {

namespace detail {
/// The view an update of a view writes, as the expression prints it ("u[1:-1, 1:-1]").
FUSOR_RUNTIME std::string region_text(const graph& g, const graph_update& u) {
  const auto& var = g.shared[static_cast<std::size_t>(u.variable)];
  const std::string name = var.record->name();
  return (name.empty() ? "<shared#" + std::to_string(var.id) + ">" : name) + "[" + u.region.str() + "]";
}

FUSOR_RUNTIME std::string update_label(const graph& g, int k) {
  const graph_update& u = g.updates[static_cast<std::size_t>(k)];
  return "update " + (u.partial ? region_text(g, u) : g.shared[static_cast<std::size_t>(u.variable)].describe());
}

FUSOR_RUNTIME std::string slot_name(const plan& p, const graph& g, int s) {
  if (s < 0) return "-";
  const auto& slot = p.slots[static_cast<std::size_t>(s)];
  switch (slot.kind) {
    case slot_kind::input: return "in:" + g.inputs[static_cast<std::size_t>(slot.owner)].name;
    case slot_kind::shared: return "var:" + g.shared[static_cast<std::size_t>(slot.owner)].record->name();
    case slot_kind::temporary: return "t" + std::to_string(s);
    case slot_kind::output: return "out" + std::to_string(slot.owner);
    case slot_kind::spare: return "spare" + std::to_string(slot.owner);
  }
  return "?";
}

FUSOR_RUNTIME bool identifier_char(char c) noexcept {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
}

/// Whether `text` is one call, `name(...)`, whose parenthesis closes at its
/// end: wherever it occurs in a printed expression (not inside a longer name),
/// it is a whole operand, whatever the operators around it.
FUSOR_RUNTIME bool one_call(const std::string& text) noexcept {
  const auto open = text.find('(');
  if (open == std::string::npos || open == 0 || text.back() != ')') return false;
  for (std::size_t i = 0; i < open; ++i)
    if (!identifier_char(text[i])) return false;
  int depth = 0;
  for (std::size_t i = open; i < text.size(); ++i) {
    depth += text[i] == '(' ? 1 : text[i] == ')' ? -1 : 0;
    if (depth == 0 && i + 1 != text.size()) return false;  // "f(a) + g(b)"
  }
  return true;
}

/// Replaces, left to right, each occurrence of `what` in `text` at which
/// `whole(text, at)` holds by `by`.
template <class Whole>
void replace_whole(std::string& text, const std::string& what, const std::string& by, Whole whole) {
  for (std::size_t at = text.find(what); at != std::string::npos; at = text.find(what, at)) {
    if (!whole(text, at)) {
      at += 1;
      continue;
    }
    text.replace(at, what.size(), by);
    at += by.size();
  }
}

/// `label` with each expression in `named` (text, name) — the values an
/// earlier step left in a temporary this step reads — shown by its
/// temporary's name, the longest first. A call is replaced wherever it
/// occurs; another expression only where it is a whole argument (between
/// "(" or ", " and ")" or ","), where no operator around it can bind into it.
FUSOR_RUNTIME std::string elide_read_values(std::string label, std::vector<std::pair<std::string, std::string>> named) {
  std::sort(named.begin(), named.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  for (const auto& [text, slot] : named) {
    if (text.size() <= slot.size() || text == label) continue;
    const bool call = one_call(text);
    const std::size_t length = text.size();
    replace_whole(label, text, slot, [&](const std::string& l, std::size_t at) {
      const std::size_t end = at + length;
      if (call) return at == 0 || !identifier_char(l[at - 1]);
      return (at == 0 || l[at - 1] == '(' || (at >= 2 && l.compare(at - 2, 2, ", ") == 0)) &&
             (end == l.size() || l[end] == ')' || l[end] == ',');
    });
  }
  return label;
}

/// `text` with every `shape(X)` and `size(X)` in `known` (text, value) — the
/// shape-only operands of a gradient, which name whole forward expressions —
/// replaced by what they are in this plan: "(400,)", "400".
FUSOR_RUNTIME std::string with_known_shapes(std::string text, const std::vector<std::pair<std::string, std::string>>& known) {
  for (const auto& [what, value] : known)  // "reshape(" is not "shape("
    replace_whole(text, what, value, [](const std::string& t, std::size_t at) { return at == 0 || !identifier_char(t[at - 1]); });
  return text;
}
}  // namespace detail

FUSOR_RUNTIME std::string plan::str(const graph& g) const {
  // The shapes the shape-only nodes (sum_to, zeros_of, size_ratio, places)
  // refer to, as this plan knows them, longest expression first.
  std::vector<std::pair<std::string, std::string>> known;
  for (const auto& n : g.nodes)
    for (int x : n.shape_of)
      if (x >= 0 && static_cast<std::size_t>(x) < shapes.size()) {
        const std::string& t = g[x].text;
        known.emplace_back("shape(" + t + ")", shapes[static_cast<std::size_t>(x)].str());
        known.emplace_back("size(" + t + ")", std::to_string(shapes[static_cast<std::size_t>(x)].elements()));
      }
  std::sort(known.begin(), known.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  known.erase(std::unique(known.begin(), known.end()), known.end());
  // What each temporary holds when a step reads it: the expression of the
  // last step before it that wrote it (an in-place step changes it).
  std::vector<const std::string*> held(slots.size(), nullptr);
  std::string out = "plan for";
  if (backend == backend_id::device) out = "plan on " + space.str() + " for";
  if (g.inputs.empty()) out += " no inputs";
  for (std::size_t i = 0; i < g.inputs.size(); ++i) {
    const auto& s = slots[static_cast<std::size_t>(input_slot[i])];
    out += (i ? ", " : " ") + g.inputs[i].name + " " + s.shape.str();
  }
  std::size_t temps = 0;
  for (const auto& s : slots) temps += s.kind == slot_kind::temporary && s.first >= 0;  // written by a step
  out += "\n  arena: " + std::to_string(arena_bytes) + " bytes for " + std::to_string(temps) + " temporaries\n";
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& st = steps[i];
    // Appended piece by piece (GCC 12 warns, wrongly, about chains of + here).
    std::string line = "  ";
    line.append(std::to_string(i)).append(" ").append(detail::kind_name(st.kind));
    line.resize(std::max<std::size_t>(line.size() + 1, 16), ' ');  // at least one space before the slot
    line.append(detail::slot_name(*this, g, st.dest));
    if (st.dest >= 0) {
      const slot_info& d = slots[static_cast<std::size_t>(st.dest)];
      line.append(" ").append(name(d.type)).append(" ").append(d.shape.str());
    }
    if (st.in_place) line.append(" (in place)");
    if (st.kind == step_kind::communicate && st.message_steps > 1)
      line.append(" (one message with the next ").append(std::to_string(st.message_steps - 1)).append(")");
    if (st.kind == step_kind::communicate && st.message_steps == 0) line.append(" (in an earlier step's message)");
    // A gradient's steps would spell out the forward expression again and
    // again (kilobytes a line): what an earlier step computed is named by the
    // temporary it reads.
    std::vector<std::pair<std::string, std::string>> named;
    for (int r : st.reads)
      if (r >= 0 && held[static_cast<std::size_t>(r)])  // an in-place step reads its own dest
        named.emplace_back(detail::with_known_shapes(*held[static_cast<std::size_t>(r)], known),
                           detail::slot_name(*this, g, r));
    const std::string label = detail::with_known_shapes(st.label, known);
    line.append(" = ").append(named.empty() ? label : detail::elide_read_values(label, std::move(named)));
    if (!st.reads.empty()) {
      line.append("   reads");
      for (int r : st.reads) line.append(" ").append(detail::slot_name(*this, g, r));
    }
    out.append(line).append("\n");
    if (st.dest >= 0 && st.node >= 0 && slots[static_cast<std::size_t>(st.dest)].kind == slot_kind::temporary)
      held[static_cast<std::size_t>(st.dest)] = &g[st.node].text;
  }
  for (std::size_t s = 0; s < slots.size(); ++s)
    if (slots[s].kind == slot_kind::temporary && slots[s].first >= 0)  // not one no step writes
      out += "  t" + std::to_string(s) + ": " + std::string(name(slots[s].type)) + " " + slots[s].shape.str() +
             " at arena offset " + std::to_string(slots[s].offset) + ", live in steps " +
             std::to_string(slots[s].first) + ".." + std::to_string(slots[s].last) + "\n";
  for (std::size_t k = 0; k < updates.size(); ++k)
    out += "  update of " + g.shared[static_cast<std::size_t>(g.updates[k].variable)].describe() + ": " +
           updates[k].why + "\n";
  for (std::size_t k = 0; k < outputs.size(); ++k)
    if (g.outputs[k].candidate) out += "  output " + std::to_string(k) + ": " + outputs[k].why + "\n";
  // What each output and update computes, as planned (after the stable rewrites).
  for (std::size_t k = 0; k < g.outputs.size(); ++k)
    out += "  output " + std::to_string(k) + " = " + detail::with_known_shapes(g[g.outputs[k].node].text, known) + "\n";
  for (std::size_t k = 0; k < g.updates.size(); ++k)
    out += "  " + detail::update_label(g, static_cast<int>(k)) + " = " +
           detail::with_known_shapes(g[g.updates[k].node].text, known) + "\n";
  return out;
}

}  // namespace fusor
