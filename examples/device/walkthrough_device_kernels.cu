// The CUDA kernels of the device walkthrough, compiled by nvcc: every kernel the
// training step needs on a device, compiled and registered for the program
// (see fusor/gpu/cuda/instantiate.cuh).
#include <fusor/gpu/cuda/instantiate.cuh>

#include "model.hpp"

FUSOR_CUDA_INSTANTIATE(decltype(examples::make_train_step(std::declval<examples::logistic_model&>(), 0.f)))
