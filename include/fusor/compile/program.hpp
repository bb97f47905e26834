// fusor/compile/program.hpp — a graph with its plans: the part of a compiled
// function (and of eval / assign) that does not depend on C++ types.
//
// A call gives the facts it was made with; `plan_for` finds the plan built for
// the same facts (a small cache, most recent first: a function called with two
// alternating batch shapes keeps both plans) or builds and prepares one.
// `bind_slots` points the slot table at this call's memory: the arguments, the
// shared variables' current buffers, the arena's temporaries. `run` executes
// the kernel steps in order. Outputs and spare buffers are the typed caller's
// to provide (it owns their C++ types); installs and transfers are its commit.
//
// The program does not know backends: it is given, when it is made, the
// function that prepares a plan's steps for the backend of its memory space
// (the host's, or a device's), and it keeps its arena in that space.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "fusor/compile/collective_step.hpp"
#include "fusor/compile/graph.hpp"
#include "fusor/compile/plan.hpp"
#include "fusor/compile/profile.hpp"
#include "fusor/memory/buffer.hpp"

namespace fusor {

/// A plan's steps, prepared by a backend.
class prepared_plan {
 public:
  virtual ~prepared_plan() = default;
  /// Runs kernel step i (not an install or a transfer: those are the commit's).
  virtual void run(std::size_t i, void* const* slots) = 0;
  /// Waits until the steps run so far have finished (a device's run
  /// asynchronously): what a profile times.
  virtual void synchronize() {}
  /// Whether every step can be captured into a graph and replayed (a device's
  /// steps that do not copy to or from the host).
  virtual bool capturable() const { return false; }
  /// Points every step at this slot table without running anything (before a
  /// captured graph is replayed).
  virtual void bind(void* const* slots) { (void)slots; }
  /// The spare buffers of the next run are new ones (allocated for it), not
  /// the buffers the variables held before the previous call: a step that
  /// skips copying into a spare what that buffer already holds (the host's
  /// copy of the rest of a view's variable, compile/region.hpp) must copy.
  /// A new buffer can sit at the address of one freed since, so the address
  /// alone does not tell.
  virtual void spares_replaced() noexcept {}
};

/// What a backend gives a program: how to prepare a plan's steps.
using prepare_plan_fn = std::unique_ptr<prepared_plan> (*)(const graph&, const plan&);

/// What a program runs before each kernel step: a function and its context.
/// Not a template parameter: `program::run` is then one function for every
/// caller (each eval, assign and function type had its own copy), compiled
/// once in libfusor in the compiled-runtime mode.
struct step_hook {
  void (*call)(void* context, const step_info& step) = nullptr;
  void* context = nullptr;

  void operator()(const step_info& st) const {
    if (call) call(context, st);
  }
};

class program {
 public:
  /// A plan and its steps prepared for the backend.
  struct entry {
    fusor::plan plan;
    std::unique_ptr<prepared_plan> prepared;
    std::vector<std::size_t> kernel_steps;  ///< the steps that run a kernel, in order
    /// Where the processes agree, in a plan with collectives (compile/collective_step.hpp).
    detail::agreement_points agreements;
    std::uint64_t id = 0;    ///< unique within the program (graphs are keyed by it)
    bool warm = false;       ///< has run once (its kernels loaded, its libraries initialised)
  };

  program() = default;
  program(program&&) = default;
  program& operator=(program&&) = default;
  /// Out of line (compile/impl/program.ipp): its plans' destructors are
  /// compiled once, not in every unit.
  FUSOR_RUNTIME ~program();
  program(backend_id backend, memory_space space, prepare_plan_fn prepare)
      : backend_(backend), space_(space), prepare_(prepare) {}

  /// Runs the program on the backend of `space` from now on (before any plan
  /// is built: plans are made for one backend).
  void target(backend_id backend, memory_space space, prepare_plan_fn prepare) {
    backend_ = backend;
    space_ = space;
    prepare_ = prepare;
    cache_.clear();
  }

