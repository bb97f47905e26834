// bench/alloc_count.hpp — calls of the global operator new so far (see alloc_count.cpp).
#pragma once

#include <cstddef>

std::size_t bench_operator_new_calls() noexcept;
