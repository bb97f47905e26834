// test/sanitizers/asan_options.hpp — AddressSanitizer's defaults for the test
// programs: included once by each program's main unit (test/main.cpp, the
// multi-process tests' test/mpi/main.cpp, the sanitizer canary), which then
// defines the hook the sanitizer's run time reads before main. ASAN_OPTIONS
// still overrides what it names.
//
// detect_stack_use_after_return: a read through a reference to a local of a
// function that has returned is reported, instead of reading whatever the
// stack holds by then: how an expression that kept a reference to a
// temporary would fail, which fusor's nodes, holding their operands by value,
// must never do. clang 14 compiles the check into every function and leaves
// it off at run time unless asked; on, the sanitizer build's tests take
// about a tenth longer.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define FUSOR_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FUSOR_TEST_ASAN 1
#endif
#endif

#ifdef FUSOR_TEST_ASAN
extern "C" const char* __asan_default_options() { return "detect_stack_use_after_return=1"; }
#endif
