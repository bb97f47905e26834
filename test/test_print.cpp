// Printing: `os << e` for expressions (the text of e.str(), found by
// argument-dependent lookup), the README's printed examples, and the profile
// table, whose kernel column never cuts a name (two steps whose names share a
// long prefix print distinguishably).
#include <doctest/doctest.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <sstream>
#include <string>
#include <vector>

#include <fusor/fusor.hpp>

// No `using namespace fusor` anywhere in this file: operator<< must be found
// by argument-dependent lookup.

namespace {

template <class E>
std::string printed(const E& e) {
  std::ostringstream os;
  os << e;
  return os.str();
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::size_t at = 0;
  while (at < text.size()) {
    const std::size_t end = text.find('\n', at);
    out.push_back(text.substr(at, end - at));
    if (end == std::string::npos) break;
    at = end + 1;
  }
  return out;
}

/// The kernel names of a profile table, each put back together from its
/// first line (the name column, without its padding) and its continuation
/// lines (indented by two spaces).
std::vector<std::string> names_in_table(const std::string& table) {
  const auto lines = lines_of(table);
  REQUIRE(!lines.empty());
  const std::size_t width = lines[0].find("  calls");
  REQUIRE(width != std::string::npos);
  std::vector<std::string> names;
  for (std::size_t i = 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.rfind("  ", 0) == 0) {
      REQUIRE(!names.empty());
      CHECK(line.size() <= width);  // a continuation stays inside the column
      names.back() += line.substr(2);
    } else {
      std::string name = line.substr(0, width);
      name.erase(name.find_last_not_of(' ') + 1);
      names.push_back(name);
    }
  }
  return names;
}

}  // namespace

TEST_CASE("operator<< prints an expression as its str() does: the README's example") {
  fusor::matrix<float> x{"x"};
  auto W = fusor::shared(xt::xtensor<float, 2>{{0, 1}, {2, 3}}, "W");
  auto y = 2.0f * x + fusor::exp(W);
  // README, "Expressions": "Expressions print readably (`(2 * x) + exp(W)`)".
  CHECK(printed(y) == "(2 * x) + exp(W)");
  CHECK(printed(y) == y.str());
  // The stream is returned, so insertions chain.
  std::ostringstream os;
  os << "y = " << y << ';';
  CHECK(os.str() == "y = (2 * x) + exp(W);");
}

TEST_CASE("a shared variable prints through its name or its values, as the README says") {
  auto W = fusor::shared(xt::xarray<double>{1.5, 2.5}, "W");
  CHECK(printed(W.name()) == "W");
  std::ostringstream expected;
  expected << xt::xarray<double>{1.5, 2.5};
  CHECK(printed(W.get_value(fusor::borrow)) == expected.str());
  // As an operand it prints as its name.
  CHECK(printed(W + 1.0) == "W + 1");
}