  backend_id backend() const noexcept { return backend_; }
  const memory_space& space() const noexcept { return space_; }

  /// How many plans are kept (different shapes, dtypes or aliasing).
  static constexpr std::size_t max_plans = 4;

  fusor::graph& graph() noexcept { return graph_; }
  const fusor::graph& graph() const noexcept { return graph_; }

  /// The plan for these facts: from the cache, or built (and prepared) now.
  /// Building may throw (a shape error, an allocation); nothing is changed then.
  entry& plan_for(const call_facts& facts) {
    if (!cache_.empty() && cache_.front()->plan.sig.matches(facts)) return *cache_.front();  // every steady call
    return find_or_build(facts);
  }

  /// The plan of the last call, or null before the first.
  const entry* current() const noexcept { return cache_.empty() ? nullptr : cache_.front().get(); }

  /// Points the slot table at this call's memory. Grows the arena when the
  /// plan needs more (may throw bad_alloc: before anything is written).
  void bind_slots(const entry& e, const call_facts& facts) {
    const fusor::plan& p = e.plan;
    if (arena_.bytes() < p.arena_bytes || arena_.space() != p.space) {
      arena_ = buffer();  // the old arena goes first: it may be most of a device's memory
      arena_ = buffer::allocate(p.arena_bytes, p.space);
      ++arena_allocations_;
    }
    slots_.resize(p.slots.size());
    for (std::size_t s = 0; s < p.slots.size(); ++s) {
      const slot_info& slot = p.slots[s];
      switch (slot.kind) {
        case slot_kind::input:
          slots_[s] = const_cast<std::byte*>(facts.inputs[static_cast<std::size_t>(slot.owner)].data);
          break;
        case slot_kind::shared:
          slots_[s] = const_cast<std::byte*>(facts.shared[static_cast<std::size_t>(slot.owner)].data);
          break;
        case slot_kind::temporary: slots_[s] = arena_.data() + slot.offset; break;
        case slot_kind::output:
        case slot_kind::spare: slots_[s] = nullptr; break;  // the caller's
      }
    }
  }

  void*& slot(int s) noexcept { return slots_[static_cast<std::size_t>(s)]; }
  const std::vector<void*>& slots() const noexcept { return slots_; }

  /// Calls `before(step)` for every kernel step, running none (a captured
  /// graph runs them: what must happen before each step still happens).
  FUSOR_RUNTIME void run_hooks(const entry& e, step_hook before);

  /// Runs the kernel steps in order. `before(step)` is called before each (a
  /// borrowed output's views go stale before its buffer is rewritten). With a
  /// profile, each step's time and bytes are recorded under its label, and
  /// the step in the profile's trace.
  FUSOR_RUNTIME void run(entry& e, profile_report* profile, step_hook before = {});

  std::size_t arena_bytes() const noexcept { return arena_.bytes(); }
  std::size_t arena_allocations() const noexcept { return arena_allocations_; }
  std::size_t plans_built() const noexcept { return plans_built_; }
  /// Gives the arena back (the next call allocates it again).
  void release_arena() noexcept { arena_ = buffer(); }

 private:
  /// plan_for beyond its most recent plan (compile/impl/program.ipp).
  FUSOR_RUNTIME entry& find_or_build(const call_facts& facts);
  /// The processes' agreement before step i (i = the step count: after the last).
  FUSOR_RUNTIME void agree(entry& e, std::size_t i);

  backend_id backend_ = backend_id::host;
  memory_space space_ = host;
  prepare_plan_fn prepare_ = nullptr;
  fusor::graph graph_;
  std::vector<std::unique_ptr<entry>> cache_;
  buffer arena_;
  std::vector<void*> slots_;
  std::size_t arena_allocations_ = 0;
  std::size_t plans_built_ = 0;
  std::uint64_t plans_made_ = 0;
};

}  // namespace fusor

#ifndef FUSOR_SEPARATE_COMPILATION
#include "fusor/compile/impl/program.ipp"
#endif
