#!/usr/bin/env python3
"""Turns bench_expr's Google Benchmark JSON into bench/results/cpu.md and cpu.png.

    bench/report.py [--json bench/results/cpu.json] [--md bench/results/cpu.md] [--png bench/results/cpu.png]

The table (bench/README.md, "Reading the results"): one row per (workload, N, dtype,
reference), with fusor ("ours") against each reference of the same run.
Statistics are the medians of the repetitions (and their cv). Times are
real (wall-clock) times. Nothing here asserts: the goal lines say met or
missed with the figure.

Definitions used below:
  ratio ours/ref   median time of fusor / median time of the reference, so
                   < 1 means fusor is faster (speed ratio = 1 / this).
  GB/s ours        bytes counted STREAM-style (N * sizeof(T) * (distinct input
                   arrays + outputs), broadcast operands once) / median time.
  STREAM triad     the median rate of STREAM's triad kernel at the same N and
                   dtype in the same run; its best rate (STREAM's own
                   statistic: best iteration, best repetition) is in the header.
"""

import argparse
import json
import math
import os
import platform
import subprocess
import sys
from collections import defaultdict

HERE = os.path.dirname(os.path.abspath(__file__))
RESULTS = os.path.join(HERE, "results")

# Display order of the implementations (references after fusor).
IMPL_ORDER = ["fusor", "hand", "stream", "xtensor", "memcpy", "eigen", "eager", "xsimd", "xsimd_w512", "scalar"]
IMPL_LABEL = {
    "fusor": "fusor assign",
    "hand": "hand loop (__restrict)",
    "stream": "STREAM triad kernel",
    "xtensor": "xtensor noalias",
    "memcpy": "std::memcpy (glibc, non-temporal stores at large N)",
    "eigen": "Eigen",
    "eager": "eager (temporaries)",
    "xsimd": "raw xsimd loop",
    "xsimd_w512": "raw xsimd loop, -mprefer-vector-width=512",
    "scalar": "scalar std:: loop",
}
WORKLOAD_LABEL = {
    "W1.copy": "W1 copy `c = a`",
    "W1.scale": "W1 scale `b = q*c`",
    "W1.add": "W1 add `c = a + b`",
    "W1.triad": "W1 triad `a = b + q*c`",
    "W2": "W2 `o = a*b + c*d - e`",
    "W3": "W3 `o = ((a+b)*(c-d) + e*f)/(g+h)`",
    "W4": "W4 `exp(2*x*y + y)` broadcast",
    "W5.exp": "W5 `exp(a)`",
    "W5.log": "W5 `log(a)`",
    "W5.tanh": "W5 `tanh(a)`",
    "W5.sigmoid": "W5 `sigmoid(a)`",
    "W5.mixed": "W5 `exp(a)*b + log1p(c)`",
}
WORKLOAD_ORDER = list(WORKLOAD_LABEL)
UNIT_NS = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}
BIG = 1 << 26


def n_value(n):
    """Sort key / element count of an N field ('65536' or '200x500')."""
    return math.prod(int(x) for x in n.split("x"))


def n_label(n):
    if "x" in n:
        return n
    v = int(n)
    if v >= 4096 and v & (v - 1) == 0:
        return "2^%d" % (v.bit_length() - 1)
    return str(v)


def fmt_time(ns):
    if ns is None:
        return "—"
    if ns < 1e3:
        return "%.1f ns" % ns
    if ns < 1e6:
        return "%.2f µs" % (ns / 1e3)
    if ns < 1e9:
        return "%.2f ms" % (ns / 1e6)
    return "%.3f s" % (ns / 1e9)


def fmt_gbs(v):
    return "—" if v is None else "%.2f" % v


