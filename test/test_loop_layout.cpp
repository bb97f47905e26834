// The host loops' set-up, tested on its own: what an elementwise loop and a
// reduction decide once per plan from their leaves' views (merged axes,
// broadcast strides, vectorised or dense rows, short rows exchanged, streamed
// stores, rows accumulated in blocks). These are ordinary functions over a
// table of leaves (backend/cpu/loop.hpp, reduce.hpp), so the leaves here are
// made by hand: no expression, no kernel. Each expected value follows from
// the rule the header states, not from running the code; the loops' results
// are tested through expressions elsewhere (test_expr_*.cpp).
#include <doctest/doctest.h>

#include <array>
#include <cstddef>
#include <initializer_list>

#include <fusor/fusor.hpp>

namespace loop_layout_test {
using fusor::dims;
using fusor::index_t;
using fusor::max_rank;
using fusor::cpu::leaf_table;
using fusor::cpu::leaf_view;

using strides_t = std::array<index_t, max_rank>;

strides_t strides(std::initializer_list<index_t> s) {
  strides_t r{};
  std::size_t d = 0;
  for (index_t v : s) r[d++] = v;
  return r;
}
/// A leaf reading a view of `shape` with element strides `own`.
leaf_view view(dims shape, std::initializer_list<index_t> own) {
  leaf_view l;
  l.view_shape = shape;
  l.view_strides = strides(own);
  return l;
}
/// A row-major view of `shape`.
leaf_view contiguous(dims shape) {
  leaf_view l;
  l.view_shape = shape;
  l.view_strides = fusor::c_strides(shape);
  return l;
}
/// The traits of a loop writing elements of `bytes` bytes, `width` to a batch.
fusor::cpu::vector_traits traits(std::size_t width, std::size_t bytes, bool exchange = false, bool streams = true) {
  fusor::cpu::vector_traits k;
  k.batches = true;
  k.exchange = exchange;
  k.streams = streams;
  k.width = width;
  k.bytes = bytes;
  return k;
}
fusor::cpu::elementwise_layout elementwise(const leaf_table& t, const fusor::cpu::vector_traits& k, const dims& shape,
                                           bool streamable = false, const strides_t* out = nullptr) {
  fusor::cpu::elementwise_layout l;
  fusor::cpu::prepare_elementwise(l, t, k, shape, streamable, out, true);
  return l;
}
fusor::cpu::reduce_layout reduction(const leaf_table& t, const dims& keep, const dims& in, std::size_t width = 16) {
  fusor::cpu::reduce_layout l;
  fusor::cpu::prepare_reduction(l, t, keep, in, true, width, 4);
  return l;
}
}  // namespace loop_layout_test

using namespace loop_layout_test;

TEST_CASE("loop layout: a leaf's view is right-aligned on the loop's shape, missing and unit axes stride 0") {
  leaf_view row = contiguous({8});
  leaf_view column = view({4, 1}, {1, 1});
  leaf_view scalar = view({}, {});
  fusor::cpu::broadcast_leaves(leaf_table{&row, &column, &scalar}, dims{4, 8});
  CHECK(row.strides[0] == 0);
  CHECK(row.strides[1] == 1);
  CHECK(column.strides[0] == 1);
  CHECK(column.strides[1] == 0);
  CHECK(scalar.strides[0] == 0);
  CHECK(scalar.strides[1] == 0);
}

TEST_CASE("loop layout: contiguous leaves merge into one dense, vectorised row") {
  leaf_view a = contiguous({4, 8}), b = contiguous({4, 8});
  const auto l = elementwise({&a, &b}, traits(8, 4), dims{4, 8});
  CHECK_FALSE(l.empty);
  CHECK(l.space.rank == 1);
  CHECK(l.space.extent[0] == 32);
  CHECK(l.n == 32);
  CHECK(l.out_inner == 1);
  CHECK(l.vectorise);
  CHECK(l.dense_rows);
  CHECK_FALSE(l.exchanged);
  CHECK_FALSE(l.stream);
  CHECK(l.disjoint);
  CHECK(a.inner == 1);
  CHECK(b.inner == 1);
}

TEST_CASE("loop layout: a leaf broadcast along the row keeps the axes apart and the rows vectorised, not dense") {
  leaf_view x = contiguous({4, 8});
  leaf_view m = view({4, 1}, {1, 1});
  const auto l = elementwise({&x, &m}, traits(8, 4), dims{4, 8});
  CHECK(l.space.rank == 2);
  CHECK(l.space.extent[0] == 4);
  CHECK(l.n == 8);
  CHECK(m.inner == 0);
  CHECK(l.vectorise);
  CHECK_FALSE(l.dense_rows);
}

