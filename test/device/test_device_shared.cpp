// Shared variables whose storage lives on a device: the seeds' GPU statements
// (borrow has no aliasing effect, get_value copies back, return_internal_type
// gives the device storage, set_value writes into the existing allocation),
// refusals that change nothing, and what a device holds. Run on an emulated
// device in every CI run, and on a real one in the GPU suite.
#include <cstdint>
#include <string>

#include "device_harness.hpp"

using device_test::dev;
using device_test::fixture;
using device_test::host_values;

TEST_CASE("no device runtime: a clear error that says what to link, and nothing is created") {
#ifndef FUSOR_TEST_REAL_DEVICE
  REQUIRE(fusor::current_device_runtime() == nullptr);
  xt::xarray<double> v{1, 2, 3};
  try {
    auto s = fusor::shared(v, {.name = "w", .space = fusor::cuda(0)});
    FAIL("expected device_unavailable_error");
  } catch (const fusor::device_unavailable_error& e) {
    const std::string m = e.what();
    CHECK(m.find("cuda:0") != std::string::npos);
    CHECK(m.find("fusor/cuda.hpp") != std::string::npos);
    CHECK(m.find("emulated_devices") != std::string::npos);
  }
#endif
}

TEST_CASE_FIXTURE(fixture, "a device index beyond those present is refused, naming how many there are") {
  const int n = runtime().device_count();
  xt::xarray<float> v{1, 2};
  try {
    auto s = fusor::shared(v, {.name = "w", .space = fusor::cuda(n)});
    FAIL("expected device_unavailable_error");
  } catch (const fusor::device_unavailable_error& e) {
    const std::string m = e.what();
    CHECK(m.find("cuda:" + std::to_string(n)) != std::string::npos);
    CHECK(m.find(std::to_string(n) + " device") != std::string::npos);
  }
}

TEST_CASE_FIXTURE(fixture, "construction copies to the device; get_value copies back, of the user's type") {
  xt::xarray<double> v{{1, 2, 3}, {4, 5, 6}};
  auto s = fusor::shared(v, {.name = "w", .space = dev});
  CHECK(s.space() == dev);
  CHECK(s.shape() == fusor::dims{2, 3});
  const auto& storage = s.get_value(fusor::borrow, fusor::internal_type);
  CHECK(storage.space() == dev);
  CHECK(storage.data() != v.data());
  xt::xarray<double> back = s.get_value();
  CHECK(back == v);
  CHECK(back.data() != v.data());
  v(0, 0) = 100;  // the variable holds its own copy
  CHECK(s.get_value()(0, 0) == 1);
}

TEST_CASE_FIXTURE(fixture, "borrow has no aliasing effect on a device") {
  xt::xarray<float> v{1, 2, 3};
  auto s = fusor::shared(v, fusor::borrow, {.name = "w", .space = dev});
  v(1) = 20;  // on the host this would show through the variable
  CHECK(s.get_value() == xt::xarray<float>{1, 2, 3});
  // set_value(v, borrow) copies too.
  s.set_value(v, fusor::borrow);
  v(2) = 30;
  CHECK(s.get_value() == xt::xarray<float>{1, 20, 3});
  // Moving a host value in cannot adopt it either: its elements are copied.
  xt::xarray<float> moved{7, 8, 9};
  const float* moved_data = moved.data();
  s.set_value(std::move(moved));
  CHECK(s.get_value(fusor::borrow, fusor::internal_type).data() != moved_data);
  CHECK(s.get_value() == xt::xarray<float>{7, 8, 9});
}

TEST_CASE_FIXTURE(fixture, "get_value(borrow) is a read-only host copy: it aliases nothing") {
  auto s = fusor::shared(xt::xtensor<double, 1>{1, 2, 3}, {.name = "w", .space = dev});
  const auto view = s.get_value(fusor::borrow);
  const auto again = s.get_value(fusor::borrow);
  CHECK(view == xt::xtensor<double, 1>{1, 2, 3});
  CHECK(view.data() != s.get_value(fusor::borrow, fusor::internal_type).data());
  CHECK(view.data() != again.data());
  s.set_value(xt::xtensor<double, 1>{4, 5, 6});
  CHECK(view == xt::xtensor<double, 1>{1, 2, 3});  // a copy taken before
}

TEST_CASE_FIXTURE(fixture, "internal_type: the device storage in O(1), or a device copy") {
  auto s = fusor::shared(xt::xarray<std::int32_t>{1, 2, 3, 4}, {.name = "w", .space = dev});
  const auto a = s.get_value(fusor::borrow, fusor::internal_type);
  const auto b = s.get_value(fusor::borrow, fusor::internal_type);
  CHECK(a.data() == b.data());
  CHECK(a.space() == dev);
  const auto before = memory().allocations;
  const auto c = s.get_value(fusor::copy, fusor::internal_type);
  CHECK(memory().allocations == before + 1);
  CHECK(c.space() == dev);
  CHECK(c.data() != a.data());
  CHECK(host_values(c) == std::vector<std::int32_t>{1, 2, 3, 4});
}

