// Registering user types: one tensor-like type (stored as fusor::array, with
// borrow and adopt) and one generic value (held and deep-copied, R14).
#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <fusor/fusor.hpp>

namespace user {
/// A user's image type: row-major pixels.
struct image {
  std::size_t height = 0, width = 0;
  std::vector<float> pixels;
};
/// A user's non-tensor configuration object.
struct settings {
  std::map<std::string, int> values;
  std::string label;
};
/// Found by argument-dependent lookup exactly when namespace `user` is
/// associated with the argument's type (the fallback below says false).
/// (Only named in decltype: the fallback's ellipsis may not take a class
/// object in an evaluated call.)
template <class T>
std::true_type user_namespace_searched(const T&);
}  // namespace user

std::false_type user_namespace_searched(...);
/// Whether a call with an argument of type T finds user::user_namespace_searched.
template <class T>
constexpr bool user_namespace_joins = decltype(user_namespace_searched(std::declval<const T&>()))::value;

template <>
struct fusor::shared_constructor<user::image> {
  using element_type = float;
  static constexpr int rank = 2;
  static fusor::dims shape(const user::image& im) { return {im.height, im.width}; }
  static const float* data(const user::image& im) { return im.pixels.data(); }
  static user::image make(const fusor::dims& d, const float* src) {
    return {d[0], d[1], std::vector<float>(src, src + d.elements())};
  }
};

template <>
struct fusor::shared_constructor<user::settings> : fusor::generic_constructor<user::settings> {};

TEST_CASE("a registered tensor-like type: copy, borrow, adopt, get_value returns the type") {
  user::image im{2, 2, {1, 2, 3, 4}};
  auto copied = fusor::shared(im, "img");
  auto borrowed = fusor::shared(im, fusor::borrow);
  CHECK(copied.rank() == 2);
  CHECK(copied.dtype() == fusor::dtype::float32);
  CHECK(copied.get_value(fusor::borrow).data() != im.pixels.data());
  CHECK(borrowed.get_value(fusor::borrow).data() == im.pixels.data());
  im.pixels[0] = 10;
  CHECK(borrowed.get_value().pixels[0] == 10);
  CHECK(copied.get_value().pixels[0] == 1);
  user::image back = copied.get_value();
  CHECK(back.height == 2);
  CHECK(back.width == 2);
  CHECK(back.pixels == std::vector<float>{1, 2, 3, 4});
  CHECK(copied.get_value(fusor::borrow)(1, 0) == 3.f);

  user::image moved{1, 3, {7, 8, 9}};
  const float* where = moved.pixels.data();
  auto adopted = fusor::shared(std::move(moved));
  CHECK(adopted.get_value(fusor::borrow).data() == where);
  CHECK(adopted.shape() == fusor::dims{1, 3});
}

TEST_CASE("registered types and built-ins mix through set_value's rules") {
  auto s = fusor::shared(user::image{1, 2, {1, 2}});
  s.set_value(xt::xtensor<float, 2>{{5, 6, 7}});
  CHECK(s.get_value().pixels == std::vector<float>{5, 6, 7});
  CHECK_THROWS_AS(s.set_value(xt::xarray<float>{1, 2}), fusor::rank_error);
  CHECK_THROWS_AS(s.set_value(xt::xtensor<double, 2>{{1.0}}), fusor::dtype_error);
}

TEST_CASE("a generic value is held as is and deep-copied by get_value (R14)") {
  user::settings cfg{{{"depth", 3}}, "run-1"};
  auto s = fusor::shared(cfg, {.name = "cfg", .strict = true});
  user::settings got = s.get_value();
  got.values["depth"] = 99;
  CHECK(s.get_value().values.at("depth") == 3);
  auto view = s.get_value(fusor::borrow);
  CHECK(view->label == "run-1");
  static_assert(std::is_same_v<decltype(view.get()), const user::settings&>);

  s.set_value(user::settings{{{"depth", 4}}, "run-2"});
  CHECK(s.get_value().label == "run-2");
  CHECK(view->label == "run-1");  // the old object lives on while viewed

  user::settings mine{{}, "mine"};
  s.set_value(mine, fusor::borrow);
  mine.label = "changed";
  CHECK(s.get_value().label == "changed");

  auto other = fusor::shared(user::settings{}, "other");
  other.set_value(mine, fusor::borrow);  // held by `s` already: copied
  mine.label = "again";
  CHECK(other.get_value().label == "changed");
  CHECK(s.get_value().label == "again");

  user::settings taken = s.take_value();
  CHECK(taken.label == "again");
  CHECK_FALSE(s.has_value());
}

TEST_CASE("a registered type's namespace joins no lookup over fusor expressions") {
  // A leaf carries its variable's C++ type as a value, not as a type, so an
  // operator over fusor expressions never considers the operators of the
  // container's namespace (xtensor's are unconstrained templates: each one
  // was a candidate, refused by an enable_if over the whole expression type).
  auto img = fusor::shared(user::image{1, 2, {1, 2}}, "img");
  CHECK(user_namespace_joins<user::image>);      // the probe works
  CHECK(user_namespace_joins<decltype(img)>);     // the handle names its type
  const auto leaf = fusor::as_expression(img);
  const auto expr = fusor::exp(img) * 2.f + img;
  CHECK_FALSE(user_namespace_joins<decltype(leaf)>);
  CHECK_FALSE(user_namespace_joins<decltype(expr)>);
  CHECK(std::is_same_v<typename decltype(leaf)::variable_type, user::image>);
  CHECK(fusor::detail::has<fusor::detail::member::variable, decltype(leaf)>);
  CHECK_FALSE(fusor::detail::has<fusor::detail::member::variable, decltype(expr)>);
  CHECK(fusor::detail::has<fusor::detail::member::args, decltype(expr)>);
  // and the expression computes as before
  const xt::xtensor<float, 2> v = fusor::eval(expr);
  CHECK(v(0, 1) == doctest::Approx(2 * std::exp(2.f) + 2));
}
