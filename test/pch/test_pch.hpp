// test/pch/test_pch.hpp — what almost every test unit includes, precompiled
// once per build (test/meson.build, option test_pch) and given to each unit
// with -include: doctest, fusor and the xtensor and standard headers the
// tests share. Parsing them is about 3.5 s of every unit's compile time.
//
// Only headers whose meaning no unit changes with a macro of its own: a
// unit that defines something before including fusor (FUSOR_CHECKED) is
// built without this header. (No include guard: it is the first thing a unit
// reads, once.)
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <doctest/doctest.h>
#include <xtensor/xview.hpp>

#include <fusor/fusor.hpp>
