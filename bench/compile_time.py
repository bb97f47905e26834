#!/usr/bin/env python3
"""What an expression costs the compiler: fusor against xtensor, same expression.

    python3 bench/compile_time.py [--nodes 50] [--runs 3] [--cxx g++]

Writes two small programs into a temporary directory — one evaluates an
elementwise expression of N nodes over eight arrays with fusor::eval, the
other the same expression with xtensor (assigned to an xt::xtensor) — and
compiles each RUNS times with the flags fusor's own builds use (-std=c++20
-O2 -march=native). Prints the median wall time and the largest peak memory
(max RSS) of the compiler for each, and their ratio. A third program, just
`#include <fusor/fusor.hpp>`, shows what the umbrella header costs alone.
Measured, never asserted.
"""
import argparse
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def expression(nodes, names):
    """A left-deep chain of elementwise operations with `nodes` operators over `names`."""
    ops = ["+", "*", "-", "*", "+"]
    funcs = ["exp", "tanh", "sqrt", "log1p"]
    e = names[0]
    for i in range(1, nodes + 1):
        leaf = names[i % len(names)]
        if i % 7 == 0:
            f = funcs[(i // 7) % len(funcs)]
            e = "%s(%s)" % (f, e) if f != "sqrt" and f != "log1p" else "%s(abs(%s))" % (f, e)
        else:
            e = "(%s %s %s)" % (e, ops[i % len(ops)], leaf)
    return e


def fusor_source(expr):
    return """#include <fusor/fusor.hpp>
#include <cstdio>
int main() {
  fusor::vector<double> a{"a"}, b{"b"}, c{"c"}, d{"d"}, e{"e"}, f{"f"}, g{"g"}, h{"h"};
  const xt::xtensor<double, 1> v = xt::ones<double>({16});
  using fusor::exp; using fusor::tanh; using fusor::sqrt; using fusor::log1p; using fusor::abs;
  const xt::xtensor<double, 1> r = fusor::eval(%s, a = v, b = v, c = v, d = v, e = v, f = v, g = v, h = v);
  std::printf("%%g\\n", r(0));
}
""" % expr


def xtensor_source(expr):
    return """#include <xtensor/xtensor.hpp>
#include <xtensor/xmath.hpp>
#include <xtensor/xbuilder.hpp>
#include <cstdio>
int main() {
  const xt::xtensor<double, 1> a = xt::ones<double>({16});
  const auto &b = a, &c = a, &d = a, &e = a, &f = a, &g = a, &h = a;
  using xt::exp; using xt::tanh; using xt::sqrt; using xt::log1p; using xt::abs;
  const xt::xtensor<double, 1> r = %s;
  std::printf("%%g\\n", r(0));
}
""" % expr


def compile_once(cxx, source, out):
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t0 = time.monotonic()
    proc = subprocess.run([cxx, "-std=c++20", "-O2", "-march=native", "-I", os.path.join(ROOT, "include"),
                           "-isystem", "/usr/include/x86_64-linux-gnu/openblas-pthread", "-c", source, "-o", out],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.monotonic() - t0
    if proc.returncode != 0:
        sys.stdout.write(proc.stdout[-4000:])
        raise SystemExit("compile_time.py: %s failed to compile" % source)
    # ru_maxrss of children is the largest any child reached so far (KiB): a
    # fresh process per measurement gives the compiler's own peak.
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def measure(cxx, source, out, runs):
    times, peaks = [], []
    for _ in range(runs):
        # One process per compile, so that ru_maxrss is this compile's peak.
        proc = subprocess.run([sys.executable, __file__, "--one", cxx, source, out], stdout=subprocess.PIPE,
                              text=True, check=True)
        t, m = proc.stdout.split()
        times.append(float(t))
        peaks.append(int(m))
    return statistics.median(times), max(peaks)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        t, m = compile_once(sys.argv[2], sys.argv[3], sys.argv[4])
        print(t, m)
        return 0
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    args = ap.parse_args()
    expr = expression(args.nodes, list("abcdefgh"))
    with tempfile.TemporaryDirectory() as tmp:
        files = {
            "fusor::eval": fusor_source(expr),
            "xtensor": xtensor_source(expr),
            "#include <fusor/fusor.hpp> only": "#include <fusor/fusor.hpp>\nint main() { return 0; }\n",
        }
        results = {}
        for name, text in files.items():
            src = os.path.join(tmp, "%d.cpp" % len(results))
            with open(src, "w") as f:
                f.write(text)
            results[name] = measure(args.cxx, src, src + ".o", args.runs)
        print("%d-node elementwise expression, %s -std=c++20 -O2 -march=native, median of %d compiles"
              % (args.nodes, args.cxx, args.runs))
        for name, (t, m) in results.items():
            print("  %-34s %6.2f s  %6.0f MB peak" % (name, t, m / 1024))
        ft, fm = results["fusor::eval"]
        xt_, xm = results["xtensor"]
        print("  fusor / xtensor: %.2f× the time, %.2f× the memory" % (ft / xt_, fm / xm))
    return 0


if __name__ == "__main__":
    sys.exit(main())
