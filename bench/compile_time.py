#!/usr/bin/env python3
"""What fusor costs the compiler: wall time, peak memory and object size of
small programs, each compiled alone (one compiler at a time), at -O2 and at
-O0 -g.

    python3 bench/compile_time.py [--runs 3] [--cases a,b] [--modes O2,O0g]
                                  [--include DIR] [--define NAME[=V]] [--flag=F] [--pch]
    python3 bench/compile_time.py --against OLD_INCLUDE [--pairs 2] [--cases a,b | --unit SRC --build-dir DIR]

Cases (names for --cases):
  include      `#include <fusor/fusor.hpp>` and an empty main
  eval1        one fusor::eval of a small expression
  eval50       a 50-node elementwise expression with fusor::eval ...
  xtensor50    ... and the same expression assigned to an xt::xtensor
  lr_hand      train() of the logistic regression (400 x 784), gradients by hand
  lr_grad      the same with fusor::grad
  mlp_hand     train() of the 784-128-10 perceptron, gradients by hand
  mlp_grad     the same with fusor::grad
  mlp_example  examples/mlp.cpp, the whole unit

Modes: O2 (-O2 -march=native) and O0g (-O0 -g, as a debug build or a test
build is compiled), the defaults; on request O2g (-O2 -march=native -g, a
release build with debug information) and O0 (-O0 alone), to compare the size
of an object with and without debug information, and O0gn (-O0 -g
-march=native, a debug build for the machine's own vectors: O0g compiles
for baseline x86-64, SSE2, and never reaches the AVX2 or AVX-512 code).
Every program is compiled with -std=c++20 and fusor's include directory
(--include chooses another, e.g. an older checkout's, for a before/after
table); --define adds -D flags (e.g. the compiled-runtime mode), --flag any
other flag (--flag=--param=ggc-min-heapsize=1048576). --pch measures the
documented precompiled-header recipe: `#include <fusor/fusor.hpp>` is
precompiled once per mode with that mode's flags (its own line in the output),
and every case that includes fusor is compiled with it (-include, and
-Werror=invalid-pch, so that a header the compiler cannot use fails the case
instead of being parsed again unseen); xtensor50 is compiled as usual.

Each compile runs in a process of its own, so that its peak resident memory
(ru_maxrss) is its own, under an address-space cap (--limit-gb, default 12):
a compile over it is reported as failed rather than exhausting the machine.
The median wall time of --runs compiles is reported, with the largest peak.
Measured, never asserted.

Before and after (--against DIR, another include directory, e.g. the previous
commit's headers from `git archive HEAD include | tar -x -C /tmp/old`): each
case is compiled with both, the two compiles started together, one per core,
--pairs times. The speed of these machines drifts by 5-10 % within minutes, so
compiles run one after the other compare the machine as much as the headers;
compiled side by side, both see the same machine, and only the ratio within a
pair is a figure. --unit compiles one of the project's own units (a test, an
example) instead of the cases, with its build's flags, read from DIR's
compile_commands.json (--build-dir, default build-test) without the
precompiled header: `--against /tmp/old/include --unit test/test_grad_second.cpp`.
"""
import argparse
import json
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODES = {
    "O2": ["-O2", "-march=native"],
    "O2g": ["-O2", "-march=native", "-g"],
    "O0": ["-O0"],
    "O0g": ["-O0", "-g"],
    # A debug build for the machine's own instruction set (meson's debug
    # buildtype with fusor's `native` option): unoptimised code over the
    # widest vectors, where O0g compiles the baseline SSE2 ones.
    "O0gn": ["-O0", "-g", "-march=native"],
}


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


def fusor_eval_source(expr):
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

EVAL1 = """#include <fusor/fusor.hpp>
#include <cstdio>
int main() {
  fusor::vector<double> x{"x"};
  const xt::xtensor<double, 1> v = xt::ones<double>({16});
  const xt::xtensor<double, 1> r = fusor::eval(2.0 * x + fusor::exp(x), x = v);
  std::printf("%g\\n", r(0));
}
"""


