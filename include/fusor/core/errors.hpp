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

/// Reading or writing a .npy / .npz file failed; the file is named.
class io_error : public error {
 public:
  using error::error;
};

/// A borrowed output was read after the function reused its buffer.
class stale_borrow_error : public error {
 public:
  using error::error;
};

/// A memory space that this build cannot reach (CUDA without a CUDA build).
class space_error : public error {
 public:
  using error::error;
};

}  // namespace fusor
