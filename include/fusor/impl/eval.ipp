// fusor/impl/eval.ipp — the steps of an eval or an assign that do not depend
// on the expression's type (eval.hpp): one function each, not one per type.
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/eval.hpp"

namespace fusor {
namespace detail {

FUSOR_RUNTIME evaluation::~evaluation() = default;

FUSOR_RUNTIME void build(evaluation& ev, const char* who, graph_adder add) {
  ev.built = false;
  ev.prog = program{};
  graph& g = ev.prog.graph();
  graph_builder_t b(g);
  add.call(add.context, g, b);
  place(ev.prog, ev.facts, who);
  ev.key = ev.probe;
  ev.built = true;
}

FUSOR_RUNTIME program::entry& plan_evaluation(evaluation& ev) {
  check_spaces(ev.facts, ev.prog.graph());
  read_shared_facts(ev.prog.graph(), ev.facts);
  auto& entry = ev.prog.plan_for(ev.facts);
  ev.prog.bind_slots(entry, ev.facts);
  return entry;
}

FUSOR_RUNTIME void run_evaluation(evaluation& ev, program::entry& e, void* host_out, std::size_t bytes) {
  buffer on_device;  // on a device: computed there, copied back
  void*& out = ev.prog.slot(e.plan.outputs[0].slot);
  if (host_accessible(ev.facts.space)) {
    out = host_out;
  } else {
    on_device = buffer::allocate(bytes, ev.facts.space);
    out = on_device.data();
  }
  ev.prog.run(e, nullptr);
  if (!host_accessible(ev.facts.space)) copy_bytes(host_out, host, on_device.data(), ev.facts.space, bytes);
  finish_evaluation(ev);
}

FUSOR_RUNTIME void finish_evaluation(evaluation& ev) {
  advance_counters(ev.prog.graph());
  if (ev.prog.arena_bytes() > evaluation::keep_arena_bytes) ev.prog.release_arena();
}

}  // namespace detail
}  // namespace fusor