def sources():
    expr = expression(50, list("abcdefgh"))
    out = {
        "include": ("`#include <fusor/fusor.hpp>` only", "#include <fusor/fusor.hpp>\nint main() { return 0; }\n"),
        "eval1": ("one `eval`", EVAL1),
        "eval50": ("50-node `eval`", fusor_eval_source(expr)),
        "xtensor50": ("50-node expression, xtensor", xtensor_source(expr)),
        "lr_hand": ("logistic regression `train()`, by hand", TRAIN_COMMON % dict(LR, gradients=LR_HAND)),
        "lr_grad": ("logistic regression `train()`, `grad`", TRAIN_COMMON % dict(LR, gradients=LR_GRAD)),
        "mlp_hand": ("perceptron `train()`, by hand", TRAIN_COMMON % dict(MLP, gradients=MLP_HAND)),
        "mlp_grad": ("perceptron `train()`, `grad`", TRAIN_COMMON % dict(MLP, gradients=MLP_GRAD)),
    }
    with open(os.path.join(ROOT, "examples", "mlp.cpp")) as f:
        out["mlp_example"] = ("`examples/mlp.cpp`, whole unit", f.read())
    return out


def compile_once(cmd, limit_gb):
    def cap():
        # A compile that would exhaust the machine is stopped at the cap and
        # reported as such (a gradient unit at -O0 -g has needed over 20 GB).
        limit = int(limit_gb * 2**30)
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    t0 = time.monotonic()
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, preexec_fn=cap)
    seconds = time.monotonic() - t0
    if proc.returncode != 0:
        sys.stderr.write(proc.stdout[-2000:])
        return -seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return seconds, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss


def measure(cmd, out, runs, limit_gb):
    """(median seconds, peak KiB, object bytes), or None for a compile that failed (over the memory cap)."""
    times, peaks = [], []
    for _ in range(runs):
        # One process per compile: ru_maxrss of its children is this compile's peak.
        proc = subprocess.run([sys.executable, __file__, "--one", json.dumps(cmd), str(limit_gb)],
                              stdout=subprocess.PIPE, text=True, check=True)
        t, m = proc.stdout.split()
        if float(t) < 0:
            return None
        times.append(float(t))
        peaks.append(int(m))
    return statistics.median(times), max(peaks), os.path.getsize(out)


def case_flags(args, mode, include):
    """The flags every compile of `mode` against the headers in `include` gets."""
    return ([args.cxx, "-std=c++20"] + MODES[mode] +
            ["-I", include, "-isystem", "/usr/include/x86_64-linux-gnu/openblas-pthread"] +
            ["-D" + d for d in args.define] + args.flag)


def case_command(args, mode, include, src, out):
    """The command compiling a case's source `src` in `mode` against the headers in `include`."""
    return case_flags(args, mode, include) + ["-c", src, "-o", out]


PCH_HEADER = "#include <fusor/fusor.hpp>\n"


def pch_command(args, mode, include, pch_dir):
    """The command precompiling `#include <fusor/fusor.hpp>` as pch_dir/fusor/pch.hpp.gch, with
    the flags of the units of `mode` (docs/compile-time.md, "A precompiled header")."""
    header = os.path.join(pch_dir, "fusor", "pch.hpp")
    os.makedirs(os.path.dirname(header), exist_ok=True)
    with open(header, "w") as f:
        f.write(PCH_HEADER)
    return case_flags(args, mode, include) + ["-x", "c++-header", header, "-o", header + ".gch"]


def with_pch(cmd, pch_dir):
    """cmd reading the precompiled header first; a header it cannot use stops the compile
    instead of being parsed again in silence."""
    return cmd[:1] + ["-I", pch_dir, "-include", "fusor/pch.hpp", "-Winvalid-pch",
                      "-Werror=invalid-pch"] + cmd[1:]


def one_process(cmd, limit_gb):
    """A compile in a process of its own (its peak is its own), started and not waited for."""
    return subprocess.Popen([sys.executable, __file__, "--one", json.dumps(cmd), str(limit_gb)],
                            stdout=subprocess.PIPE, text=True)


def measure_pairs(cmds, outs, pairs, limit_gb):
    """[(old, new)] per pair, each (seconds, peak KiB, object bytes) or None: cmds[0] and
    cmds[1] compiled side by side, the one started first alternating."""
    results = []
    for k in range(pairs):
        order = [0, 1] if k % 2 == 0 else [1, 0]
        procs = {i: one_process(cmds[i], limit_gb) for i in order}
        pair = [None, None]
        for i in (0, 1):
            t, m = procs[i].communicate()[0].split()
            if procs[i].returncode == 0 and float(t) >= 0:
                pair[i] = (float(t), int(m), os.path.getsize(outs[i]))
        results.append(tuple(pair))
    return results


