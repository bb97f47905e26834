#!/usr/bin/env python3
"""Runs the sanitizer canary in one mode and checks that the sanitizer stopped it.

    run_canary.py CANARY MODE EXPECTED_TEXT

Passes when the canary exits non-zero, its output holds EXPECTED_TEXT (the
sanitizer's report; alternatives separated by '|') and not "no report" (the
line after the error, reached only when the sanitizer let the program carry on).
"""
import subprocess
import sys


def main(canary, mode, expected):
    proc = subprocess.run([canary, mode], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    out = proc.stdout
    reported = any(text in out for text in expected.split("|"))
    ok = proc.returncode != 0 and reported and "no report" not in out
    print(out[-3000:])
    print("canary %s: %s (exit %d)" % (mode, "stopped by the sanitizer, as it must be" if ok else "NOT STOPPED", proc.returncode))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
