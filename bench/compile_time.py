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

    python3 bench/compile_time.py --train [--runs 3]

compiles instead a training step, train() of the logistic regression
(400 x 784) and of the 784-128-10 perceptron, with the gradients by
fusor::grad and with the same gradients written by hand. Measured, never
asserted.
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


TRAIN_COMMON = """#include <fusor/fusor.hpp>
#include <cstdio>
int main() {
  fusor::matrix<%(T)s> x{"x"};
  %(y_decl)s
  %(params)s
  %(forward)s
  %(gradients)s
  auto train = fusor::function(fusor::inputs(x, y), fusor::outputs(cost), fusor::updates(%(updates)s));
  std::printf("%%zu\\n", sizeof(train));
}
"""

LR = dict(T="double", y_decl='fusor::vector<double> y{"y"};',
          params='auto w = fusor::shared(xt::xtensor<double, 1>({784}, 0.0), "w"); auto b = fusor::shared(0.0, "b");',
          forward="auto p = fusor::sigmoid(fusor::dot(x, w) + b);"
                  " auto cost = fusor::mean(-y * fusor::log(p) - (1 - y) * fusor::log(1 - p)) + 0.01 * fusor::sum(w * w);",
          updates="fusor::update(w, w - 0.1 * gw), fusor::update(b, b - 0.1 * gb)")
LR_GRAD = "auto [gw, gb] = fusor::grad(cost, w, b);"
LR_HAND = "auto gw = fusor::dot(fusor::transpose(x), p - y) / 400.0 + 0.02 * w; auto gb = fusor::mean(p - y);"
MLP = dict(T="float", y_decl='fusor::matrix<float> y{"y"};',
           params='auto W1 = fusor::shared(xt::xtensor<float, 2>({784, 128}, 0.0f), "W1");'
                  ' auto b1 = fusor::shared(xt::xtensor<float, 1>({128}, 0.0f), "b1");'
                  ' auto W2 = fusor::shared(xt::xtensor<float, 2>({128, 10}, 0.0f), "W2");'
                  ' auto b2 = fusor::shared(xt::xtensor<float, 1>({10}, 0.0f), "b2");',
           forward="auto a1 = fusor::dot(x, W1) + b1; auto h = fusor::maximum(a1, 0.0f);"
                   " auto z = fusor::dot(h, W2) + b2; auto log_p = fusor::log_softmax(z, 1);"
                   " auto cost = -fusor::mean(fusor::sum(y * log_p, 1));",
           updates="fusor::update(W1, W1 - 0.1f * gW1), fusor::update(b1, b1 - 0.1f * gb1),"
                   " fusor::update(W2, W2 - 0.1f * gW2), fusor::update(b2, b2 - 0.1f * gb2)")
MLP_GRAD = "auto [gW1, gb1, gW2, gb2] = fusor::grad(cost, W1, b1, W2, b2);"
MLP_HAND = ("auto dz = (fusor::exp(log_p) - y) / 64.0f;"
            " auto da1 = fusor::where(a1 > 0.0f, fusor::dot(dz, fusor::transpose(W2)), 0.0f);"
            " auto gW1 = fusor::dot(fusor::transpose(x), da1); auto gb1 = fusor::sum(da1, 0);"
            " auto gW2 = fusor::dot(fusor::transpose(h), dz); auto gb2 = fusor::sum(dz, 0);")


def train_sources():
    out = {}
    for name, model, grad, hand in (("logistic regression", LR, LR_GRAD, LR_HAND), ("MLP 784-128-10", MLP, MLP_GRAD, MLP_HAND)):
        out[name + ", fusor::grad"] = TRAIN_COMMON % dict(model, gradients=grad)
        out[name + ", by hand"] = TRAIN_COMMON % dict(model, gradients=hand)
    return out


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
    ap.add_argument("--train", action="store_true", help="train() with fusor::grad against by hand")
    args = ap.parse_args()
    if args.train:
        with tempfile.TemporaryDirectory() as tmp:
            results = {}
            for name, text in train_sources().items():
                src = os.path.join(tmp, "%d.cpp" % len(results))
                with open(src, "w") as f:
                    f.write(text)
                results[name] = measure(args.cxx, src, src + ".o", args.runs)
            print("train(), %s -std=c++20 -O2 -march=native, median of %d compiles" % (args.cxx, args.runs))
            for name, (t, m) in results.items():
                print("  %-40s %6.2f s  %6.0f MB peak" % (name, t, m / 1024))
        return 0
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