TEST_CASE_FIXTURE(fixture, "set_value writes into the existing allocation when the size matches") {
  auto s = fusor::shared(xt::xarray<double>{{1, 2, 3, 4}}, {.name = "w", .space = dev});
  const auto* p = s.get_value(fusor::borrow, fusor::internal_type).data();
  const auto before = memory().allocations;
  s.set_value(xt::xarray<double>{{5, 6, 7, 8}});
  CHECK(s.get_value(fusor::borrow, fusor::internal_type).data() == p);
  CHECK(memory().allocations == before);
  CHECK(s.get_value() == xt::xarray<double>{{5, 6, 7, 8}});
  // The same bytes in another shape: still the same allocation, new shape.
  s.set_value(xt::xarray<double>{{1, 2}, {3, 4}});
  CHECK(memory().allocations == before);
  CHECK(s.get_value(fusor::borrow, fusor::internal_type).data() == p);
  CHECK(s.shape() == fusor::dims{2, 2});
  // A value of another dtype is converted on the host and written in place too.
  s.set_value(xt::xarray<std::int32_t>{{9, 10}, {11, 12}});
  CHECK(memory().allocations == before);
  CHECK(s.get_value() == xt::xarray<double>{{9, 10}, {11, 12}});
  // Another size needs another allocation.
  s.set_value(xt::xarray<double>{{1, 2, 3}});
  CHECK(memory().allocations == before + 1);
  CHECK(s.get_value() == xt::xarray<double>{{1, 2, 3}});
}

TEST_CASE_FIXTURE(fixture, "set_value keeps a device handle you hold: it gets a new allocation instead") {
  auto s = fusor::shared(xt::xarray<float>{1, 2}, {.name = "w", .space = dev});
  const auto held = s.get_value(fusor::borrow, fusor::internal_type);
  s.set_value(xt::xarray<float>{3, 4});
  CHECK(s.get_value(fusor::borrow, fusor::internal_type).data() != held.data());
  CHECK(host_values(held) == std::vector<float>{1, 2});
  CHECK(s.get_value() == xt::xarray<float>{3, 4});
}

TEST_CASE_FIXTURE(fixture, "a refused set_value changes nothing on the device") {
  auto s = fusor::shared(xt::xarray<float>{1, 2, 3}, {.name = "weights", .broadcastable = {false}, .space = dev});
  const auto* p = s.get_value(fusor::borrow, fusor::internal_type).data();
  CHECK_THROWS_AS(s.set_value(xt::xarray<double>{4, 5, 6}), fusor::dtype_error);  // float64 into float32
  CHECK_THROWS_AS(s.set_value(xt::xarray<float>{{4, 5, 6}}), fusor::rank_error);
  auto strict = fusor::shared(xt::xarray<float>{1}, {.name = "b", .strict = true, .space = dev});
  CHECK_THROWS_AS(strict.set_value(xt::xarray<std::int8_t>{1}), fusor::dtype_error);
  CHECK(s.get_value(fusor::borrow, fusor::internal_type).data() == p);
  CHECK(s.get_value() == xt::xarray<float>{1, 2, 3});
  CHECK(strict.get_value() == xt::xarray<float>{1});
}

TEST_CASE_FIXTURE(fixture, "the internal type goes back in: set_value(get_value(borrow, internal_type), borrow)") {
  auto s = fusor::shared(xt::xarray<double>{1, 2, 3}, {.name = "w", .space = dev});
  {
    auto a = s.get_value(fusor::borrow, fusor::internal_type);
    const auto* p = a.data();
    const auto before = memory().allocations;
    s.set_value(a, fusor::borrow);
    CHECK(s.get_value(fusor::borrow, fusor::internal_type).data() == p);
    CHECK(memory().allocations == before);
  }
  // Another variable's storage is never shared (uniqueness): a copy.
  auto t = fusor::shared(xt::xarray<double>{0, 0, 0}, {.name = "t", .space = dev});
  t.set_value(s.get_value(fusor::borrow, fusor::internal_type), fusor::borrow);
  CHECK(t.get_value(fusor::borrow, fusor::internal_type).data() !=
        s.get_value(fusor::borrow, fusor::internal_type).data());
  CHECK(t.get_value() == xt::xarray<double>{1, 2, 3});
  // A device array copied in (no borrow) goes into the existing allocation.
  const auto* tp = t.get_value(fusor::borrow, fusor::internal_type).data();
  auto c = s.get_value(fusor::copy, fusor::internal_type);
  t.set_value(c);
  CHECK(t.get_value(fusor::borrow, fusor::internal_type).data() == tp);
}