TEST_CASE("operator<< for every kind of node: leaves, reductions, shape ops, dot, views, casts") {
  fusor::matrix<double> x{"x"};
  fusor::vector<double> v{"v"};
  fusor::scalar<std::int32_t> k{"k"};
  auto W = fusor::shared(xt::xarray<double>{{1, 2}, {3, 4}}, "W");

  // The README's softmax.
  auto e = fusor::exp(x - fusor::max(x, 1, fusor::keepdims));
  auto softmax = e / fusor::sum(e, 1, fusor::keepdims);
  CHECK(printed(softmax) ==
        "exp(x - max(x, axis=1, keepdims=True)) / sum(exp(x - max(x, axis=1, keepdims=True)), axis=1, "
        "keepdims=True)");

  // Whatever the node, the printed text is str()'s.
  CHECK(printed(x) == "x");
  CHECK(printed(W - 0.5 * W) == (W - 0.5 * W).str());
  CHECK(printed(fusor::dot(x, v)) == fusor::dot(x, v).str());
  CHECK(printed(fusor::transpose(x)) == fusor::transpose(x).str());
  CHECK(printed(fusor::reshape(x, {-1})) == fusor::reshape(x, {-1}).str());
  CHECK(printed(fusor::sum(x, {0, 1})) == fusor::sum(x, {0, 1}).str());
  CHECK(printed(fusor::where(x > 0, x, -x)) == fusor::where(x > 0, x, -x).str());
  CHECK(printed(fusor::cast<float>(v)) == fusor::cast<float>(v).str());
  CHECK(printed(k % 3) == (k % 3).str());
  CHECK(printed(fusor::view(W, fusor::range(0, 1), fusor::all)) ==
        fusor::view(W, fusor::range(0, 1), fusor::all).str());
  CHECK(printed(fusor::view(W, fusor::range(0, 1), fusor::all)) == "W[0:1, :]");
  CHECK(printed(fusor::dot(x, v)) == "dot(x, v)");

  // An unnamed input prints as its str() names it.
  fusor::vector<double> anonymous;
  CHECK(printed(anonymous + 1.0) == (anonymous + 1.0).str());
  CHECK(printed(anonymous + 1.0).find("<input#") == 0);
}

TEST_CASE("the profile table shows every kernel name whole; short names make a narrow column") {
  fusor::profile_report p;
  p.record("dot(x, w)", 0.25, 1e6);
  p.record("dot(x, w)", 0.75, 1e6);
  p.record("output 0", 0.5, 0);
  const std::string table = p.str();
  // The column is as wide as the longest name (9 characters), not a fixed 40.
  CHECK(table ==
        "kernel     calls   total ms    us/call       MB/call     GB/s\n"
        "dot(x, w)      2   1000.000 500000.000         1.000     0.00\n"
        "output 0       1    500.000 500000.000         0.000     0.00\n");
  CHECK(names_in_table(table) == std::vector<std::string>{"dot(x, w)", "output 0"});
}

TEST_CASE("two steps whose names share a long prefix print distinguishably (wrapped, never cut)") {
  const std::string prefix =
      "mean((-y * log(clip(sigmoid(dot(x, w) + b), 1e-15, 0.999999999999999))) - ((1 - y) * log(1 - "
      "clip(sigmoid(dot(x, w) + b), 1e-15, ";
  const std::string a = prefix + "0.999999999999999))))";
  const std::string b = prefix + "0.999999999999998))))";
  fusor::profile_report p;
  p.record(a, 0.002, 3000);
  p.record(b, 0.001, 3000);
  p.record("sum(w * w)", 0.001, 6000);
  REQUIRE(p.kernels().size() == 3);

  const std::string table = p.str();
  CHECK(names_in_table(table) == std::vector<std::string>{a, b, "sum(w * w)"});
  // Three rows: the first line of each carries the numbers; no line is wider
  // than the column (60 by default) plus the numbers.
  const auto lines = lines_of(table);
  const std::size_t width = lines[0].find("  calls");
  CHECK(width == fusor::profile_report::default_name_width);
  std::size_t rows = 0;
  for (const auto& line : lines) {
    CHECK(line.size() <= width + 52);
    if (line.rfind("  ", 0) != 0) ++rows;
  }
  CHECK(rows == 4);  // the header and three kernels
  // The old table cut both to the same 40 characters; now their texts differ.
  CHECK(table.find("0.999999999999999))))") != std::string::npos);
  CHECK(table.find("0.999999999999998))))") != std::string::npos);

  // A narrower column wraps more, still losing nothing.
  CHECK(names_in_table(p.str(24)) == std::vector<std::string>{a, b, "sum(w * w)"});
  // Without a limit, one line per kernel.
  const std::string wide = p.str(std::numeric_limits<std::size_t>::max());
  CHECK(lines_of(wide).size() == 4);
  CHECK(names_in_table(wide) == std::vector<std::string>{a, b, "sum(w * w)"});
}