TEST_CASE("loop layout: axes merge where every leaf and the output traverse them as one") {
  // (2, 3, 4) with a leaf of shape (3, 4) broadcast along the first axis: the
  // last two axes are one run of 12 for both, the first is not.
  leaf_view x = contiguous({2, 3, 4});
  leaf_view y = contiguous({3, 4});
  const auto l = elementwise({&x, &y}, traits(8, 4), dims{2, 3, 4});
  CHECK(l.space.rank == 2);
  CHECK(l.space.extent[0] == 2);
  CHECK(l.space.extent[1] == 12);
  CHECK(x.strides[0] == 12);
  CHECK(y.strides[0] == 0);
  CHECK(l.dense_rows);
}

TEST_CASE("loop layout: a transposed leaf, a strided output or an evaluator without batches runs the scalar loop") {
  SUBCASE("a leaf stepping by 4 along the row") {
    leaf_view x = contiguous({4, 8});
    leaf_view t = view({4, 8}, {1, 4});
    const auto l = elementwise({&x, &t}, traits(8, 4), dims{4, 8});
    CHECK(t.inner == 4);
    CHECK_FALSE(l.vectorise);
    CHECK_FALSE(l.dense_rows);
  }
  SUBCASE("an update of every other element") {
    leaf_view x = contiguous({4, 8});
    const strides_t out = strides({16, 2});
    const auto l = elementwise({&x}, traits(8, 4), dims{4, 8}, false, &out);
    CHECK(l.out_inner == 2);
    CHECK_FALSE(l.vectorise);
  }
  SUBCASE("no batch form") {
    leaf_view x = contiguous({4, 8});
    auto k = traits(8, 4);
    k.batches = false;
    const auto l = elementwise({&x}, k, dims{4, 8});
    CHECK_FALSE(l.vectorise);
    CHECK_FALSE(l.dense_rows);
  }
}

TEST_CASE("loop layout: rows shorter than a batch are exchanged with the axis outside them, when it pays") {
  // A softmax's shift: z (64, 10) minus its rows' maximum m (64, 1).
  leaf_view z = contiguous({64, 10});
  leaf_view m = view({64, 1}, {1, 1});
  SUBCASE("a transcendental tree, batches of 16") {
    const auto l = elementwise({&z, &m}, traits(16, 4, true), dims{64, 10}, true);
    CHECK(l.exchanged);
    CHECK(l.space.extent[0] == 10);
    CHECK(l.space.extent[1] == 64);
    CHECK(l.n == 64);
    CHECK(l.out_inner == 10);  // each batch stored lane by lane, a row's length apart
    CHECK(z.inner == 10);
    CHECK(m.inner == 1);
    CHECK(l.vectorise);
    CHECK_FALSE(l.dense_rows);
    CHECK_FALSE(l.stream);
  }
  SUBCASE("plain arithmetic: not exchanged") {
    const auto l = elementwise({&z, &m}, traits(16, 4, false), dims{64, 10});
    CHECK_FALSE(l.exchanged);
    CHECK(l.n == 10);
    CHECK(z.inner == 1);
    CHECK(m.inner == 0);
    CHECK(l.vectorise);
  }
  SUBCASE("rows as long as a batch: not exchanged") {
    const auto l = elementwise({&z, &m}, traits(8, 4, true), dims{64, 10});
    CHECK_FALSE(l.exchanged);
    CHECK(l.n == 10);
  }
  SUBCASE("a block larger than the per-core cache: not exchanged") {
    leaf_view big = contiguous({100000, 10});
    leaf_view big_m = view({100000, 1}, {1, 1});
    const auto l = elementwise({&big, &big_m}, traits(16, 4, true), dims{100000, 10});
    CHECK_FALSE(l.exchanged);
    CHECK(l.n == 10);
  }
}

TEST_CASE("loop layout: an output larger than the last-level cache is streamed, only where allowed") {
  // 2^28 doubles, 2 GiB: larger than any last-level cache. Nothing is read.
  const dims shape{std::size_t{1} << 28};
  leaf_view x = contiguous(shape);
  CHECK(elementwise({&x}, traits(8, 8), shape, true).stream);
  CHECK_FALSE(elementwise({&x}, traits(8, 8), shape, false).stream);  // a temporary read back soon
  CHECK_FALSE(elementwise({&x}, traits(8, 8, false, false), shape, true).stream);  // no non-temporal store
  leaf_view small = contiguous({64});
  CHECK_FALSE(elementwise({&small}, traits(8, 8), dims{64}, true).stream);
}

