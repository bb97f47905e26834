// fusor/compile/impl/plan.ipp — printing a plan: what compile/plan.hpp's
// plan::str writes, and the labels the planner gives updates.
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include <algorithm>
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

namespace detail {
/// The shapes the shape-only nodes (sum_to, zeros_of, size_ratio, places)
/// refer to, as this plan knows them, longest expression first.
FUSOR_RUNTIME std::vector<std::pair<std::string, std::string>> known_shapes(const plan& p, const graph& g) {
  std::vector<std::pair<std::string, std::string>> known;
  for (const auto& n : g.nodes)
    for (int x : n.shape_of)
      if (x >= 0 && static_cast<std::size_t>(x) < p.shapes.size()) {
        const std::string& t = g[x].text;
        known.emplace_back("shape(" + t + ")", p.shapes[static_cast<std::size_t>(x)].str());
        known.emplace_back("size(" + t + ")", std::to_string(p.shapes[static_cast<std::size_t>(x)].elements()));
      }
  std::sort(known.begin(), known.end(), [](const auto& a, const auto& b) { return a.first.size() > b.first.size(); });
  known.erase(std::unique(known.begin(), known.end()), known.end());
  return known;
}

/// What each step computes, as plan::str and plan::dot show it: its label
/// with the shapes this plan knows, and with the values earlier steps left in
/// the temporaries it reads named by their temporary. A gradient's steps would
/// otherwise spell out the forward expression again and again (kilobytes a
/// line).
FUSOR_RUNTIME std::vector<std::string> step_texts(const plan& p, const graph& g,
                                                  const std::vector<std::pair<std::string, std::string>>& known) {
  // What each temporary holds when a step reads it: the expression of the
  // last step before it that wrote it (an in-place step changes it).
  std::vector<const std::string*> held(p.slots.size(), nullptr);
  // A sum that sums nothing has its operand's copy for its value (compile/
  // impl/planner.ipp, make_values): a reader of the copy may name either.
  std::vector<std::vector<const std::string*>> sums_of_nothing(p.slots.size());
  for (int q = 0; q < g.size(); ++q) {
    const graph_node& n = g[q];
    if (n.kind != node_kind::reduce || static_cast<std::size_t>(q) >= p.values.size()) continue;
    const int slot = p.values[static_cast<std::size_t>(q)].slot;
    if (slot >= 0 && slot == p.values[static_cast<std::size_t>(n.child[0])].slot)
      sums_of_nothing[static_cast<std::size_t>(slot)].push_back(&n.text);
  }
  std::vector<std::string> texts;
  texts.reserve(p.steps.size());
  for (const auto& st : p.steps) {
    std::vector<std::pair<std::string, std::string>> named;
    for (int r : st.reads)
      if (r >= 0 && held[static_cast<std::size_t>(r)]) {  // an in-place step reads its own dest
        named.emplace_back(with_known_shapes(*held[static_cast<std::size_t>(r)], known), slot_name(p, g, r));
        for (const std::string* sum : sums_of_nothing[static_cast<std::size_t>(r)])
          named.emplace_back(with_known_shapes(*sum, known), slot_name(p, g, r));
      }
    std::string label = with_known_shapes(st.label, known);
    texts.push_back(named.empty() ? std::move(label) : elide_read_values(std::move(label), std::move(named)));
    if (st.dest >= 0 && st.node >= 0 && p.slots[static_cast<std::size_t>(st.dest)].kind == slot_kind::temporary)
      held[static_cast<std::size_t>(st.dest)] = &g[st.node].text;
  }
  return texts;
}
}  // namespace detail

FUSOR_RUNTIME std::string plan::str(const graph& g) const {
  const auto known = detail::known_shapes(*this, g);
  const auto texts = detail::step_texts(*this, g, known);
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
    line.append(" = ").append(texts[i]);
    if (!st.reads.empty()) {
      line.append("   reads");
      for (int r : st.reads) line.append(" ").append(detail::slot_name(*this, g, r));
    }
    out.append(line).append("\n");
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

namespace detail {
/// `text` inside a Graphviz double-quoted string: quotes and backslashes
/// escaped (a backslash would start one of Graphviz's own escapes).
FUSOR_RUNTIME std::string dot_escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\';
    out += c == '\n' ? ' ' : c;
  }
  return out;
}

/// `text` escaped and cut into lines of about `width` characters, broken at
/// spaces where one is near; after `lines` lines, "...".
FUSOR_RUNTIME std::string dot_wrapped(const std::string& text, std::size_t width = 44, std::size_t lines = 4) {
  std::string out;
  std::size_t at = 0, line = 0;
  while (at < text.size()) {
    if (line == lines) return out + "\\n...";
    std::size_t take = std::min(width, text.size() - at), skip = 0;
    if (at + take < text.size()) {
      const std::size_t space = text.rfind(' ', at + take);
      if (space != std::string::npos && space > at + width / 2) take = space - at, skip = 1;  // the space goes
    }
    out += (line++ ? "\\n" : "") + dot_escaped(text.substr(at, take));
    at += take + skip;
  }
  return out;
}
}  // namespace detail

