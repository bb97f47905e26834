// Mistake: a function built for a device (here fusor's emulated device) in a
// program where no unit compiled its device kernels (no
// FUSOR_DEVICE_INSTANTIATE / FUSOR_CUDA_INSTANTIATE of its type).
#include <fusor/fusor.hpp>
#include <fusor/memory/emulated_device.hpp>

int main() {
  fusor::emulated_devices devices;
  auto w = fusor::shared(xt::xtensor<float, 1>{1.f, 2.f}, {.name = "w", .space = fusor::cuda(0)});
  fusor::vector<float> x{"x"};
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::tanh(w) * x));
  return f(xt::xtensor<float, 1>{1.f, 1.f})(0) > 0.f ? 0 : 1;
}
