// The device tests of test/device, compiled by nvcc for the GPU suite: the
// same source as the emulated run, its kernels compiled into the program.
#include "../../test/device/test_device_ops.cpp"
