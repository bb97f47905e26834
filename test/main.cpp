// The one doctest main, compiled once and linked into every test executable.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>

#include "sanitizers/asan_options.hpp"
