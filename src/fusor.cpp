// libfusor: fusor's run-time half compiled once — the planner, shape
// inference, the plan cache and plan printing (the .ipp files beside their
// headers). A program whose units all define FUSOR_SEPARATE_COMPILATION links
// this library instead of compiling that code in every unit; header-only use
// (the default) needs none of it.
#ifndef FUSOR_SEPARATE_COMPILATION
#error "libfusor is compiled with FUSOR_SEPARATE_COMPILATION (the build defines it)"
#endif

#include "fusor/core/impl/dims.ipp"
#include "fusor/core/impl/collapse.ipp"
#include "fusor/memory/impl/space.ipp"
#include "fusor/memory/impl/device.ipp"
#include "fusor/memory/impl/buffer.ipp"
#include "fusor/shared/impl/cast.ipp"
#include "fusor/shared/impl/variable.ipp"
#include "fusor/expr/impl/text.ipp"
#include "fusor/expr/impl/leaves.ipp"
#include "fusor/expr/impl/collective.ipp"
#include "fusor/compile/impl/graph.ipp"
#include "fusor/compile/impl/plan.ipp"
#include "fusor/compile/impl/profile.ipp"
#include "fusor/compile/impl/planner.ipp"
#include "fusor/compile/impl/program.ipp"
#include "fusor/compile/impl/shapes.ipp"
#include "fusor/impl/function.ipp"
#include "fusor/impl/eval.ipp"
#include "fusor/backend/cpu/impl/loop.ipp"
#include "fusor/backend/cpu/impl/reduce.ipp"
#include "fusor/backend/cpu/impl/kernels.ipp"
#include "fusor/backend/cpu/impl/backend.ipp"
#include "fusor/backend/gpu/impl/registry.ipp"
#include "fusor/backend/gpu/impl/backend.ipp"
