// fusor/compile/impl/program.ipp — a program's plan cache beyond its most
// recent plan: found among the others, or built by the planner and prepared.
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include <algorithm>
#include <memory>

#include "fusor/compile/planner.hpp"
#include "fusor/compile/program.hpp"

namespace fusor {

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
  for (const step_info& s : e->plan.steps) e->runs.push_back(s.runs_kernel());
  e->agreements = detail::agreements_of(graph_, e->plan);
  if (cache_.size() == max_plans) cache_.pop_back();
  cache_.insert(cache_.begin(), std::move(e));
  ++plans_built_;
  return *cache_.front();
}

}  // namespace fusor