def unit_command(unit, build_dir):
    """The compile command of the project's unit `unit` (a path from the
    repository's root) in build_dir's compile_commands.json, as a list with
    absolute include directories (it runs from anywhere), and the unit's path:
    the unit's own entry, or its unity group's with the unit as the source.
    The source, the object, the precompiled header and the dependency files
    are left out."""
    with open(os.path.join(build_dir, "compile_commands.json")) as f:
        entries = json.load(f)
    target = os.path.realpath(os.path.join(ROOT, unit))

    def source(e):
        return os.path.realpath(os.path.join(e["directory"], e["file"]))

    entry = next((e for e in entries if source(e) == target), None)
    if entry is None:  # a unit compiled in a group (meson's unity build)
        for e in entries:
            try:
                with open(source(e)) as f:
                    if target in (os.path.realpath(line.strip()[len("#include<"):-1])
                                  for line in f if line.startswith("#include<")):
                        entry = e
                        break
            except OSError:
                continue
    if entry is None:
        raise SystemExit("%s: not a unit of %s (compile_commands.json)" % (unit, build_dir))
    cmd, skip = [], False
    for w in shlex.split(entry["command"]):
        if skip:
            skip = False
        elif w in ("-include", "-MQ", "-MF", "-o", "-c"):
            skip = True  # the flag and its argument (-c's is the source, given again by the caller)
        elif w in ("-MD", "-Winvalid-pch", "-Werror=invalid-pch", "-fpch-deps", "-fdiagnostics-color=always"):
            pass
        elif w.startswith("-I") and len(w) > 2:  # absolute, so that the compile can run anywhere
            cmd.append("-I" + os.path.normpath(os.path.join(entry["directory"], w[2:])))
        else:
            cmd.append(w)
    return cmd, target


def with_include(cmd, include):
    """cmd with the project's include directory replaced by `include`."""
    ours = os.path.realpath(os.path.join(ROOT, "include"))
    return [("-I" + include) if w.startswith("-I") and os.path.realpath(w[2:]) == ours else w for w in cmd]