FUSOR_RUNTIME std::string plan::dot(const graph& g) const {
  const auto known = detail::known_shapes(*this, g);
  const auto texts = detail::step_texts(*this, g, known);
  // Appended, not `"s" + std::to_string(s)`: g++ 12 at -O2 warns (-Wrestrict)
  // inside libstdc++ for a literal prepended to a temporary string (GCC bug 105329).
  const auto prefixed = [](char prefix, std::string number) { return number.insert(0, 1, prefix); };
  const auto slot_id = [&](int s) { return prefixed('s', std::to_string(s)); };
  const auto step_id = [&](std::size_t i) { return prefixed('k', std::to_string(i)); };
  const auto slot_of_update = [&](int k) {
    return shared_slot[static_cast<std::size_t>(g.updates[static_cast<std::size_t>(k)].variable)];
  };

  // The slots the picture shows: the arguments, the shared variables, and
  // whatever a step reads or writes.
  std::vector<bool> shown(slots.size(), false);
  for (int s : input_slot) shown[static_cast<std::size_t>(s)] = true;
  for (int s : shared_slot) shown[static_cast<std::size_t>(s)] = true;
  const auto show = [&](int s) {
    if (s >= 0) shown[static_cast<std::size_t>(s)] = true;
  };
  for (const auto& st : steps) {
    show(st.dest);
    show(st.scratch);
    for (int r : st.reads) show(r);
    for (const auto& o : st.group) show(o[1]);
    for (const auto& m : st.moves) show(m.from);
  }
  // On a device, every slot is there but the host arguments of the uploads.
  std::vector<bool> on_host(slots.size(), backend != backend_id::device);
  for (const auto& st : steps)
    if (st.kind == step_kind::upload)
      for (int r : st.reads) on_host[static_cast<std::size_t>(r)] = true;

  std::string out = "digraph plan {\n  graph [rankdir=TB, fontname=\"Helvetica\", fontsize=11, labelloc=t, label=\"";
  {
    std::string title = backend == backend_id::device ? "plan on " + space.str() + " for" : "plan for";
    if (g.inputs.empty()) title += " no inputs";
    for (std::size_t i = 0; i < g.inputs.size(); ++i)
      title += (i ? ", " : " ") + g.inputs[i].name + " " + slots[static_cast<std::size_t>(input_slot[i])].shape.str();
    std::size_t temps = 0;
    for (const auto& s : slots) temps += s.kind == slot_kind::temporary && s.first >= 0;
    out += detail::dot_escaped(title) + "\\narena: " + std::to_string(arena_bytes) + " bytes for " +
           std::to_string(temps) + " temporaries\"];\n";
  }
  out += "  node [fontname=\"Helvetica\", fontsize=10];\n  edge [fontname=\"Helvetica\", fontsize=9];\n";

  // Slots: what holds a value, coloured by kind.
  const auto slot_node = [&](std::size_t s) {
    const slot_info& slot = slots[s];
    const int id = static_cast<int>(s);
    std::string label = detail::dot_escaped(detail::slot_name(*this, g, id)) + "\\n" + std::string(name(slot.type)) + " " + slot.shape.str();
    const char* fill = "#cfe2f3";
    const char* shape = "box";
    switch (slot.kind) {
      case slot_kind::input: break;
      case slot_kind::shared: {
        fill = "#d9ead3";
        std::string how;
        for (std::size_t k = 0; k < updates.size(); ++k)
          if (slot_of_update(static_cast<int>(k)) == id)
            how = updates[k].in_place ? "updated in place"
                  : updates[k].transfer_from >= 0
                      ? "updated into the old buffer of " +
                            g.shared[static_cast<std::size_t>(g.updates[static_cast<std::size_t>(updates[k].transfer_from)].variable)]
                                .record->name()
                      : "updated through spare" + std::to_string(k);
        label += "\\n" + detail::dot_escaped(how.empty() ? "read" : how);
        break;
      }
      case slot_kind::temporary:
        fill = "#fff2cc";
        shape = "ellipse";
        label += "\\narena [" + std::to_string(slot.offset) + ", " + std::to_string(slot.offset + slot.bytes) +
                 ")\\nsteps " + std::to_string(slot.first) + ".." + std::to_string(slot.last);
        break;
      case slot_kind::output:
        fill = "#f4cccc";
        break;
      case slot_kind::spare:
        fill = "#eeeeee";
        break;
    }
    if (slot.kind == slot_kind::input)
      for (std::size_t k = 0; k < outputs.size(); ++k)
        if (outputs[k].in_place && outputs[k].slot == id) label += "\\nholds output " + std::to_string(k) + " (in place)";
    return "    " + slot_id(id) + " [shape=" + shape + ", style=\"rounded,filled\", fillcolor=\"" + fill +
           "\", label=\"" + label + "\"];\n";
  };
  // The arguments and shared variables, where the values come from, on one
  // rank at the top (of their cluster, on a device).
  const auto slots_where = [&](bool host) {
    std::string nodes, top;
    for (std::size_t s = 0; s < slots.size(); ++s)
      if (shown[s] && on_host[s] == host) {
        nodes += slot_node(s);
        if (slots[s].kind == slot_kind::input || slots[s].kind == slot_kind::shared) top += " " + slot_id(static_cast<int>(s)) + ";";
      }
    return top.empty() ? nodes : nodes + "    { rank=min;" + top + " }\n";
  };

  // Steps: what runs, in order; the commit's installs and transfers dashed.
  std::string step_nodes, edges;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const auto& st = steps[i];
    const bool commit = st.kind == step_kind::install || st.kind == step_kind::transfer;
    std::string head = std::to_string(i) + " " + detail::kind_name(st.kind);
    if (st.in_place) head += " (in place)";
    if (st.kind == step_kind::communicate && st.message_steps > 1)
      head += " (one message with the next " + std::to_string(st.message_steps - 1) + ")";
    const char* shape = st.kind == step_kind::communicate ? "hexagon" : st.kind == step_kind::upload ? "cds" : "box";
    const char* fill = st.kind == step_kind::communicate ? "#ead1dc"
                       : st.kind == step_kind::upload    ? "#d0e0e3"
                       : commit                          ? "#f3f3f3"
                                                         : "#ffffff";
    step_nodes += "    " + step_id(i) + " [shape=" + shape + ", style=\"filled" + (commit ? ",dashed" : "") +
                  "\", fillcolor=\"" + fill + "\", label=\"" + detail::dot_escaped(head) + "\\n" +
                  detail::dot_wrapped(texts[i]) + "\", tooltip=\"" + detail::dot_escaped(texts[i]) + "\"];\n";
    const auto edge = [&](const std::string& from, const std::string& to, const std::string& attributes) {
      edges += "  " + from + " -> " + to + (attributes.empty() ? "" : " [" + attributes + "]") + ";\n";
    };
    std::vector<int> read;
    for (int r : st.reads)
      if (r >= 0 && std::find(read.begin(), read.end(), r) == read.end()) read.push_back(r);
    for (const auto& m : st.moves)
      if (m.from >= 0 && std::find(read.begin(), read.end(), m.from) == read.end()) read.push_back(m.from);
    for (int r : read)
      edge(slot_id(r), step_id(i),
           st.kind == step_kind::upload ? std::string("label=\"") + std::to_string(static_cast<long long>(st.bytes)) + " bytes\"" : "");
    // An edge back into a variable or an argument (written in place, or
    // installed) does not pull it below the step: they stay at the top.
    if (st.kind == step_kind::install) {
      edge(step_id(i), slot_id(slot_of_update(st.target)), "style=dashed, constraint=false, label=\"install\"");
    } else if (st.kind == step_kind::transfer) {
      edge(slot_id(slot_of_update(st.source)), step_id(i), "style=dashed, label=\"old buffer\"");
      edge(step_id(i), slot_id(slot_of_update(st.target)), "style=dashed, constraint=false");
    } else {
      for (const auto& o : st.group) edge(step_id(i), slot_id(o[1]), "");
      if (st.dest >= 0 && st.group.empty())
        edge(step_id(i), slot_id(st.dest), st.in_place ? "style=bold, constraint=false, label=\"in place\"" : "");
      if (st.scratch >= 0) edge(step_id(i), slot_id(st.scratch), "style=dotted, label=\"scratch\"");
    }
  }

  if (backend == backend_id::device) {
    out += "  subgraph cluster_host {\n    label=\"host\"; style=rounded; color=\"#999999\";\n" + slots_where(true) + "  }\n";
    out += "  subgraph cluster_device {\n    label=\"" + detail::dot_escaped(space.str()) +
           "\"; style=rounded; color=\"#3d85c6\";\n" + slots_where(false) + step_nodes + "  }\n";
  } else {
    out += slots_where(true) + step_nodes;
  }
  // The steps run in this order: an invisible chain keeps them so, top to bottom.
  for (std::size_t i = 0; i + 1 < steps.size(); ++i)
    out += "  " + step_id(i) + " -> " + step_id(i + 1) + " [style=invis, weight=4];\n";
  return out + edges + "}\n";
}

}  // namespace fusor
