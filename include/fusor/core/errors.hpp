// fusor/core/errors.hpp — the exception hierarchy.
//
// Every refusal derives from fusor::error, and every message names the
// variable (or input) concerned, what was expected and what was received.
#pragma once

#include <stdexcept>
#include <string>

namespace fusor {

/// Base of every exception fusor throws.
class error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// A value's element type cannot be stored under the casting rules
/// (strict, allow_downcast, safe upcasts).
class dtype_error : public error {
 public:
  using error::error;
};

/// A value has the wrong number of dimensions.
class rank_error : public error {
 public:
  using error::error;
};

/// A value's shape is refused: a broadcastable axis not of length 1, or two
/// shapes that do not broadcast together.
class shape_error : public error {
 public:
  using error::error;
};

/// An operation on a value that is not there (a shared variable whose value
/// was taken with take_value()), or an argument that makes no sense.
class value_error : public error {
 public:
  using error::error;
};

/// An index out of range: a view's integer index, or an index of take(). The
/// message names the index, the axis and its length.
class index_error : public error {
 public:
  using error::error;
};

/// Reading or writing a file failed (.npy / .npz, a plan picture, a trace); the file is named.
class io_error : public error {
 public:
  using error::error;
};

/// A borrowed output was read after the function reused its buffer.
class stale_borrow_error : public error {
 public:
  using error::error;
};

/// A memory space that cannot be used here: a CUDA space in a program without
/// a device runtime, or values of two spaces mixed in one function.
class space_error : public error {
 public:
  using error::error;
};

/// No device to run on: no CUDA driver, no device, or a device index beyond
/// those present. Both "no driver" and "no device" are this error; the message
/// says which, and what to do.
class device_unavailable_error : public space_error {
 public:
  using space_error::space_error;
};

/// A device allocation failed after the pool was trimmed and the allocation
/// retried once. The message says how many bytes were asked for and how many
/// the device pool holds; nothing was changed.
class device_memory_error : public error {
 public:
  using error::error;
};

/// A device kernel that a program needs was not compiled into it: the message
/// names the expression and the instantiation macro to add to a .cu file.
class kernel_not_instantiated_error : public error {
 public:
  using error::error;
};

/// The device reported a fault while running fusor's kernels (an
/// asynchronous error, noticed at the next synchronisation). Unlike every
/// other error, it cannot be rolled back: device memory written by the call
/// may hold partial results, and CUDA's context may be unusable afterwards.
class device_fault_error : public error {
 public:
  using error::error;
};

}  // namespace fusor
