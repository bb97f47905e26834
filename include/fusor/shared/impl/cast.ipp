// fusor/shared/impl/cast.ipp — a refused cast's message (shared/cast.hpp).
// Part of fusor's run-time half: included by its header in header-only use,
// compiled once into libfusor under FUSOR_SEPARATE_COMPILATION.
#pragma once

#include "fusor/shared/cast.hpp"

namespace fusor::detail {

FUSOR_RUNTIME void refuse_cast(const who_ref& who, dtype to, dtype from, bool strict, const std::string& value,
                               const std::string& converted) {
  if (strict)
    throw dtype_error(who() + " is strict: expected a value of dtype " + std::string(name(to)) + ", received " +
                      std::string(name(from)));
  if (!value.empty())
    throw dtype_error(who() + " (dtype " + std::string(name(to)) + ") cannot store accurately the value " + value +
                      ": it would be represented as " + converted + ". Convert the value explicitly, or create the "
                      "variable with allow_downcast = true");
  throw dtype_error(who() + " (dtype " + std::string(name(to)) + ") cannot store a value of dtype " +
                    std::string(name(from)) + " without risking loss of precision. Convert it explicitly (e.g. "
                    "xt::cast<" + std::string(cpp_name(to)) + ">), or create the variable with allow_downcast = true");
}

}  // namespace fusor::detail
