// The seeds' walkthrough on a GPU: each statement the tutorial makes about
// device memory, shown. On a machine without a CUDA device the example says so
// and shows the same statements on fusor's emulated device (host memory that
// fusor reaches only as it reaches a device's), which behaves the same.
#include <cstdio>
#include <memory>

#include <fusor/device.hpp>
#include <fusor/fusor.hpp>
#include <fusor/memory/emulated_device.hpp>
#ifdef FUSOR_EXAMPLE_WITH_CUDA
#include <fusor/cuda.hpp>
#endif

#include "device/model.hpp"
#include "numpy_print.hpp"

using examples::numpy_str;

// This program runs its training step on a device: its device kernels are
// compiled here (the emulated device's loops; the CUDA ones in
// device/walkthrough_device_kernels.cu, where nvcc builds the example).
FUSOR_DEVICE_INSTANTIATE(decltype(examples::make_train_step(std::declval<examples::logistic_model&>(), 0.f)))

int main() {
  std::unique_ptr<fusor::emulated_devices> emulation;
  fusor::device_runtime* rt = fusor::current_device_runtime();
  if (!rt || rt->device_count() == 0) {
    std::printf("SKIPPED on a real GPU: %s.\nThe same statements on fusor's emulated device:\n\n",
                rt ? rt->unavailable_reason().c_str()
                   : "this build has no CUDA runtime (built without nvcc, or without -Dgpu)");
    emulation = std::make_unique<fusor::emulated_devices>();
    rt = fusor::current_device_runtime();
  }
  const fusor::memory_space gpu = fusor::cuda(0);
  std::printf("device: cuda:0 (%s)\n", rt->name().c_str());

  std::puts("\n== borrow has no aliasing effect on a device ==");
  xt::xarray<float> np_array = xt::ones<float>({2});
  auto s_true = fusor::shared(np_array, fusor::borrow, {.name = "s", .space = gpu});
  np_array += 1;
  std::printf("np_array = %s, s_true = %s  (the device copy did not change)\n", numpy_str(np_array).c_str(),
              numpy_str(s_true.get_value()).c_str());

  std::puts("\n== get_value copies back, even with borrow ==");
  auto view = s_true.get_value(fusor::borrow);
  std::printf("get_value(borrow) = %s, a host copy: a fresh one at each call: %s\n", numpy_str(view).c_str(),
              view.data() != s_true.get_value(fusor::borrow).data() ? "True" : "False");

  std::puts("\n== return_internal_type gives the device storage ==");
  fusor::array<float> storage = s_true.get_value(fusor::borrow, fusor::internal_type);
  std::printf("internal storage: %zu float32 elements in %s memory, O(1), no copy\n", storage.size(),
              storage.space().str().c_str());
  fusor::array<float> device_copy = s_true.get_value(fusor::copy, fusor::internal_type);
  std::printf("get_value(copy, internal_type): another device buffer: %s\n",
              device_copy.data() != storage.data() ? "True" : "False");

  std::puts("\n== set_value writes into the existing allocation ==");
  auto w = fusor::shared(xt::xarray<float>{1.f, 2.f, 3.f}, {.name = "w", .space = gpu});
  const void* before = w.get_value(fusor::borrow, fusor::internal_type).data();
  const auto allocations = fusor::device_memory(0).allocations;
  w.set_value(xt::xarray<float>{4.f, 5.f, 6.f});
  std::printf("w = %s, same device buffer: %s, device allocations made: %llu\n", numpy_str(w.get_value()).c_str(),
              w.get_value(fusor::borrow, fusor::internal_type).data() == before ? "True" : "False",
              static_cast<unsigned long long>(fusor::device_memory(0).allocations - allocations));

  std::puts("\n== a function runs where its shared variables live ==");
  examples::logistic_model m{fusor::shared(xt::xarray<float>(xt::zeros<float>({3})), {.name = "w", .space = gpu}),
                             fusor::shared(0.f, {.name = "b", .space = gpu})};
  auto train = examples::make_train_step(m, 0.5f);
  const xt::xarray<float> x = {{0.f, 1.f, 0.f}, {1.f, 0.f, 1.f}, {1.f, 1.f, 0.f}, {0.f, 0.f, 1.f}};
  const xt::xarray<float> y = {0.f, 1.f, 1.f, 0.f};
  float first = train(x, y).value(), last = first;
  const auto steady = fusor::device_memory(0).allocations;
  for (int step = 0; step < 200; ++step) last = train(x, y).value();
  std::printf("%s", train.plan().c_str());
  std::printf("training on %s: squared error %.4f -> %.4f; updates in place: %s; device allocations in 200 steady "
              "calls: %llu\n",
              train.space().str().c_str(), first, last, train.update_was_in_place(0) ? "True" : "False",
              static_cast<unsigned long long>(fusor::device_memory(0).allocations - steady));
  std::printf("w = %s\n", numpy_str(m.w.get_value()).c_str());
  return 0;
}
