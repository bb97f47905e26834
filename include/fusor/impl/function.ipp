// fusor/impl/function.ipp — where a function runs (its memory space and its
// backend), and the part of a function that does not depend on its types
// (function_core: the call's plan, its steps, graphs; function.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include <cstdlib>

#include "fusor/function.hpp"

namespace fusor {
namespace detail {

FUSOR_RUNTIME memory_space space_of_graph(graph& g, const std::string& who) {
  const graph_shared* first = nullptr;
  for (const auto& v : g.shared)
    if (!first && !v.record->is_constant()) first = &v;
  const memory_space s = first ? first->space : host;
  for (const auto& v : g.shared)
    if (!v.record->is_constant() && v.space != s) {
      std::string list;
      for (const auto& w : g.shared)
        if (!w.record->is_constant()) list += (list.empty() ? "" : ", ") + w.describe() + " on " + w.space.str();
      throw space_error(who + ": its shared variables live in different memory spaces (" + list +
                        "); one function runs in one space: move them with set_value or create them in one space");
    }
  for (auto& v : g.shared)
    if (v.record->is_constant() && v.space != s) {
      v.record = v.record->constant_in(s);
      v.space = s;
    }
  return s;
}

FUSOR_RUNTIME void target(program& prog, const memory_space& space, const std::string& who) {
  if (host_accessible(space)) {
    prog.target(backend_id::host, space, &cpu::backend::prepare_plan);
    return;
  }
  const gpu::missing_device_kernels missing = gpu::find_missing_kernels(prog.graph());
  auto list = [](const std::vector<std::string>& texts) {
    std::string out;
    for (const auto& t : texts) out += "\n  " + t;
    return out;
  };
  // The first line says what to write: it is the line a user reads.
  if (!missing.unregistered.empty())
    throw kernel_not_instantiated_error(
        who + " runs on " + space.str() +
        ", but no device kernel was compiled into this program for it: name its type once in "
        "FUSOR_DEVICE_INSTANTIATE (how: below). Missing:" +
        list(missing.unregistered) + "\n" + std::string(gpu::instantiate_advice));
  if (!device_runtime_for(space).emulated() && !missing.without_cuda.empty())
    throw kernel_not_instantiated_error(
        who + " runs on " + space.str() +
        ", but no CUDA kernel was compiled into this program for it: name its type in FUSOR_DEVICE_INSTANTIATE "
        "in a .cu file nvcc compiles (how: below). Missing:" +
        list(missing.without_cuda) +
        "\nName its type in a .cu file of the program, compiled by nvcc: #include <fusor/device.hpp> and "
        "FUSOR_DEVICE_INSTANTIATE(decltype(f)) (see docs/gpu.md)");
  prog.target(backend_id::device, space, &gpu::backend::prepare_plan);
}

FUSOR_RUNTIME void place(program& prog, call_facts& facts, const std::string& who) {
  facts.space = space_of_graph(prog.graph(), who);
  facts.backend = host_accessible(facts.space) ? backend_id::host : backend_id::device;
  target(prog, facts.space, who);
}

FUSOR_RUNTIME function_core::~function_core() { drop_graphs(); }

FUSOR_RUNTIME void function_core::check_inputs_distinct() const {
  const auto& in = prog_.graph().inputs;
  for (std::size_t a = 0; a < in.size(); ++a)
    for (std::size_t b = a + 1; b < in.size(); ++b)
      if (in[a].id == in[b].id)
        throw value_error("fusor::function: input '" + in[a].name + "' is listed twice in inputs(...), at positions " +
                          std::to_string(a) + " and " + std::to_string(b) + " (R40)");
}

FUSOR_RUNTIME void function_core::check_graph_reads(std::size_t inputs) const {
  const fusor::graph& g = prog_.graph();
  for (std::size_t k = 0; k < g.givens.size(); ++k) {
    bool read = false;
    for (const auto& n : g.nodes) read = read || (n.kind == node_kind::given && static_cast<std::size_t>(n.leaf) == k);
    if (!read)
      throw value_error("fusor::function: givens(...) replaces " + g.givens[k].name +
                        ", which no output or update expression reads");
  }
  if (g.inputs.size() != inputs)
    throw value_error("fusor::function: an expression reads input '" + g.inputs[inputs].name +
                      "', which is not among the function's inputs(...)");
}

FUSOR_RUNTIME void function_core::refuse_repeated_update(const variable_base& variable) {
  throw value_error("fusor::function: " + variable.describe() + " has two update expressions (R54)");
}

FUSOR_RUNTIME void function_core::refuse_update_pattern(const variable_base& variable, const std::string& expression,
                                                        const std::vector<bool>& got, const std::vector<bool>& want) {
  auto pattern = [](const std::vector<bool>& p) {
    std::string s = "(";
    for (std::size_t i = 0; i < p.size(); ++i) s += (i ? ", " : "") + std::string(p[i] ? "True" : "False");
    return s + (p.size() == 1 ? ",)" : ")");
  };
  throw value_error("fusor::function: the update of " + variable.describe() + ", " + expression +
                    ", has broadcastable pattern " + pattern(got) + " but the variable's is " + pattern(want) +
                    ": an update must keep the variable's type (R55). Give the variable the same pattern, or make "
                    "the expression vary along those axes (a dtype difference is fixed with fusor::cast<E>(...))");
}

FUSOR_RUNTIME std::string function_core::output_description(std::size_t k) const {
  const fusor::graph& g = prog_.graph();
  return "borrowed output " + std::to_string(k) + " (" + g[g.outputs[k].node].text + ")";
}

FUSOR_RUNTIME void function_core::finish_build(std::size_t inputs) {
  place(prog_, facts_, "fusor::function");
  facts_.inputs.resize(inputs);
  if (const char* env = std::getenv("FUSOR_PROFILE"); env && *env && *env != '0') profiling_ = true;
}

FUSOR_RUNTIME function_core::call_guard::call_guard(std::atomic<bool>& busy) : busy_(busy) {
  if (busy_.exchange(true, std::memory_order_acquire))
    throw error("fusor::function: called while another call of the same function object is running; one "
                "function object must not be called from two threads at once");
}

FUSOR_RUNTIME std::string function_core::plan() const {
  const auto* e = prog_.current();
  return e ? e->plan.str(prog_.graph()) : std::string("no plan yet: the function has not been called");
}

FUSOR_RUNTIME const fusor::plan& function_core::last_plan() const {
  const auto* e = prog_.current();
  if (!e) throw value_error("fusor::function: no plan yet: the function has not been called");
  return e->plan;
}

FUSOR_RUNTIME bool function_core::steady() const noexcept {
  if (!steady_.entry) return false;
  const input_facts* now = facts_.inputs.data();
  const input_facts* then = steady_.inputs.data();
  for (std::size_t i = 0, n = steady_.inputs.size(); i < n; ++i) {
    const auto& a = now[i];
    const auto& b = then[i];
    if (a.data != b.data || a.bytes != b.bytes || a.source != b.source || a.writable != b.writable ||
        !(a.shape == b.shape) || a.space != b.space || !(a.layout == b.layout))
      return false;
  }
  for (const auto& v : steady_.versions)
    if (v.record->storage_version() != v.version) return false;
  for (const auto& v : steady_.viewed)
    if (v.viewed(v.record) != v.was) return false;
  return true;
}

FUSOR_RUNTIME program::entry& function_core::replan() {
  steady_.entry = nullptr;
  const auto& g = prog_.graph();
  read_shared_facts(g, facts_);
  auto& entry = prog_.plan_for(facts_);
  prog_.bind_slots(entry, facts_);
  steady_.inputs = facts_.inputs;
  steady_.versions.clear();
  for (const auto& s : g.shared) steady_.versions.push_back({s.record, s.record->storage_version()});
  steady_.viewed.clear();
  for (const auto& u : g.updates) {
    const auto j = static_cast<std::size_t>(u.variable);
    steady_.viewed.push_back({g.shared[j].viewed, g.shared[j].record, facts_.shared[j].viewed});
  }
  steady_.entry = &entry;
  return entry;
}

FUSOR_RUNTIME program::entry& function_core::plan_call() {
  unshare_writable(facts_);
  check_spaces(facts_, prog_.graph());
  return steady() ? *steady_.entry : replan();
}

FUSOR_RUNTIME void function_core::run_steps(program::entry& e, step_hook before) {
  if (!(graphs_on_ && e.warm && !profiling_ && facts_.backend == backend_id::device && run_as_graph(e, before)))
    prog_.run(e, profiling_ ? &profile_ : nullptr, before);
  e.warm = true;
}

FUSOR_RUNTIME bool function_core::run_as_graph(program::entry& e, step_hook before) {
  if (!e.prepared->capturable() || uncapturable_plan_ == e.id) return false;
  device_runtime& rt = device_runtime_for(facts_.space);
  const int dev = facts_.space.device;
  const auto& slots = prog_.slots();
  for (const auto& g : graphs_)
    if (g.plan == e.id && g.slots == slots) {
      prog_.run_hooks(e, before);
      e.prepared->bind(slots.data());
      rt.graph_launch(dev, g.exec);
      ++graph_replays_;
      return true;
    }
  rt.capture_begin(dev);
  try {
    prog_.run(e, nullptr, before);
  } catch (...) {
    if (void* g = rt.capture_end(dev)) rt.graph_destroy(dev, g);
    throw;
  }
  void* exec = rt.capture_end(dev);
  if (!exec) {
    uncapturable_plan_ = e.id;
    return false;
  }
  if (graphs_.size() == 2) {
    graphs_.front().runtime->graph_destroy(dev, graphs_.front().exec);
    graphs_.erase(graphs_.begin());
  }
  graphs_.push_back(captured_graph{e.id, slots, &rt, exec});
  ++graphs_captured_;
  rt.graph_launch(dev, exec);
  return true;
}

FUSOR_RUNTIME void function_core::drop_graphs() noexcept {
  for (const auto& g : graphs_) g.runtime->graph_destroy(facts_.space.device, g.exec);
  graphs_.clear();
}

}  // namespace detail
}  // namespace fusor