def compare(args):
    """Before (--against) and after (--include), side by side: one line per pair, then the
    ratios' median per case."""
    print("before: %s\nafter:  %s" % (args.against, args.include))
    with tempfile.TemporaryDirectory() as tmp:
        jobs = []  # (name, mode, command for an include directory and an object)
        if args.unit:
            base, src = unit_command(args.unit, args.build_dir)
            jobs.append((args.unit, "build", lambda inc, out: with_include(base, inc) + ["-c", src, "-o", out]))
        else:
            all_sources = sources()
            names = list(all_sources) if args.cases == "all" else args.cases.split(",")
            for name in names:
                src = os.path.join(tmp, name + ".cpp")
                with open(src, "w") as f:
                    f.write(all_sources[name][1])
                for mode in args.modes.split(","):
                    jobs.append((name, mode, lambda inc, out, src=src, mode=mode:
                                 case_command(args, mode, inc, src, out)))
        for name, mode, make in jobs:
            outs = [os.path.join(tmp, "before.o"), os.path.join(tmp, "after.o")]
            cmds = [make(args.against, outs[0]), make(args.include, outs[1])]
            ratios = []
            for k, (old, new) in enumerate(measure_pairs(cmds, outs, args.pairs, args.limit_gb)):
                if old is None or new is None:
                    print("%-12s %-5s pair %d: a compile failed (over %.0f GB of address space?)"
                          % (name, mode, k + 1, args.limit_gb), flush=True)
                    continue
                ratios.append(new[0] / old[0])
                print("%-12s %-5s pair %d: before %7.2f s %6.0f MB %6.1f MB object, after %7.2f s %6.0f MB "
                      "%6.1f MB object: %.3f x the time" % (name, mode, k + 1, old[0], old[1] / 1024, old[2] / 2**20,
                                                           new[0], new[1] / 1024, new[2] / 2**20, ratios[-1]),
                      flush=True)
            if ratios:
                print("%-12s %-5s median of %d pairs: %.3f x the time" % (name, mode, len(ratios),
                                                                         statistics.median(ratios)), flush=True)
    return 0


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--one":
        t, m = compile_once(json.loads(sys.argv[2]), float(sys.argv[3]))
        print(t, m)
        return 0
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--cxx", default=os.environ.get("CXX", "g++"))
    ap.add_argument("--cases", default="all")
    ap.add_argument("--modes", default="O2,O0g")
    ap.add_argument("--include", default=os.path.join(ROOT, "include"))
    ap.add_argument("--define", action="append", default=[])
    ap.add_argument("--flag", action="append", default=[],
                    help="another compiler flag for every compile (--flag=--param=ggc-min-heapsize=1048576)")
    ap.add_argument("--pch", action="store_true",
                    help="precompile `#include <fusor/fusor.hpp>` once per mode (timed on its own line) "
                         "and compile every fusor case with it; xtensor50 without")
    ap.add_argument("--link", default="", help="extra arguments after the source (a library to link)")
    ap.add_argument("--json", help="also write the figures to this file")
    ap.add_argument("--limit-gb", type=float, default=12.0,
                    help="address-space cap per compile; a compile over it is reported as failed (default 12)")
    ap.add_argument("--against", help="another include directory: compile each case with both, side by side")
    ap.add_argument("--pairs", type=int, default=2, help="side-by-side pairs per case with --against (default 2)")
    ap.add_argument("--unit", help="with --against: one of the project's units (e.g. test/test_grad_second.cpp) "
                                   "instead of the cases, compiled with its build's flags")
    ap.add_argument("--build-dir", default=os.path.join(ROOT, "build-test"),
                    help="the build whose compile_commands.json gives --unit's flags (default build-test)")
    args = ap.parse_args()
    if args.unit and not args.against:
        ap.error("--unit compares two include directories: give --against too")
    if args.pch and args.against:
        ap.error("--pch measures one include directory's cases; it does not combine with --against")
    if args.against:
        return compare(args)
    all_sources = sources()
    names = list(all_sources) if args.cases == "all" else args.cases.split(",")
    modes = args.modes.split(",")
    results = {}
    with tempfile.TemporaryDirectory() as tmp:
        pch_dirs = {}
        if args.pch:
            for mode in modes:
                pch_dirs[mode] = os.path.join(tmp, "pch-" + mode)
                cmd = pch_command(args, mode, args.include, pch_dirs[mode])
                r = measure(cmd, cmd[-1], 1, args.limit_gb)
                if r is None:
                    raise SystemExit("the precompiled header for %s did not compile" % mode)
                print("%-12s %-4s %7.2f s %7.0f MB peak %8.1f MB header (built once per mode)"
                      % ("pch", mode, r[0], r[1] / 1024, r[2] / 2**20), flush=True)
        for name in names:
            title, text = all_sources[name]
            src = os.path.join(tmp, name + ".cpp")
            with open(src, "w") as f:
                f.write(text)
            for mode in modes:
                out = os.path.join(tmp, "%s.%s.o" % (name, mode))
                cmd = case_command(args, mode, args.include, src, out)
                if args.pch and "<fusor/fusor.hpp>" in text:
                    cmd = with_pch(cmd, pch_dirs[mode])
                r = measure(cmd, out, args.runs, args.limit_gb)
                results[(name, mode)] = r
                if r is None:
                    print("%-12s %-4s failed (over %.0f GB of address space?)" % (name, mode, args.limit_gb), flush=True)
                else:
                    t, m, size = r
                    print("%-12s %-4s %7.2f s %7.0f MB peak %8.1f MB object" % (name, mode, t, m / 1024, size / 2**20),
                          flush=True)
    print()
    print("| case | " + " | ".join("%s: s, MB peak, MB object" % m for m in modes) + " |")
    print("| --- | " + " | ".join("---:" for _ in modes) + " |")
    for name in names:
        cells = []
        for mode in modes:
            r = results[(name, mode)]
            if r is None:
                cells.append("failed (over %.0f GB)" % args.limit_gb)
            else:
                t, m, size = r
                cells.append("%.1f s, %.0f MB, %.1f MB" % (t, m / 1024, size / 2**20))
        print("| %s | %s |" % (all_sources[name][0], " | ".join(cells)))
    if "eval50" in names and "xtensor50" in names:
        for mode in modes:
            if results[("eval50", mode)] and results[("xtensor50", mode)]:
                ft, fm, _ = results[("eval50", mode)]
                xt_, xm, _ = results[("xtensor50", mode)]
                print("50-node eval / xtensor, %s: %.2f x the time, %.2f x the memory" % (mode, ft / xt_, fm / xm))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"%s/%s" % k: (dict(seconds=v[0], peak_kb=v[1], object_bytes=v[2]) if v else None)
                       for k, v in results.items()}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
