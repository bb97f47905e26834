// Buffers: alignment, the three ownerships, reference counting, overlap.
#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

#include <fusor/memory/array.hpp>
#include <fusor/memory/buffer.hpp>
#include <xtensor/xarray.hpp>

TEST_CASE("owned buffers are 64-byte aligned and reference counted") {
  for (std::size_t bytes : {std::size_t(0), std::size_t(1), std::size_t(63), std::size_t(64), std::size_t(1000)}) {
    auto b = fusor::buffer::allocate(bytes);
    CHECK(reinterpret_cast<std::uintptr_t>(b.data()) % 64 == 0);
    CHECK(b.bytes() == bytes);
    CHECK(b.how() == fusor::ownership::owned);
    CHECK(b.space() == fusor::host);
  }
  auto a = fusor::buffer::allocate(128);
  CHECK(a.use_count() == 1);
  {
    auto copy = a;
    CHECK(a.use_count() == 2);
    CHECK(copy.data() == a.data());
  }
  CHECK(a.use_count() == 1);
}

TEST_CASE("borrowed buffers alias user memory without owning it") {
  std::vector<double> user(10, 1.0);
  auto b = fusor::buffer::borrow(user.data(), user.size() * sizeof(double));
  CHECK(b.how() == fusor::ownership::borrowed);
  CHECK(static_cast<void*>(b.data()) == static_cast<void*>(user.data()));
  CHECK(b.use_count() == 0);
}

TEST_CASE("adopted buffers keep the moved-in object alive, elements unmoved") {
  std::vector<int> user{1, 2, 3};
  const int* where = user.data();
  auto b = fusor::buffer::adopt(std::move(user), [](std::vector<int>& v) { return v.data(); }, 3 * sizeof(int));
  CHECK(b.how() == fusor::ownership::adopted);
  CHECK(reinterpret_cast<const int*>(b.data()) == where);
  auto object = b.adopted_object<std::vector<int>>();
  REQUIRE(object);
  CHECK((*object)[2] == 3);
}

TEST_CASE("overlap is by byte range") {
  std::vector<char> mem(100);
  auto b = fusor::buffer::borrow(mem.data() + 10, 20);
  CHECK(b.overlaps(mem.data() + 29, 1));
  CHECK(b.overlaps(mem.data(), 11));
  CHECK_FALSE(b.overlaps(mem.data(), 10));
  CHECK_FALSE(b.overlaps(mem.data() + 30, 5));
  CHECK_FALSE(b.overlaps(mem.data() + 15, 0));
}

TEST_CASE("arrays copy, clone and report their shape") {
  const float src[6] = {1, 2, 3, 4, 5, 6};
  auto a = fusor::array<float>::copy_of({2, 3}, src);
  CHECK(a.size() == 6);
  CHECK(a.rank() == 2);
  CHECK(a.shape() == fusor::dims{2, 3});
  CHECK(a.data()[5] == 6.f);
  CHECK(a.data() != src);
  auto c = a.clone();
  CHECK(c.data() != a.data());
  CHECK(c.data()[4] == 5.f);
  auto alias = a;
  CHECK(alias.data() == a.data());
}

TEST_CASE("a CUDA space is refused clearly by a host-only build") {
  CHECK_THROWS_AS(fusor::buffer::allocate(16, fusor::cuda(0)), fusor::space_error);
  try {
    (void)fusor::buffer::allocate(16, fusor::cuda(1));
  } catch (const fusor::space_error& e) {
    CHECK(std::string(e.what()).find("cuda:1") != std::string::npos);
  }
}

TEST_CASE("dims print like NumPy and broadcast like NumPy") {
  CHECK(fusor::dims{}.str() == "()");
  CHECK(fusor::dims{5}.str() == "(5,)");
  CHECK(fusor::dims{2, 3}.str() == "(2, 3)");
  fusor::dims out;
  CHECK(fusor::try_broadcast({200, 500}, {500}, out));
  CHECK(out == fusor::dims{200, 500});
  CHECK(fusor::try_broadcast({3, 1}, {1, 4}, out));
  CHECK(out == fusor::dims{3, 4});
  CHECK_FALSE(fusor::try_broadcast({3, 2}, {3}, out));
}

TEST_CASE("an adopted object is handed back only as its own type") {
  std::vector<float> v{1.f, 2.f};
  auto b = fusor::buffer::adopt(std::move(v), [](std::vector<float>& o) { return o.data(); }, 2 * sizeof(float));
  CHECK(b.adopted_object<std::vector<float>>() != nullptr);
  CHECK(b.adopted_object<std::vector<double>>() == nullptr);
  CHECK(b.adopted_object<xt::xarray<float>>() == nullptr);
}