TEST_CASE("a name with no space to break at wraps at the column's width") {
  const std::string a(150, 'a');
  const std::string b = std::string(149, 'a') + "b";
  fusor::profile_report p;
  p.record(a, 0.001, 8);
  p.record(b, 0.001, 8);
  CHECK(names_in_table(p.str()) == std::vector<std::string>{a, b});
  CHECK(lines_of(p.str()).size() == 1 + 2 * 3);  // 60 + 58 + 32 characters each
}

TEST_CASE("a profiled function: steps whose labels share a long prefix are told apart in f.profile().str()") {
  fusor::vector<double> x{"x"};
  auto chain = fusor::exp(x) * fusor::tanh(x) + fusor::sqrt(x * x + 1.0) - fusor::log1p(x * x) * 0.5;
  auto f = fusor::function(fusor::inputs(x), fusor::outputs(fusor::sum(chain + 1.0), fusor::sum(chain + 2.0)));
  f.enable_profiling();
  const xt::xtensor<double, 1> xv = {0.5, 1.0, 1.5};
  (void)f(xv);
  (void)f(xv);
  const auto& kernels = f.profile().kernels();
  std::vector<std::string> labels;
  for (const auto& k : kernels) labels.push_back(k.name);
  // Both reductions are there, with labels longer than the old 40-character
  // column and equal in their first 40 characters.
  std::vector<std::string> long_ones;
  for (const auto& l : labels)
    if (l.size() > 40 && l.rfind("sum(", 0) == 0) long_ones.push_back(l);
  REQUIRE(long_ones.size() == 2);
  CHECK(long_ones[0] != long_ones[1]);
  CHECK(long_ones[0].substr(0, 40) == long_ones[1].substr(0, 40));
  for (const auto& k : kernels) CHECK(k.calls == 2);

  const std::string table = f.profile().str();
  CHECK(names_in_table(table) == labels);
}

TEST_CASE("the README's profile table: the names of the logistic-regression example's train()") {
  const std::string mean =
      "mean((-y * log(clip(sigmoid(dot(x, w) + b), 1e-15, 0.999999999999999))) - ((1 - y) * log(1 - "
      "clip(sigmoid(dot(x, w) + b), 1e-15, 0.999999999999999))))";
  const std::vector<std::string> names = {"dot(x, w)",
                                          mean,
                                          "sum(w * w)",
                                          "output 0",
                                          "materialise sigmoid(dot(x, w) + b) - y",
                                          "dot(transpose(x), sigmoid(dot(x, w) + b) - y)",
                                          "mean(sigmoid(dot(x, w) + b) - y)",
                                          "update shared variable 'w' (in place)",
                                          "update shared variable 'b' (in place)"};
  fusor::profile_report p;
  for (const auto& n : names) p.record(n, 1e-3, 1e3);
  const std::string table = p.str();
  CHECK(names_in_table(table) == names);
  // The name column of the README's table, line by line.
  const std::vector<std::string> column = {
      "kernel",
      "dot(x, w)",
      "mean((-y * log(clip(sigmoid(dot(x, w) + b), 1e-15,",
      "   0.999999999999999))) - ((1 - y) * log(1 -",
      "   clip(sigmoid(dot(x, w) + b), 1e-15, 0.999999999999999))))",
      "sum(w * w)",
      "output 0",
      "materialise sigmoid(dot(x, w) + b) - y",
      "dot(transpose(x), sigmoid(dot(x, w) + b) - y)",
      "mean(sigmoid(dot(x, w) + b) - y)",
      "update shared variable 'w' (in place)",
      "update shared variable 'b' (in place)",
  };
  std::vector<std::string> got;
  for (const auto& line : lines_of(table)) {
    std::string name = line.substr(0, 60);
    name.erase(name.find_last_not_of(' ') + 1);
    got.push_back(name);
  }
  CHECK(got == column);
  CHECK(lines_of(table)[0] ==
        "kernel                                                        calls   total ms    us/call       MB/call     GB/s");
}
