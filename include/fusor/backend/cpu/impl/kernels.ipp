// fusor/backend/cpu/impl/kernels.ipp — what a kernel's prepare does whatever
// its evaluator is (kernels.hpp): a step's destination and the geometry its
// loop is set up for. Part of fusor's run-time half: included by its header
// in header-only use, compiled once into libfusor under
// FUSOR_SEPARATE_COMPILATION. Out of each kernel's prepare, because that is
// instantiated once per evaluator type, where an unoptimised build compiles
// (and a sanitizer instruments) every line of it again.
#pragma once

#include <algorithm>

#include "fusor/backend/cpu/kernels.hpp"

namespace fusor::cpu {

FUSOR_RUNTIME void prepare_group(kernel_step& st, elementwise_layout& loop, const vector_traits& traits,
                                 const plan& p, const step_info& s) {
  st.dest = s.dest;
  // An update of a view writes its region of dest, through its strides.
  const bool region = s.region.slot >= 0;
  const dims& shape = region ? s.region.shape : p.shapes[static_cast<std::size_t>(s.node)];
  // An output or an update that this step does not read is streamed when it
  // is larger than the cache (a materialised temporary is read back: not).
  const bool disjoint = !s.in_place && std::find(s.reads.begin(), s.reads.end(), s.dest) == s.reads.end();
  const bool streamable = (s.kind == step_kind::output || s.kind == step_kind::update) && disjoint;
  if (region) st.dest_offset = s.region.offset;
  prepare_elementwise(loop, st.tables[0], traits, shape, streamable, region ? &s.region.strides : nullptr, disjoint);
}

FUSOR_RUNTIME void describe_reduction(kernel_step& st, const graph_node& n, const plan& p, const step_info& s) {
  st.dest = s.dest;
  st.scratch = s.scratch;
  st.what = n.text;
  const fusor::detail::reduce_geometry r = fusor::detail::reduction_of(n, p.shapes);
  st.in = r.in;
  st.keep = fusor::detail::kept_shape(st.in, r.mask);
}

}  // namespace fusor::cpu
