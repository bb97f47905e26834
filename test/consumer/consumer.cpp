// Built against an installed fusor by test/install_check.py, from meson
// (meson.build) and from CMake (CMakeLists.txt): with the headers alone
// (fusor.pc, fusor::fusor), and with the run-time half from libfusor
// (fusor-runtime.pc, fusor::runtime, which define FUSOR_SEPARATE_COMPILATION:
// the planner is then libfusor's). The build passes the version its package
// file announces as FUSOR_EXPECTED_VERSION.
#include <fusor/fusor.hpp>

#include <string_view>

static_assert(FUSOR_VERSION == FUSOR_VERSION_MAJOR * 10000 + FUSOR_VERSION_MINOR * 100 + FUSOR_VERSION_PATCH);

int main() {
#ifdef FUSOR_EXPECTED_VERSION
  if (std::string_view(FUSOR_VERSION_STRING) != FUSOR_EXPECTED_VERSION) return 2;
#endif
  xt::xarray<double> a = {1.0, 2.0};
  auto s = fusor::shared(a, fusor::borrow, "a");
  a(0) = 5.0;
  auto twice = fusor::function(fusor::inputs(), fusor::outputs(s * 2.0));
  const xt::xarray<double> r = twice();
  return s.get_value()(0) == 5.0 && s.name() == "a" && r(0) == 10.0 && r(1) == 4.0 ? 0 : 1;
}