def load(path):
    with open(path) as f:
        data = json.load(f)
    runs = defaultdict(dict)  # (workload, dtype, impl, N) -> {aggregate: entry}
    errors = []
    for b in data["benchmarks"]:
        name = b.get("run_name", b["name"])
        parts = name.split("/")
        if len(parts) < 4:
            continue
        key = (parts[0], parts[1], parts[2], parts[3])
        if b.get("error_occurred"):
            errors.append("%s: %s" % (name, b.get("error_message", "?")))
            continue
        if b.get("run_type") == "aggregate":
            runs[key][b["aggregate_name"]] = b
        else:  # a file written without --benchmark_report_aggregates_only
            runs[key].setdefault("_iterations", []).append(b)
    # Files with single repetitions: treat the one run as the median.
    for key, aggs in runs.items():
        if "median" not in aggs and aggs.get("_iterations"):
            aggs["median"] = aggs["_iterations"][len(aggs["_iterations"]) // 2]
    return data["context"], runs, errors


class Run:
    """Median statistics of one (workload, dtype, impl, N)."""

    def __init__(self, key, aggs):
        self.workload, self.dtype, self.impl, self.n = key
        med = aggs["median"]
        reps = med.get("reps", 1.0) or 1.0  # STREAM: one iteration = `reps` triads
        scale = UNIT_NS[med.get("time_unit", "ns")]
        self.time_ns = med["real_time"] * scale / reps
        self.cpu_ns = med["cpu_time"] * scale / reps
        self.gbs = med["BW"] / 1e9 if "BW" in med else None
        self.ns_elem = med.get("ns_per_elem")
        cv = aggs.get("cv")
        self.cv = cv["real_time"] if cv else None
        self.best_gbs = None
        if "best_BW" in med:
            mx = aggs.get("max")
            self.best_gbs = (mx or med)["best_BW"] / 1e9
        self.news = med.get("news_per_call")
        self.in_place = med.get("in_place")
        # Preempted: the process got much less CPU time than wall time.
        self.contended = self.time_ns > 0 and self.cpu_ns / self.time_ns < 0.9


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def cpu_flags_summary():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = line.split(":", 1)[1].split()
                    keep = [x for x in flags if x.startswith(("avx512f", "avx512bw", "avx512dq", "avx512vl", "avx2", "fma", "amx"))]
                    return " ".join(sorted(set(keep)))
    except OSError:
        pass
    return "?"


def lscpu_field(field):
    try:
        out = subprocess.run(["lscpu"], capture_output=True, text=True, check=False).stdout
        for line in out.splitlines():
            if line.startswith(field + ":"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--json", default=os.path.join(RESULTS, "cpu.json"))
    ap.add_argument("--md", default=None, help="default: cpu.md next to the JSON")
    ap.add_argument("--png", default=None, help="default: cpu.png next to the JSON")
    args = ap.parse_args()
    json_shown = os.path.relpath(os.path.abspath(args.json), os.path.dirname(HERE))
    if json_shown.startswith(".."):
        json_shown = os.path.abspath(args.json)
    out_dir = os.path.dirname(os.path.abspath(args.json))
    md_path = args.md or os.path.join(out_dir, "cpu.md")
    png_path = args.png or os.path.join(out_dir, "cpu.png")

    context, raw, errors = load(args.json)
    runs = {k: Run(k, v) for k, v in raw.items() if "median" in v}

    def get(workload, dtype, impl, n):
        return runs.get((workload, dtype, impl, n))

    def stream_for(dtype, n):
        return get("W1.triad", dtype, "stream", n)

    sizes = sorted({k[3] for k in runs}, key=n_value)
    big = str(BIG) if str(BIG) in sizes else None
    line_sizes = [s for s in sizes if "x" not in s]
    largest = big or (max(line_sizes, key=n_value) if line_sizes else None)

    # ---------------------------------------------------------------- table
    rows = []
    contended_rows = 0
    groups = sorted({(k[0], k[1], k[3]) for k in runs},
                    key=lambda g: (WORKLOAD_ORDER.index(g[0]) if g[0] in WORKLOAD_ORDER else 99,
                                   0 if g[1] == "double" else 1, n_value(g[2])))
    for workload, dtype, n in groups:
        ours = get(workload, dtype, "fusor", n)
        if not ours:
            continue
        refs = sorted((r for k, r in runs.items() if k[0] == workload and k[1] == dtype and k[3] == n
                       and k[2] != "fusor"), key=lambda r: IMPL_ORDER.index(r.impl) if r.impl in IMPL_ORDER else 99)
        st = stream_for(dtype, n)
        per_elem = workload.startswith(("W4", "W5"))
        for ref in refs:
            if per_elem and ours.ns_elem is not None and ref.ns_elem is not None:
                ours_s = "%s (%.2f ns/el)" % (fmt_time(ours.time_ns), ours.ns_elem)
                ref_s = "%s (%.2f ns/el)" % (fmt_time(ref.time_ns), ref.ns_elem)
            else:
                ours_s, ref_s = fmt_time(ours.time_ns), fmt_time(ref.time_ns)
            mark = ""
            if ours.contended or ref.contended:
                mark = " ‡"
                contended_rows += 1
            cv = "%s / %s" % (
                "—" if ours.cv is None else "%.1f%%" % (100 * ours.cv),
                "—" if ref.cv is None else "%.1f%%" % (100 * ref.cv))
            rows.append("| %s | %s | %s | %s | %s: %s | %.3f%s | %s | %s | %s |" % (
                WORKLOAD_LABEL.get(workload, workload), n_label(n), dtype, ours_s, IMPL_LABEL.get(ref.impl, ref.impl),
                ref_s, ours.time_ns / ref.time_ns, mark, fmt_gbs(ours.gbs), fmt_gbs(st.gbs if st else None), cv))

    # ---------------------------------------------------------------- goals
    goals = []

    def speed(workload, dtype, impl, n):
        """fusor speed relative to impl (ref time / fusor time), or None."""
        o, r = get(workload, dtype, "fusor", n), get(workload, dtype, impl, n)
        if not o or not r:
            return None
        return r.time_ns / o.time_ns

    def cpu_note(workload, dtype, impl, n, invert=False):
        """For rows run on a shared machine: the same ratio in CPU time."""
        o, r = get(workload, dtype, "fusor", n), get(workload, dtype, impl, n)
        if not o or not r or not (o.contended or r.contended) or not o.cpu_ns or not r.cpu_ns:
            return ""
        v = o.cpu_ns / r.cpu_ns if invert else r.cpu_ns / o.cpu_ns
        return " [‡ in CPU time: %.3f×]" % v

    def goal(text, figures, ok):
        if not figures:
            goals.append("- **not measured** — %s" % text)
        else:
            goals.append("- **%s** — %s: %s" % ("met" if ok else "missed", text, "; ".join(figures)))

    if largest:
        at = n_label(largest) + ("" if big else " (largest N of this run; the goal is stated at 2^26)")
        for impl, target, what in [("hand", 0.95, "the hand loop"), ("xtensor", 1.0, "xtensor")]:
            for wl_set, name in [(["W1.copy", "W1.scale", "W1.add", "W1.triad"], "W1"), (["W2"], "W2")]:
                figs, ok = [], True
                for wl in wl_set:
                    s = speed(wl, "double", impl, largest)
                    if s is None:
                        continue
                    figs.append("%s %.3f×%s" % (wl, s, cpu_note(wl, "double", impl, largest)))
                    ok = ok and s >= target
                goal("%s at %s, double: fusor ≥ %.2f× the speed of %s" % (name, at, target, what), figs, ok)
        s = speed("W2", "double", "eager", largest)
        figs = [] if s is None else ["%.2f× at %s%s" % (s, n_label(largest), cpu_note("W2", "double", "eager", largest))]
        others = [(n, speed("W2", "double", "eager", n)) for n in line_sizes]
        others = [(n, v) for n, v in others if v is not None]
        if others:
            figs.append("all sizes: " + ", ".join("%s %.2f×" % (n_label(n), v) for n, v in others))
        goal("W2 double: fusor ≥ 4× faster than eager evaluation with temporaries (at %s)" % n_label(largest),
             figs, s is not None and s >= 4.0)

    w5 = [wl for wl in WORKLOAD_ORDER if wl.startswith("W5")]
    w5n = sorted({k[3] for k in runs if k[0].startswith("W5")}, key=n_value)
    for n in w5n:
        figs, ok = [], True
        for wl in w5:
            o, r = get(wl, "double", "fusor", n), get(wl, "double", "xsimd", n)
            if o and r:
                t = o.time_ns / r.time_ns
                figs.append("%s %.3f× (%.2f vs %.2f ns/el)%s" % (wl.split(".")[1], t, o.ns_elem, r.ns_elem,
                                                                  cpu_note(wl, "double", "xsimd", n, invert=True)))
                ok = ok and t <= 1.10
        goal("W5 N=%s: fusor time ≤ 1.10× a raw xsimd loop compiled with the same flags" % n_label(n), figs, ok)
        figs, ok = [], True
        for wl in w5:
            o, r = get(wl, "double", "fusor", n), get(wl, "double", "xsimd_w512", n)
            if o and r:
                t = o.time_ns / r.time_ns
                figs.append("%s %.3f×%s" % (wl.split(".")[1], t, cpu_note(wl, "double", "xsimd_w512", n, invert=True)))
                ok = ok and t <= 1.10
        if figs:
            goal("(informational) W5 N=%s: fusor time ≤ 1.10× the raw xsimd loop built with -mprefer-vector-width=512"
                 % n_label(n), figs, ok)
        figs, ok = [], True
        for wl in w5:
            s = speed(wl, "double", "scalar", n)
            if s is not None:
                figs.append("%s %.2f×%s" % (wl.split(".")[1], s, cpu_note(wl, "double", "scalar", n)))
                ok = ok and s >= 3.0
        goal("W5 N=%s: fusor ≥ 3× faster than a scalar std:: loop" % n_label(n), figs, ok)

    # The STREAM-relative anchors G1, G2 (bench/README.md), informational.
    extra = []
    if largest:
        st = stream_for("double", largest)
        if st and st.best_gbs:
            o = get("W1.triad", "double", "fusor", largest)
            if o and o.gbs:
                extra.append("- (G1) W1 triad at %s: fusor %.2f GB/s = %.3f× the STREAM triad best rate %.2f GB/s "
                             "(goal ≥ 0.90×): **%s**" % (n_label(largest), o.gbs, o.gbs / st.best_gbs, st.best_gbs,
                                                       "met" if o.gbs / st.best_gbs >= 0.90 else "missed"))
            o = get("W2", "double", "fusor", largest)
            if o and o.gbs:
                extra.append("- (G2) W2 at %s: fusor %.2f GB/s counted = %.3f× the STREAM triad best rate (goal ≥ 1.0×): "
                             "**%s**" % (n_label(largest), o.gbs, o.gbs / st.best_gbs,
                                         "met" if o.gbs / st.best_gbs >= 1.0 else "missed"))
        s = speed("W3", "double", "hand", largest)
        if s is not None:
            extra.append("- W3 at %s: fusor %.3f× the speed of the hand loop (goal ≥ 0.95×): **%s**"
                         % (n_label(largest), s, "met" if s >= 0.95 else "missed"))
    for n in sorted({k[3] for k in runs if k[0] == "W4"}):
        for impl in ["scalar", "xsimd", "xsimd_w512", "eigen"]:
            s = speed("W4", "double", impl, n)
            if s is not None:
                if impl in ("scalar", "xsimd"):
                    extra.append("- W4 %s: fusor %.3f× the speed of the %s (goal ≥ 0.9× the loop): **%s**"
                                 % (n, s, IMPL_LABEL[impl], "met" if s >= 0.9 else "missed"))
                else:
                    extra.append("- W4 %s: fusor %.3f× the speed of %s (informational)" % (n, s, IMPL_LABEL[impl]))

    # Per-call overhead at the smallest N, and allocation / in-place facts.
    facts = []
    fusor_runs = [r for r in runs.values() if r.impl == "fusor"]
    news = sorted({r.news for r in fusor_runs if r.news is not None})
    if news:
        facts.append("- operator new calls per fusor evaluation (steady state): %s" % ", ".join("%g" % x for x in news))
    not_in_place = sorted({"%s/%s/%s" % (r.workload, r.dtype, r.n) for r in fusor_runs if r.in_place == 0})
    facts.append("- fusor::assign wrote into the destination's own buffer in every row"
                 if not not_in_place else "- fusor::assign installed a fresh buffer in: " + ", ".join(not_in_place))
    if line_sizes:
        n0 = line_sizes[0]
        parts = []
        for wl in ["W1.copy", "W1.triad", "W2", "W3"]:
            o, h = get(wl, "double", "fusor", n0), get(wl, "double", "hand", n0)
            if o and h:
                parts.append("%s +%.0f ns" % (wl, o.time_ns - h.time_ns))
        if parts:
            facts.append("- fusor time minus hand-loop time at N=%s (fixed cost per call + in-cache loop cost), double: %s"
                         % (n_label(n0), ", ".join(parts)))

    # ---------------------------------------------------------------- header
    ctx = context
    st_best = []
    for dtype in ["double", "float"]:
        for n in line_sizes:
            st = stream_for(dtype, n)
            if st and st.best_gbs and n == largest:
                st_best.append("%s %s: best %.2f GB/s, median %.2f GB/s" % (dtype, n_label(n), st.best_gbs, st.gbs))
    load_avg = ctx.get("load_avg")
    cores = lscpu_field("Core(s) per socket")
    header = [
        "# fusor CPU benchmarks (W1–W5)",
        "",
        "Generated by `bench/report.py` from `%s`. Measured, never asserted. Workloads and goals: "
        "`bench/README.md`." % json_shown,
        "",
        "| | |",
        "|---|---|",
        "| machine | %s (%s), %s logical CPUs%s, %s MHz; L3 %s; %s |" % (
            cpu_model(), lscpu_field("Hypervisor vendor") and "KVM guest" or "host", ctx.get("num_cpus", "?"),
            " (%s cores)" % cores if cores else "", ctx.get("mhz_per_cpu", "?"),
            next(("%d MiB" % (c["size"] >> 20) for c in ctx.get("caches", []) if c.get("level") == 3), "?"),
            cpu_flags_summary()),
        "| threads used | 1 |",
        "| compiler | %s |" % ctx.get("compiler", "?"),
        "| flags | `%s` |" % ctx.get("flags", "?"),
        "| xsimd arch | %s (%s doubles per batch) |" % (ctx.get("xsimd_arch", "?"), ctx.get("xsimd_double_lanes", "?")),
        "| libraries | fusor %s, xsimd %s, xtensor %s, Eigen %s (SIMD: %s), Google Benchmark (Debian libbenchmark, "
        "library_build_type=%s) |" % (ctx.get("fusor", "?"), ctx.get("xsimd", "?"), ctx.get("xtensor", "?"),
                                      ctx.get("eigen", "?"), ctx.get("eigen_simd", "?"),
                                      ctx.get("library_build_type", "?")),
        "| date | %s |" % ctx.get("date", "?"),
        "| load average at start | %s |" % (", ".join("%.2f" % x for x in load_avg) if load_avg else "?"),
        "| STREAM triad in this run | %s |" % ("; ".join(st_best) if st_best else "—"),
        "| statistic | median of the repetitions (real time); cv = stddev/mean over repetitions, ours / ref |",
        "",
    ]

    out = header
    out += ["## Goals (issue: W1 and W2 at 2^26 ≥ 0.95× the hand loop and ≥ 1.0× xtensor; W2 ≥ 4× eager; "
            "W5 ≤ 1.10× the time of a raw xsimd loop and ≥ 3× faster than a scalar std:: loop)", ""]
    out += goals + [""]
    if extra:
        out += ["Other anchors (bench/README.md), informational:", ""] + extra + [""]
    out += ["Facts recorded by the benchmarks:", ""] + facts + [""]
    if errors:
        out += ["**Benchmarks that stopped with an error (wrong values or a failure):**", ""]
        out += ["- `%s`" % e for e in errors] + [""]
    out += [
        "## Results",
        "",
        "ratio ours/ref = median time of fusor / median time of the reference (< 1: fusor faster; the speed ratio of "
        "the goals is its inverse). GB/s counted STREAM-style: N·sizeof(T)·(distinct input arrays + outputs), "
        "broadcast operands once. STREAM triad = median rate of STREAM's triad kernel at the same N and dtype in "
        "this run. W4/W5 also give ns per element. ‡: fusor or the reference got < 90 % of a CPU during its "
        "repetitions (the machine was shared); read such rows with care.",
        "",
        "| Workload | N | dtype | ours (median) | reference (median) | ratio ours/ref | GB/s ours | STREAM triad same run | cv |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    out += rows
    if contended_rows:
        out += ["", "‡ rows: %d of %d. Goal lines add the same ratio in CPU time for such rows "
                "(a process that is preempted keeps its CPU time; for memory-bound rows the bandwidth was shared "
                "as well, so neither figure is clean)." % (contended_rows, len(rows))]
    out += ["", "Plot: `cpu.png` (GB/s vs N, W1 triad and W2)."]
    with open(md_path, "w") as f:
        f.write("\n".join(out) + "\n")
    print("wrote", md_path)

    # ---------------------------------------------------------------- plot
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        from matplotlib.ticker import ScalarFormatter
    except ImportError:
        print("report.py: matplotlib is not available to %s; no plot written" % sys.executable, file=sys.stderr)
        return 0
    dtypes = [d for d in ["double", "float"] if any(k[1] == d and k[0] in ("W1.triad", "W2") for k in runs)]
    fig, axes = plt.subplots(len(dtypes), 2, figsize=(13, 4.8 * len(dtypes)), squeeze=False)
    styles = {"fusor": ("C0", "o", "-"), "hand": ("C1", "s", "--"), "xtensor": ("C2", "^", "-."),
              "eigen": ("C3", "v", ":"), "eager": ("C4", "x", ":"), "stream": ("k", "d", "--")}
    for row, dtype in enumerate(dtypes):
        for col, wl in enumerate(["W1.triad", "W2"]):
            ax = axes[row][col]
            if not any(k[0] == wl and k[1] == dtype and k[2] == "fusor" for k in runs):
                ax.set_axis_off()
                continue
            impls = [i for i in IMPL_ORDER if any(k[0] == wl and k[1] == dtype and k[2] == i for k in runs)]
            for impl in impls:
                pts = sorted(((n_value(k[3]), r.gbs) for k, r in runs.items()
                              if k[0] == wl and k[1] == dtype and k[2] == impl and r.gbs), key=lambda p: p[0])
                if not pts:
                    continue
                c, m, ls = styles.get(impl, ("C7", ".", "-"))
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=c, marker=m, linestyle=ls,
                        label=IMPL_LABEL.get(impl, impl) + (" (median)" if impl == "stream" else ""))
                if impl == "stream":
                    best = sorted(((n_value(k[3]), r.best_gbs) for k, r in runs.items()
                                   if k[0] == wl and k[1] == dtype and k[2] == impl and r.best_gbs),
                                  key=lambda p: p[0])
                    ax.plot([p[0] for p in best], [p[1] for p in best], color="k", marker="d", linestyle=":",
                            alpha=0.5, label="STREAM triad kernel (best)")
            if wl == "W2":  # STREAM triad of the same run as the reference line
                pts = sorted(((n_value(k[3]), r.gbs) for k, r in runs.items()
                              if k[0] == "W1.triad" and k[1] == dtype and k[2] == "stream" and r.gbs))
                if pts:
                    ax.plot([p[0] for p in pts], [p[1] for p in pts], color="k", marker="d", linestyle="--",
                            alpha=0.6, label="STREAM triad kernel (median)")
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.yaxis.set_major_formatter(ScalarFormatter())
            ax.yaxis.set_minor_formatter(ScalarFormatter())
            ax.tick_params(axis="y", which="minor", labelsize=7)
            ax.set_xlabel("N (elements per array)")
            ax.set_ylabel("GB/s (STREAM counting)")
            ax.set_title("%s, %s" % (WORKLOAD_LABEL[wl].replace("`", ""), dtype))
            ax.grid(True, which="both", alpha=0.3)
            ax.legend(fontsize=8)
    fig.suptitle("fusor CPU benchmarks, %s, 1 thread, %s" % (cpu_model(), ctx.get("date", "")[:10]), fontsize=10)
    fig.tight_layout()
    fig.savefig(png_path, dpi=110)
    print("wrote", png_path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
