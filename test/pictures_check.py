#!/usr/bin/env python3
"""The plan picture and the trace as a person opens them.

Runs the test cases named "pictures: ..." of a test program with
FUSOR_TEST_PICTURES naming a temporary folder (they write plan.dot and
trace.json there), then parses the trace as JSON — one complete event per step
of each call, each with its step, call and bytes — and renders the plan with
Graphviz (`dot -Tsvg`), which must draw every node the file declares.
Usage: pictures_check.py TEST_PROGRAM [DOT]; without DOT (Graphviz not
installed) the trace is checked and the test is skipped, saying so.
"""
import json
import os
import re
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET


def check_trace(path):
    with open(path, encoding="utf-8") as f:
        trace = json.load(f)
    steps = [e for e in trace["traceEvents"] if e.get("ph") == "X"]
    if not steps:
        return "the trace has no step events"
    calls = {}
    for e in steps:
        for key in ("name", "ts", "dur", "pid", "tid"):
            if key not in e:
                return f"a step event has no {key!r}: {e}"
        args = e.get("args", {})
        for key in ("step", "call", "bytes"):
            if key not in args:
                return f"a step event has no args.{key}: {e}"
        calls.setdefault(args["call"], []).append(args["step"])
    per_call = {len(s) for s in calls.values()}
    if sorted(calls) != list(range(len(calls))) or len(per_call) != 1:
        return f"the calls do not have one event per step each: {calls}"
    for c, s in calls.items():
        if s != sorted(s) or len(set(s)) != len(s):
            return f"call {c}'s steps are not in order, each once: {s}"
    starts = [e["ts"] for e in steps]
    if starts != sorted(starts):
        return "the step events are not in time order"
    print(f"trace: {len(steps)} step events, {len(calls)} calls of {per_call.pop()} steps, valid JSON")
    return None


def check_picture(dot, path, folder):
    with open(path, encoding="utf-8") as f:
        declared = len(re.findall(r"^\s+[sk]\d+ \[", f.read(), flags=re.M))
    svg_path = os.path.join(folder, "plan.svg")
    subprocess.run([dot, "-Tsvg", path, "-o", svg_path], check=True)
    ns = {"svg": "http://www.w3.org/2000/svg"}
    drawn = ET.parse(svg_path).getroot().findall(".//svg:g[@class='node']", ns)
    if len(drawn) != declared:
        return f"dot drew {len(drawn)} nodes of the {declared} the plan declares"
    print(f"plan: dot -Tsvg drew all {declared} nodes ({os.path.getsize(svg_path)} bytes of SVG)")
    return None


def main(program, dot=None):
    with tempfile.TemporaryDirectory(prefix="fusor-pictures-") as folder:
        env = dict(os.environ, FUSOR_TEST_PICTURES=folder)
        run = subprocess.run([program, "--test-case=pictures:*"], env=env, capture_output=True, text=True)
        if run.returncode != 0:
            print(run.stdout + run.stderr)
            print("the picture test cases failed")
            return 1
        for name in ("plan.dot", "trace.json"):
            if not os.path.exists(os.path.join(folder, name)):
                print(f"the picture test cases wrote no {name}")
                return 1
        problem = check_trace(os.path.join(folder, "trace.json"))
        if problem:
            print(problem)
            return 1
        if not dot:
            print("SKIPPED: Graphviz's dot is not installed (apt-get install graphviz): the plan was not rendered")
            return 77
        problem = check_picture(dot, os.path.join(folder, "plan.dot"), folder)
        if problem:
            print(problem)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