TEST_CASE("loop layout: an empty shape prepares nothing") {
  leaf_view x = contiguous({0, 8});
  x.strides = strides({7, 7});
  const auto l = elementwise({&x}, traits(8, 4), dims{0, 8});
  CHECK(l.empty);
  CHECK_FALSE(l.vectorise);
  CHECK(x.strides[0] == 7);  // untouched
}

TEST_CASE("reduction layout: a bias's gradient, sum over the leading axis, accumulates rows in blocks") {
  leaf_view d = contiguous({64, 128});
  const auto l = reduction({&d}, dims{1, 128}, dims{64, 128});
  CHECK(l.nout == 128);
  CHECK(l.space.rank == 2);
  CHECK(l.n == 128);
  CHECK(l.acc_inner == 1);
  CHECK(l.acc[0] == 0);
  CHECK(l.vectorise);
  CHECK(l.leaves_dense);
  CHECK(l.by_blocks);
  CHECK_FALSE(l.strided_rows);
}

TEST_CASE("reduction layout: a sum over the row reduces each row to one element") {
  leaf_view x = contiguous({64, 128});
  const auto l = reduction({&x}, dims{64, 1}, dims{64, 128});
  CHECK(l.nout == 64);
  CHECK(l.n == 128);
  CHECK(l.acc_inner == 0);
  CHECK(l.acc[0] == 1);
  CHECK(l.leaves_dense);
  CHECK_FALSE(l.by_blocks);
  CHECK_FALSE(l.strided_rows);
}

TEST_CASE("reduction layout: a column factor is broadcast along the row: vectorised, not dense") {
  leaf_view x = contiguous({64, 128});
  leaf_view c = view({64, 1}, {1, 1});
  const auto l = reduction({&x, &c}, dims{1, 128}, dims{64, 128});
  CHECK(c.inner == 0);
  CHECK(l.vectorise);
  CHECK_FALSE(l.leaves_dense);
  CHECK(l.by_blocks);
}

TEST_CASE("reduction layout: a reduction over everything is one merged row") {
  leaf_view x = contiguous({64, 128});
  const auto l = reduction({&x}, dims{1, 1}, dims{64, 128});
  CHECK(l.nout == 1);
  CHECK(l.space.rank == 1);
  CHECK(l.n == 64 * 128);
  CHECK(l.acc_inner == 0);
  CHECK(l.leaves_dense);
  CHECK_FALSE(l.by_blocks);
}

TEST_CASE("reduction layout: short reduced rows run along the kept axis, accumulated in blocks") {
  // A softmax's maximum over ten classes for 64 samples, batches of 16.
  leaf_view z = contiguous({64, 10});
  const auto l = reduction({&z}, dims{64, 1}, dims{64, 10});
  CHECK(l.strided_rows);
  CHECK(l.space.extent[0] == 10);
  CHECK(l.n == 64);
  CHECK(l.acc_inner == 1);
  CHECK(z.inner == 10);
  CHECK_FALSE(l.leaves_dense);
  CHECK(l.by_blocks);
  SUBCASE("with batches of 8 the rows are long enough") {
    leaf_view z8 = contiguous({64, 10});
    const auto l8 = reduction({&z8}, dims{64, 1}, dims{64, 10}, 8);
    CHECK_FALSE(l8.strided_rows);
    CHECK(l8.acc_inner == 0);
    CHECK(l8.n == 10);
  }
}

TEST_CASE("reduction layout: short rows kept whole are exchanged and written a row's length apart") {
  // A gradient's sum_to onto its own shape (64, 10), with a leaf (1, 10)
  // broadcast down the columns so that the axes cannot merge.
  leaf_view x = contiguous({64, 10});
  leaf_view b = contiguous({1, 10});
  const auto l = reduction({&x, &b}, dims{64, 10}, dims{64, 10});
  CHECK(l.strided_rows);
  CHECK(l.n == 64);
  CHECK(l.acc_inner == 10);
  CHECK(x.inner == 10);
  CHECK(b.inner == 0);
  CHECK_FALSE(l.by_blocks);
}

TEST_CASE("reduction layout: an empty operand prepares its output's size alone") {
  leaf_view x = contiguous({0, 5});
  const auto l = reduction({&x}, dims{1, 5}, dims{0, 5});
  CHECK(l.nout == 5);
  CHECK(l.n == 0);
  CHECK_FALSE(l.vectorise);
  CHECK_FALSE(l.by_blocks);
}
