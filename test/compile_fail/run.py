#!/usr/bin/env python3
"""Compile-fail check (Eigen's failtest, ok/ko pair).

The source must compile with -DFUSOR_SHOULD_COMPILE (proving the rest of the
file is valid), and must fail to compile without it. Every `// expect: REGEX`
line in the source must then match the compiler's diagnostics, so the failure
is the one intended, with the message users will read.
"""
import argparse
import re
import subprocess
import sys


def compile_once(cmd, source, extra):
    proc = subprocess.run(cmd + extra + ["-fsyntax-only", source], capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--std", default="c++20")
    ap.add_argument("--include", action="append", default=[])
    ap.add_argument("compiler", nargs=argparse.REMAINDER)
    a = ap.parse_args()
    cmd = [c for c in a.compiler if c != "--"]
    base = cmd + ["-std=" + a.std] + ["-I" + i for i in a.include]

    text = open(a.source, encoding="utf-8").read()
    expects = re.findall(r"//\s*expect:\s*(.+)", text)
    if not expects:
        print(f"{a.source}: no `// expect:` line; a compile-fail test must say what it expects")
        return 1

    rc, out = compile_once(base, a.source, ["-DFUSOR_SHOULD_COMPILE"])
    if rc != 0:
        print("control build (-DFUSOR_SHOULD_COMPILE) failed; the test file itself is broken:\n" + out)
        return 1
    rc, out = compile_once(base, a.source, [])
    if rc == 0:
        print("expected a compile error, but the file compiled")
        return 1
    missing = [e for e in expects if not re.search(e.strip(), out)]
    if missing:
        print("the compiler failed, but not with the expected message(s):")
        for e in missing:
            print("  missing: " + e)
        print("---- diagnostics ----\n" + out[:6000])
        return 1
    print("failed to compile as expected; matched: " + "; ".join(e.strip() for e in expects))
    return 0


if __name__ == "__main__":
    sys.exit(main())