TEST_CASE_FIXTURE(fixture, "a variable created from device data returns device data") {
  auto host = fusor::shared(xt::xarray<float>{1, 2, 3}, {.name = "h", .space = dev});
  fusor::array<float> d = host.get_value(fusor::copy, fusor::internal_type);
  auto s = fusor::shared(d, "from_device");
  CHECK(s.space() == dev);
  fusor::array<float> got = s.get_value();
  CHECK(got.space() == dev);
  CHECK(got.data() != d.data());
  CHECK(host_values(got) == std::vector<float>{1, 2, 3});
  // A host array makes a host variable, whose get_value is a host array.
  auto h = fusor::shared(fusor::array<float>::copy_of({2}, std::vector<float>{5, 6}.data()), "on_host");
  CHECK(h.space() == fusor::host);
  CHECK(host_values(h.get_value()) == std::vector<float>{5, 6});
  // An array may also be asked to live elsewhere: a host array moved to the device.
  auto moved = fusor::shared(fusor::array<float>::copy_of({2}, std::vector<float>{7, 8}.data()),
                             {.name = "to_device", .space = dev});
  CHECK(moved.space() == dev);
  CHECK(moved.get_value().space() == dev);
}

TEST_CASE_FIXTURE(fixture, "zero() and zero(borrow) on a device") {
  auto s = fusor::shared(xt::xarray<double>{1, 2, 3}, {.name = "w", .space = dev});
  const auto held = s.get_value(fusor::borrow, fusor::internal_type);
  s.zero();  // a new buffer: the handle keeps the old values
  CHECK(s.get_value() == xt::xarray<double>{0, 0, 0});
  CHECK(host_values(held) == std::vector<double>{1, 2, 3});
  s.set_value(xt::xarray<double>{4, 5, 6});
  const auto again = s.get_value(fusor::borrow, fusor::internal_type);
  s.zero(fusor::borrow);  // in place: the handle sees the zeros
  CHECK(host_values(again) == std::vector<double>{0, 0, 0});
  auto empty = fusor::shared(xt::xarray<double>::from_shape({0}), {.name = "e", .space = dev});
  empty.zero(fusor::borrow);
  CHECK(empty.get_value().size() == 0);
}

TEST_CASE_FIXTURE(fixture, "take_value copies the value back and empties the variable") {
  auto s = fusor::shared(xt::xtensor<float, 2>{{1, 2}, {3, 4}}, {.name = "w", .space = dev});
  xt::xtensor<float, 2> v = s.take_value();
  CHECK(v == xt::xtensor<float, 2>{{1, 2}, {3, 4}});
  CHECK(!s.has_value());
  s.set_value(std::move(v));
  CHECK(s.get_value() == xt::xtensor<float, 2>{{1, 2}, {3, 4}});
}

TEST_CASE_FIXTURE(fixture, "scalars and std::vector on a device") {
  auto n = fusor::shared(3.5, {.name = "n", .space = dev});
  CHECK(n.get_value() == 3.5);
  CHECK(n.get_value(fusor::borrow).get() == 3.5);
  n.set_value(7);  // an exact C++ number of another type
  CHECK(n.get_value() == 7.0);
  auto v = fusor::shared(std::vector<std::int64_t>{1, 2, 3}, {.name = "v", .space = dev});
  CHECK(v.get_value() == std::vector<std::int64_t>{1, 2, 3});
}

TEST_CASE_FIXTURE(fixture, "device memory comes back when variables go away") {
  const auto used = memory().used;
  {
    auto a = fusor::shared(xt::xarray<double>::from_shape({1000}), {.name = "a", .space = dev});
    CHECK(memory().used >= used + 8000);
  }
  CHECK(memory().used == used);
}

TEST_CASE_FIXTURE(fixture, "a device out of memory: device_memory_error saying how much was asked and held; nothing "
                           "changes") {
  if (!emulated()) return;  // a real device is not filled up by a unit test
  fusor::emulated_devices small{fusor::emulation_options{.devices = 1, .capacity = 4096}};
  auto s = fusor::shared(xt::xarray<double>{1, 2, 3}, {.name = "w", .space = dev});
  const auto* p = s.get_value(fusor::borrow, fusor::internal_type).data();
  try {
    s.set_value(xt::xarray<double>::from_shape({1000}));
    FAIL("expected device_memory_error");
  } catch (const fusor::device_memory_error& e) {
    const std::string m = e.what();
    CHECK(m.find("8000 bytes") != std::string::npos);
    CHECK(m.find("holds") != std::string::npos);
  }
  CHECK(s.get_value(fusor::borrow, fusor::internal_type).data() == p);
  CHECK(s.get_value() == xt::xarray<double>{1, 2, 3});
}
