// The compiled functions of the device walkthrough, built by factories so that
// a .cu file can name their types (walkthrough_device_kernels.cu): the pattern
// for a program whose code is compiled by g++ and whose kernels by nvcc.
#pragma once

#include <fusor/fusor.hpp>

namespace examples {

struct logistic_model {
  fusor::shared<xt::xarray<float>> w;
  fusor::shared<float> b;
};

/// p = sigmoid(x . w + b); the update of one gradient step is returned with it.
inline auto make_train_step(logistic_model& m, float learning_rate) {
  fusor::matrix<float> x{"x"};
  fusor::vector<float> y{"y"};
  auto p = fusor::sigmoid(fusor::dot(x, m.w) + m.b);
  auto error = p - y;
  return fusor::function(
      fusor::inputs(x, y), fusor::outputs(fusor::Out(fusor::mean(error * error), fusor::borrow)),
      fusor::updates(fusor::update(m.w, m.w - learning_rate * fusor::dot(fusor::transpose(x), error)),
                     fusor::update(m.b, m.b - learning_rate * fusor::sum(error))));
}

}  // namespace examples
