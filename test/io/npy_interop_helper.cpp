// Driven by numpy_interop.py: writes .npy / .npz files with fusor, and reports
// what fusor loads from files numpy wrote. Each array is printed as one line
//   <label> TAB <dtype> TAB <extents, comma-separated> TAB <elements as hex>
// with the elements in C order, little-endian, so that the script can compare
// them with numpy bit for bit (NaN and -0.0 included).
//
//   npy_interop_helper write DIR          save arrays into DIR, print what was saved
//   npy_interop_helper dump FILE.npy...   load each with fusor::load, print it
//   npy_interop_helper dump-npz FILE.npz  read_npz, then load every entry into a
//                                         variable named after it; print both
//   npy_interop_helper expect-error FILE  exit 0 and print the message if reading
//                                         FILE raises fusor::io_error
#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <limits>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>
#include <fusor/io/npy.hpp>
#include <fusor/io/npz.hpp>

namespace fs = std::filesystem;

namespace {

std::string line(const std::string& label, fusor::dtype type, const fusor::dims& shape, const void* data) {
  static constexpr char hex[] = "0123456789abcdef";
  const std::size_t item = fusor::size_of(type);
  std::vector<unsigned char> b(shape.elements() * item);
  if (!b.empty()) std::memcpy(b.data(), data, b.size());
  if constexpr (std::endian::native == std::endian::big)
    for (std::size_t i = 0; i < b.size(); i += item) std::reverse(b.begin() + i, b.begin() + i + item);
  std::string out = label + "\t" + std::string(fusor::name(type)) + "\t";
  for (std::size_t i = 0; i < shape.rank(); ++i) out += (i ? "," : "") + std::to_string(shape[i]);
  out += "\t";
  for (unsigned char c : b) {
    out += hex[c >> 4];
    out += hex[c & 15];
  }
  return out;
}

template <class T>
std::string line_of(const std::string& label, const fusor::shared<T>& s) {
  const auto storage = s.get_value(fusor::borrow, fusor::internal_type);
  return line(label, s.dtype(), storage.shape(), storage.data());
}

/// Varied values with each type's extremes (and NaN, infinities, -0.0 for floats).
template <class E>
xt::xarray<E> values(const std::vector<std::size_t>& shape) {
  xt::xarray<E> a(shape);
  for (std::size_t i = 0; i < a.size(); ++i) {
    E& v = a.data()[i];
    if constexpr (std::is_same_v<E, bool>) {
      v = i % 3 != 1;
    } else if constexpr (std::is_floating_point_v<E>) {
      constexpr E specials[] = {std::numeric_limits<E>::max(), std::numeric_limits<E>::lowest(),
                                std::numeric_limits<E>::denorm_min(), std::numeric_limits<E>::quiet_NaN(),
                                std::numeric_limits<E>::infinity(), -std::numeric_limits<E>::infinity(), E(-0.0)};
      v = i < std::size(specials) ? specials[i] : static_cast<E>(static_cast<double>(i) * 0.37 - 2.5);
    } else {
      v = i % 4 == 0 ? std::numeric_limits<E>::max() : i % 4 == 1 ? std::numeric_limits<E>::min()
                                                                  : static_cast<E>(i * 37 % 101);
    }
  }
  return a;
}

template <class E>
void write_all_shapes(const fs::path& dir) {
  const std::vector<std::vector<std::size_t>> shapes = {{}, {5}, {2, 3}, {2, 3, 4}, {0, 3}};
  for (const auto& shape : shapes) {
    std::string label = std::string(fusor::name(fusor::dtype_of<E>)) + "_r" + std::to_string(shape.size());
    if (!shape.empty() && shape[0] == 0) label += "_empty";
    auto s = fusor::shared(values<E>(shape), label);
    fusor::save(s, dir / (label + ".npy"));
    std::cout << line_of(label + ".npy", s) << "\n";
  }
}

int write(const fs::path& dir) {
  write_all_shapes<bool>(dir);
  write_all_shapes<std::int8_t>(dir);
  write_all_shapes<std::uint8_t>(dir);
  write_all_shapes<std::int16_t>(dir);
  write_all_shapes<std::uint16_t>(dir);
  write_all_shapes<std::int32_t>(dir);
  write_all_shapes<std::uint32_t>(dir);
  write_all_shapes<std::int64_t>(dir);
  write_all_shapes<std::uint64_t>(dir);
  write_all_shapes<float>(dir);
  write_all_shapes<double>(dir);

  // Static-rank and scalar types save the same way.
  auto m = fusor::shared(xt::xtensor<float, 2>{{1.5f, -2}, {3, 4}}, "m");
  fusor::save(m, dir / "xtensor.npy");
  std::cout << line_of("xtensor.npy", m) << "\n";
  auto v = fusor::shared(std::vector<std::int16_t>{-7, 8, 9}, "v");
  fusor::save(v, dir / "vector.npy");
  std::cout << line_of("vector.npy", v) << "\n";
  auto sc = fusor::shared(2.75, "sc");
  fusor::save(sc, dir / "scalar.npy");
  std::cout << line_of("scalar.npy", sc) << "\n";

  // A named set.
  auto W = fusor::shared(values<float>({2, 3}), "W");
  auto b = fusor::shared(values<std::int64_t>({3}), "b");
  auto step = fusor::shared(std::uint32_t{42}, "step");
  auto mask = fusor::shared(values<bool>({2, 2}), "mask");
  auto empty = fusor::shared(xt::xarray<double>::from_shape({0, 4}), "empty");
  auto utf8 = fusor::shared(xt::xarray<std::int8_t>{-1, 1}, "größe");  // a UTF-8 entry name
  fusor::save(dir / "set.npz", W, b, step, mask, empty, v, utf8);
  std::cout << line_of("set.npz:W", W) << "\n"
            << line_of("set.npz:b", b) << "\n"
            << line_of("set.npz:step", step) << "\n"
            << line_of("set.npz:mask", mask) << "\n"
            << line_of("set.npz:empty", empty) << "\n"
            << line_of("set.npz:v", v) << "\n"
            << line_of("set.npz:größe", utf8) << "\n";
  return 0;
}

/// fusor::load<xt::xarray<E>> with E the file's own dtype.
int dump(const fs::path& file) {
  const fusor::npy_data raw = fusor::read_npy(file);
  return fusor::detail::visit_element(raw.type, [&]<class E>(std::type_identity<E>) {
    const auto s = fusor::load<xt::xarray<E>>(file);
    if (s.name() != file.stem().string()) {
      std::cerr << file << ": loaded variable is named '" << s.name() << "', expected the stem\n";
      return 1;
    }
    if (s.shape() != raw.shape ||
        (!raw.bytes.empty() && std::memcmp(s.get_value(fusor::borrow).data(), raw.bytes.data(), raw.bytes.size()))) {
      std::cerr << file << ": load() and read_npy() disagree\n";
      return 1;
    }
    std::cout << line_of(file.filename().string(), s) << "\n";
    return 0;
  });
}

int dump_npz(const fs::path& file) {
  const auto all = fusor::read_npz(file);
  for (const auto& entry : all) {
    const auto& key = entry.first;  // (not a structured binding: the lambda below captures it)
    const auto& raw = entry.second;
    std::cout << line("raw:" + key, raw.type, raw.shape, raw.bytes.data()) << "\n";
    const int rc = fusor::detail::visit_element(raw.type, [&]<class E>(std::type_identity<E>) {
      // A variable of the entry's dtype and rank, with other contents.
      std::vector<std::size_t> shape(raw.shape.rank(), 1);
      auto var = fusor::shared(xt::xarray<E>(shape), key);
      fusor::load(file, var);
      std::cout << line_of("var:" + key, var) << "\n";
      return 0;
    });
    if (rc) return rc;
  }
  return 0;
}

int expect_error(const fs::path& file) {
  try {
    if (file.extension() == ".npz") (void)fusor::read_npz(file);
    else (void)fusor::read_npy(file);
  } catch (const fusor::io_error& e) {
    std::cout << e.what() << "\n";
    return 0;
  } catch (const std::exception& e) {
    std::cout << "not an io_error: " << e.what() << "\n";
    return 2;
  }
  std::cout << "no error\n";
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  try {
    if (args.size() == 2 && args[0] == "write") return write(args[1]);
    if (args.size() >= 2 && args[0] == "dump") {
      for (std::size_t i = 1; i < args.size(); ++i)
        if (const int rc = dump(args[i])) return rc;
      return 0;
    }
    if (args.size() == 2 && args[0] == "dump-npz") return dump_npz(args[1]);
    if (args.size() == 2 && args[0] == "expect-error") return expect_error(args[1]);
  } catch (const std::exception& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 3;
  }
  std::cerr << "usage: npy_interop_helper write DIR | dump FILE.npy... | dump-npz FILE.npz | expect-error FILE\n";
  return 64;
}
