// fusor/mpi.hpp — several processes over MPI: data-parallel training and
// distributed stencils in a few words.
//
//   #include <fusor/fusor.hpp>
//   #include <fusor/mpi.hpp>        // and link MPI (meson: dependency('mpi', language : 'cpp'))
//
//   // Data parallelism: each process's gradient, averaged over the processes.
//   auto step = fusor::function(fusor::inputs(x, y),
//       fusor::updates(fusor::update(w, w - lr * fusor::allreduce(gw, MPI_COMM_WORLD, fusor::reduce_op::mean))));
//
//   // Domain decomposition: each process its slab of u, ghosts from its neighbours.
//   auto u = fusor::partitioned_shared(u0, MPI_COMM_WORLD, {.axis = 0, .ghost = 1, .name = "u"});
//   ... fusor::view(u.halo(), ...) in the stencil, fusor::update(fusor::view(u.local(), ...), ...) ...
//
// `fusor::allreduce` (mpi/allreduce.hpp) and a partitioned variable's halo
// exchange (mpi/partitioned.hpp) are expressions: the plan shows each as a
// communication step (operand in the arena, result in a temporary: a steady
// call allocates nothing), and every call agrees first, in one small
// collective, on the shapes and dtypes it will move: processes whose calls
// differ (another batch shape, a refused argument on one of them) all stop
// with a fusor::error naming the process and the shapes, instead of waiting
// forever or exchanging mismatched buffers; a failed call changes nothing on
// any process (expr/collective.hpp).
//
// Optional: only a program that includes this header needs MPI. Open MPI and
// MPICH both work (only the MPI standard's C API is used).
#pragma once

#include "fusor/mpi/transport.hpp"
#include "fusor/mpi/allreduce.hpp"
#include "fusor/mpi/partitioned.hpp"
