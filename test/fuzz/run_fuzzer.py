#!/usr/bin/env python3
"""Runs one libFuzzer harness for a bounded time on the committed corpus.

    run_fuzzer.py HARNESS SEED_CORPUS WORK_DIR SECONDS [DICT]

New inputs the fuzzer finds go to WORK_DIR (in the build directory), never
into the committed corpus. Prints the number of executions; exits non-zero
when the harness found a crash, a leak or a sanitizer report (libFuzzer then
writes the input as WORK_DIR/crash-*, which the message names).
"""
import os
import re
import subprocess
import sys


def main(harness, seeds, work, seconds, dictionary=None):
    os.makedirs(work, exist_ok=True)
    cmd = [harness, "-max_total_time=" + seconds, "-rss_limit_mb=2048", "-timeout=10",
           "-print_final_stats=1", "-artifact_prefix=" + work + "/", work, seeds]
    if dictionary:
        cmd.insert(1, "-dict=" + dictionary)
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0", UBSAN_OPTIONS="halt_on_error=1:print_stacktrace=1")
    proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    out = proc.stdout
    runs = re.search(r"stat::number_of_executed_units:\s*(\d+)", out)
    if proc.returncode != 0:
        sys.stdout.write(out[-6000:])
        print("%s: FAILED (exit %d); the input is under %s" % (os.path.basename(harness), proc.returncode, work))
        return 1
    print("%s: %s executions in %s s, no failure" % (os.path.basename(harness), runs.group(1) if runs else "?", seconds))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
