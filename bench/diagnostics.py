#!/usr/bin/env python3
"""What a user reads after the ten most likely mistakes: the first error line
and the size of g++'s and clang's output for each program in
bench/diagnostics/ (one small complete program per mistake, written as a user
would write it).

    python3 bench/diagnostics.py [--compilers g++,clang++] [--mistakes a,b]
                                 [--include DIR] [--json] [--show]
    python3 bench/diagnostics.py --table-from FILE   # the table of a saved --json

A compile-time mistake is compiled with -std=c++20 -fsyntax-only and fusor's
include directory (from the repository root, with relative paths, so that the
sizes do not depend on where the checkout lives); it must fail. Its "first error line" is the first line of
the compiler's output that contains `error:` (g++ prints "In file included
from" and "In instantiation of" context lines before it; the line number of
the first error line in the output is reported too), and "bytes" is the whole
output, stdout and stderr together.

A run-time mistake (fusor refuses it with an exception derived from
fusor::error, by design) is compiled and linked at -O0 (with assertions, as a
debug build: FUSOR_CHECKED is on), which must succeed, and run; the program
does not catch the exception, so the C++ runtime prints its what(). Its
"first error line" is the first line of what() (the line that contains
`what():`), and "bytes" is everything the compile, the link and the run
printed.

For each mistake, a pair of regular expressions says what the first error
line must contain to name the mistake and to say what to do; the table says
whether it does (yes/no per compiler). Compiles run one at a time, under nice.
Measured, never asserted: the exit status is 0 unless a program did not fail
the way it was meant to.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SRC = os.path.join(ROOT, "bench", "diagnostics")

# id, file, kind, the mistake (as the table names it), regex naming the
# mistake, regex naming what to do (both searched in the first error line).
MISTAKES = [
    ("argument_count", "compile", "wrong number of arguments to a function",
     r"WRONG_ARGUMENT_COUNT|number of arguments", r"one argument per entry of its inputs"),
    ("argument_type", "compile", "an argument of the wrong type (rank) to a function",
     r"RANK_MISMATCH|static rank", r"pass a value|reshape"),
    ("argument_dtype", "run", "an argument of the wrong type (dtype) to a function",
     r"dtype|float", r"allow_downcast|cast"),
    ("rank_mismatch", "compile", "static rank mismatch (an update of another rank)",
     r"RANK_MISMATCH", r"sum\(|reduce|reshape|broadcast"),
    ("view_written", "compile", "writing through a read-only view (get_value(borrow))",
     r"read-only|READ_ONLY", r"get_value\(\)|set_value|copy"),
    ("grad_nonscalar_cost", "compile", "fusor::grad of a non-scalar cost",
     r"NONSCALAR_COST|rank-0 cost", r"sum\(e\)|mean\(e\)"),
    ("grad_integer_target", "compile", "fusor::grad with respect to an integer variable",
     r"INTEGER_TARGET", r"give the variable a float"),
    ("dot_rank", "compile", "fusor::dot of incompatible static ranks",
     r"DOT_RANK|vectors or matrices", r"reshape|with \*"),
    ("missing_instantiate", "run", "no FUSOR_DEVICE_INSTANTIATE / FUSOR_CUDA_INSTANTIATE for a device function",
     r"no device kernel|no CUDA kernel", r"FUSOR_(DEVICE|CUDA)_INSTANTIATE"),
    ("unregistered_shared", "compile", "fusor::shared of an unregistered type",
     r"not registered|UNREGISTERED", r"shared_constructor"),
    ("dtype_mix", "compile", "mixing dtypes without a cast (an update of another dtype)",
     r"DTYPE_MISMATCH", r"fusor::cast"),
    ("borrowed_view_kept", "run", "a borrowed output kept past the next call",
     r"reused its buffer|overwr", r"before calling|Out\(y\)|copy"),
]


def pkg_flags(what):
    if not shutil.which("pkg-config"):
        return []
    p = subprocess.run(["pkg-config", what, "openblas"], capture_output=True, text=True)
    return p.stdout.split() if p.returncode == 0 else []


def run(cmd, timeout=600):
    # From the repository root, with relative paths: the output (and its size)
    # does not depend on where the checkout lives.
    p = subprocess.run(["nice", "-n", "10"] + cmd, capture_output=True, text=True, timeout=timeout, cwd=ROOT)
    return p.returncode, p.stdout + p.stderr


def first_line_with(text, needle):
    for i, line in enumerate(text.splitlines(), 1):
        if needle in line:
            return i, line
    return None, ""


def measure(compiler, mistake, kind, include, tmp):
    src = os.path.relpath(os.path.join(SRC, mistake + ".cpp"), ROOT)
    inc = os.path.abspath(include)
    if not os.path.relpath(inc, ROOT).startswith(".."):
        inc = os.path.relpath(inc, ROOT)
    base = [compiler, "-std=c++20", "-I" + inc] + pkg_flags("--cflags")
    if kind == "compile":
        rc, out = run(base + ["-fsyntax-only", src])
        ok = rc != 0
        line_no, line = first_line_with(out, "error:")
        return {"failed_as_expected": ok, "line": line_no, "first_error": line,
                "bytes": len(out.encode()), "output": out}
    exe = os.path.join(tmp, mistake + "." + os.path.basename(compiler))
    rc, out = run(base + ["-O0", src, "-o", exe] + pkg_flags("--libs") + ["-pthread"])
    if rc != 0:
        line_no, line = first_line_with(out, "error:")
        return {"failed_as_expected": False, "line": line_no, "first_error": line,
                "bytes": len(out.encode()), "output": out, "note": "did not build"}
    rc, run_out = run([exe], timeout=120)
    out += run_out
    line_no, line = first_line_with(out, "what():")
    return {"failed_as_expected": rc != 0 and line_no is not None, "line": line_no,
            "first_error": line.strip(), "bytes": len(out.encode()), "output": out}


def short(line, width):
    # From "error:" (or "what():") on: the source location before it is the
    # compiler's. clang's "requirement '<the condition, with every template
    # argument spelled out>'" is elided (marked …); the message follows it.
    for key in ("error:", "what():"):
        k = line.find(key)
        if k >= 0:
            line = line[k:]
            break
    line = re.sub(r"due to requirement '(.{40,}?)' \"", "due to requirement '…' \"", line)
    line = line.replace("|", "\\|")
    return line if width <= 0 or len(line) <= width else line[: width - 1] + "…"


def print_table(versions, rows, width):
    compilers = list(versions)
    print("Compilers: " + "; ".join(f"{c}: {v}" for c, v in versions.items()) + "\n")
    head = "| mistake | when |"
    rule = "| --- | --- |"
    for c in compilers:
        head += f" {c}: first error line (line no.) | {c} bytes | {c} names mistake / fix |"
        rule += " --- | ---: | --- |"
    print(head)
    print(rule)
    yn = lambda b: "yes" if b else "**no**"
    for row in rows:
        line = f"| {row['title']} | {row['kind']} |"
        for c in compilers:
            r = row["by"][c]
            first = f"`{short(r['first_error'], width)}` ({r['line']})" if r["line"] else "(none)"
            if not r["failed_as_expected"]:
                first = "**did not fail as expected** " + first
            size = str(r["bytes"]) if r["under_4k"] else f"**{r['bytes']}**"
            line += f" {first} | {size} | {yn(r['names_mistake'])} / {yn(r['names_fix'])} |"
        print(line)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--compilers", default="g++,clang++")
    ap.add_argument("--mistakes", default="", help="comma-separated ids (default: all)")
    ap.add_argument("--include", default=os.path.join(ROOT, "include"))
    ap.add_argument("--json", action="store_true", help="print JSON instead of a Markdown table")
    ap.add_argument("--show", action="store_true", help="print each output as well (to stderr)")
    ap.add_argument("--width", type=int, default=0, help="cut a first line in the table to this many characters (0: whole)")
    ap.add_argument("--table-from", metavar="FILE", help="print the Markdown table of a saved --json output")
    a = ap.parse_args()
    if a.table_from:
        with open(a.table_from, encoding="utf-8") as f:
            saved = json.load(f)
        print_table(saved["compilers"], saved["mistakes"], a.width)
        return 0
    compilers = [c for c in a.compilers.split(",") if c]
    chosen = set(m for m in a.mistakes.split(",") if m)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for mid, kind, title, mistake_re, fix_re in MISTAKES:
            if chosen and mid not in chosen:
                continue
            row = {"mistake": mid, "title": title, "kind": "compile time" if kind == "compile" else "run time",
                   "source": os.path.relpath(os.path.join(SRC, mid + ".cpp"), ROOT), "by": {}}
            for c in compilers:
                r = measure(c, mid, kind, a.include, tmp)
                r["names_mistake"] = bool(re.search(mistake_re, r["first_error"]))
                r["names_fix"] = bool(re.search(fix_re, r["first_error"]))
                r["under_4k"] = r["bytes"] < 4096
                if a.show:
                    print(f"==== {mid} ({c}) ====\n{r['output']}", file=sys.stderr)
                del r["output"]
                row["by"][c] = r
            rows.append(row)
    versions = {}
    for c in compilers:
        p = subprocess.run([c, "--version"], capture_output=True, text=True)
        versions[c] = p.stdout.splitlines()[0] if p.stdout else "?"
    if a.json:
        json.dump({"compilers": versions, "mistakes": rows}, sys.stdout, indent=2)
        print()
    else:
        print_table(versions, rows, a.width)
    bad = [r["mistake"] for r in rows for c in compilers if not r["by"][c]["failed_as_expected"]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
