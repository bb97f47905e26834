// fusor/version.hpp — fusor's version, for code that adapts to it.
//
//   #if FUSOR_VERSION >= 100  // 0.1.0 or later
//
// FUSOR_VERSION is major * 10000 + minor * 100 + patch (0.1.0 is 100, 1.2.3
// is 10203). This header is the source of the version: `meson setup` checks
// that meson.build's project version is the same, and the installed pkg-config
// and CMake packages carry it. Portable: plain macros, for g++ and nvcc alike.
#pragma once

#define FUSOR_VERSION_MAJOR 0
#define FUSOR_VERSION_MINOR 1
#define FUSOR_VERSION_PATCH 0
#define FUSOR_VERSION_STRING "0.1.0"

#define FUSOR_VERSION (FUSOR_VERSION_MAJOR * 10000 + FUSOR_VERSION_MINOR * 100 + FUSOR_VERSION_PATCH)
