#!/usr/bin/env python3
"""Counts test cases across meson test runs.

Reads DIR/meson-logs/testlog.json for each build directory given. A doctest
executable counts its own test cases (from its summary line); any other test
(compile-fail, interop, install, canary, fuzz) counts as one case. Prints, as
the last line, `N passed, N failed, N skipped`. A crashed doctest executable
counts one failure on top of what it reported; a build directory without a
test log (its build failed) counts one failure.
"""
import json
import re
import sys

# (A run with --no-skipped-summary, one of a program split in two runs by
# test case, leaves out the count of the cases the other run runs.)
DOCTEST = re.compile(r"test cases:\s*(\d+)\s*\|\s*(\d+) passed\s*\|\s*(\d+) failed\s*\|(?:\s*(\d+) skipped)?")


def count(build_dir):
    passed = failed = skipped = 0
    try:
        log = open(f"{build_dir}/meson-logs/testlog.json", encoding="utf-8")
    except OSError:
        # The step never got to run its tests (a failed build, say): that is a failure.
        print(f"count_tests: no test log in {build_dir}; counting it as one failure", file=sys.stderr)
        return 0, 1, 0
    with log:
        for line in log:
            if not line.strip():
                continue
            entry = json.loads(line)
            result = entry.get("result", "")
            m = DOCTEST.search(entry.get("stdout", "") or "")
            if m:
                _, p, f, s = (int(g or 0) for g in m.groups())
                passed, failed, skipped = passed + p, failed + f, skipped + s
                if result not in ("OK", "EXPECTEDFAIL") and f == 0:
                    failed += 1
            elif result in ("OK", "EXPECTEDFAIL"):
                passed += 1
            elif result == "SKIP":
                skipped += 1
            else:
                failed += 1
    return passed, failed, skipped


def main(dirs):
    totals = [0, 0, 0]
    for d in dirs:
        for i, n in enumerate(count(d)):
            totals[i] += n
    print(f"{totals[0]} passed, {totals[1]} failed, {totals[2]} skipped")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:] or ["build"]))
