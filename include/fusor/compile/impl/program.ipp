// fusor/compile/impl/program.ipp — a program's plan cache beyond its most
// recent plan: found among the others, or built by the planner and prepared.
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include <algorithm>
#include <chrono>
#include <memory>

#include "fusor/compile/planner.hpp"
#include "fusor/compile/program.hpp"

namespace fusor {

FUSOR_RUNTIME program::~program() = default;

FUSOR_RUNTIME program::entry& program::find_or_build(const call_facts& facts) {
  for (std::size_t i = 1; i < cache_.size(); ++i)  // plan_for tried the first
    if (cache_[i]->plan.sig.matches(facts)) {
      std::rotate(cache_.begin(), cache_.begin() + static_cast<std::ptrdiff_t>(i),
                  cache_.begin() + static_cast<std::ptrdiff_t>(i) + 1);
      return *cache_.front();
    }
  auto e = std::make_unique<entry>();
  e->plan = make_plan(graph_, facts);
  e->prepared = prepare_(graph_, e->plan);
  e->id = ++plans_made_;
  for (std::size_t i = 0; i < e->plan.steps.size(); ++i)
    if (e->plan.steps[i].runs_kernel()) e->kernel_steps.push_back(i);
  e->agreements = detail::agreements_of(graph_, e->plan);
  if (cache_.size() == max_plans) cache_.pop_back();
  cache_.insert(cache_.begin(), std::move(e));
  ++plans_built_;
  return *cache_.front();
}

FUSOR_RUNTIME void program::run_hooks(const entry& e, step_hook before) {
  for (const std::size_t i : e.kernel_steps) before(e.plan.steps[i]);
}

FUSOR_RUNTIME void program::run(entry& e, profile_report* profile, step_hook before) {
  const auto& steps = e.plan.steps;
  void* const* slots = slots_.data();
  prepared_plan& prepared = *e.prepared;
  if (!profile && e.agreements.before.empty() && !e.agreements.at_end) {
    // The steady call of almost every program: nothing to time, nothing to
    // agree on; the loop every call pays for, so it reads nothing else.
    if (before.call)
      for (const std::size_t i : e.kernel_steps) {
        before.call(before.context, steps[i]);
        prepared.run(i, slots);
      }
    else
      for (const std::size_t i : e.kernel_steps) prepared.run(i, slots);
    return;
  }
  const bool agreeing = !e.agreements.before.empty();
  if (profile) profile->begin_call();
  for (const std::size_t i : e.kernel_steps) {
    if (agreeing && e.agreements.before[i]) agree(e, i);
    before(steps[i]);
    if (!profile) {
      prepared.run(i, slots);
      continue;
    }
    const auto t0 = std::chrono::steady_clock::now();
    prepared.run(i, slots);
    prepared.synchronize();
    profile->record(steps[i].label, i, t0,
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(), steps[i].bytes);
  }
  if (e.agreements.at_end) agree(e, steps.size());
}

FUSOR_RUNTIME void program::agree(entry& e, std::size_t i) {
  e.prepared->synchronize();  // a device's steps so far have run (and failed, if one did)
  graph_.collectives.agree(e.agreements.signature, e.agreements.what, e.agreements.again_after(i));
}

}  // namespace fusor
