// The seeds' walkthrough, "Understanding Memory Aliasing for Speed and
// Correctness", in C++. Each block reproduces one snippet of the tutorial and
// prints what the Python prints. Comments name the section.
#include <cstdio>

#include <fusor/fusor.hpp>

#include "numpy_print.hpp"

using examples::numpy_str;

int main() {
  std::puts("== Borrowing when creating shared variables ==");
  // np_array = numpy.ones(2, dtype='float32')
  // s_default = shared(np_array); s_false = shared(np_array, borrow=False); s_true = shared(np_array, borrow=True)
  xt::xarray<float> np_array = xt::ones<float>({2});
  auto s_default = fusor::shared(np_array);
  auto s_false = fusor::shared(np_array, fusor::copy);
  auto s_true = fusor::shared(np_array, fusor::borrow);
  // np_array += 1  # now it is an array of 2.0 s
  np_array += 1;
  std::printf("%s\n%s\n%s\n", numpy_str(s_default.get_value()).c_str(), numpy_str(s_false.get_value()).c_str(),
              numpy_str(s_true.get_value()).c_str());
  std::printf("s_true aliases np_array: %s\n",
              s_true.get_value(fusor::borrow).data() == np_array.data() ? "True" : "False");

  std::puts("\n== Borrowing when accessing value of shared variables: Retrieving ==");
  // s = shared(np_array); v_false = s.get_value(borrow=False); v_true = s.get_value(borrow=True)
  auto s = fusor::shared(np_array);
  xt::xarray<float> v_false = s.get_value();             // a deep copy, a plain xt::xarray
  auto v_true = s.get_value(fusor::borrow);              // read-only view; writing it does not compile
  std::printf("v_false = %s  (aliases s: %s)\n", numpy_str(v_false).c_str(),
              v_false.data() == v_true.data() ? "True" : "False");
  std::printf("v_true  = %s  (a read-only view of s's storage)\n", numpy_str(v_true).c_str());
  // v_internal = s.get_value(borrow=True, return_internal_type=True)
  fusor::array<float> v_internal = s.get_value(fusor::borrow, fusor::internal_type);
  std::printf("v_internal: %zu float32 elements in %s memory, same buffer as v_true: %s\n", v_internal.size(),
              v_internal.space().str().c_str(), v_internal.data() == v_true.data() ? "True" : "False");
  // It is possible to use borrow=False with return_internal_type=True: a deep copy of the internal object.
  fusor::array<float> v_internal_copy = s.get_value(fusor::copy, fusor::internal_type);
  std::printf("internal deep copy shares the buffer: %s\n", v_internal_copy.data() == v_true.data() ? "True" : "False");

  std::puts("\n== Borrowing when accessing value of shared variables: Assigning ==");
  // s.set_value(some_inplace_fn(s.get_value(borrow=True)), borrow=True)
  // In C++ the value is moved out, changed in place, and moved back: no copy on the host.
  xt::xarray<float> w = {1.f, 2.f, 3.f};
  auto sw = fusor::shared(std::move(w), "w");
  const float* before = sw.get_value(fusor::borrow).data();
  xt::xarray<float> taken = sw.take_value();
  taken *= 10.f;  // some_inplace_fn
  sw.set_value(std::move(taken));
  std::printf("w = %s  (same buffer as before: %s)\n", numpy_str(sw.get_value()).c_str(),
              sw.get_value(fusor::borrow).data() == before ? "True" : "False");

  std::puts("\n== Retrieving and assigning via the .value property ==");
  // config.shared.value_borrows defaults to True: s.value = v borrows, s.value reads without a copy.
  xt::xarray<float> fresh = {5.f, 6.f};
  s.value(fresh);
  std::printf("s.value = %s, aliases the assigned array: %s\n", numpy_str(s.value()).c_str(),
              s.value().data() == fresh.data() ? "True" : "False");
  fusor::config().shared_value_borrows = false;
  std::printf("with value_borrows = False, s.value aliases it: %s\n",
              s.value().data() == fresh.data() ? "True" : "False");
  fusor::config().shared_value_borrows = true;

  std::puts("\n== Refusals change nothing ==");
  auto strict = fusor::shared(xt::xarray<float>{1.f, 2.f}, {.name = "weights"});
  try {
    strict.set_value(xt::xarray<double>{0.1, 0.2});
  } catch (const fusor::error& e) {
    std::printf("refused: %s\n", e.what());
  }
  std::printf("weights = %s\n", numpy_str(strict.get_value()).c_str());
  return 0;
}
