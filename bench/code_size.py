#!/usr/bin/env python3
"""What an object's code is made of: its functions' machine code grouped by
family, a family being a function's name with its template arguments and
parameters taken out (every instance of `fusor::cpu::detail::reduce_row<...>`
is one family). The question it answers is the one compile time raises in an
expression-template library: which templates are instantiated so often, or so
large, that they dominate a unit's code, and so its optimiser's time.

    python3 bench/code_size.py OBJECT [OBJECT...] [--top 30] [--match REGEX]
                               [--depth N] [--compare OBJECT...]

For each family: its code in bytes, its share of the object's code, and how
many instances it has. --depth N keeps the first N components of the
qualified name (2: `fusor::cpu`), to see code by namespace or class.
--compare takes other objects (an older build of the same sources) and prints
both columns and the difference, largest first. Sizes are read with `nm -S -C`
(the text symbols: code, not data or debug information). Measured, never
asserted.
"""
import argparse
import collections
import re
import subprocess
import sys


def strip_templates(name):
    """`a::b<c<d>>::e(int)` -> `a::b<>::e`: template arguments and parameters out."""
    name = re.sub(r"^decltype\((auto|\.\.\.)\) ", "", name)
    out, depth = [], 0
    i = 0
    # operator names contain brackets of their own: keep them as they are
    for op in ("operator<<=", "operator>>=", "operator<<", "operator>>", "operator<=>", "operator<=",
               "operator>=", "operator<", "operator>", "operator()", "operator->"):
        name = name.replace(op, op.replace("<", "\x01").replace(">", "\x02").replace("(", "\x03").replace(")", "\x04"))
    while i < len(name):
        c = name[i]
        if c == "<":
            if depth == 0:
                out.append("<>")
            depth += 1
        elif c == ">":
            depth -= 1
        elif depth == 0:
            if c == "(":
                break
            out.append(c)
        i += 1
    s = "".join(out).strip()
    s = re.sub(r"\[clone [^\]]*\]", "", s)
    s = re.sub(r"^(.* )?(?=[\w:~]+)", "", s)  # a leading return type
    return s.replace("\x01", "<").replace("\x02", ">").replace("\x03", "(").replace("\x04", ")").strip()


def mangled_family(name):
    """The family of a name nm could not demangle (g++ gives up on the
    longest ones, a gradient's instances among them): the leading components
    of its mangled nested name, `_ZN5fusor6detail2ad15target_gradientI...` read
    as `fusor::detail::ad::target_gradient<>::...`."""
    m = re.match(r"_ZN?", name)
    i, parts = m.end(), []
    while True:
        d = re.match(r"\d+", name[i:])
        if not d:
            break
        n = int(d.group())
        i += d.end()
        parts.append(name[i:i + n])
        i += n
    if not parts:
        return name
    # After template arguments the rest of the name is not read: the family
    # is the class or function template, its member left out.
    return "::".join(parts) + ("<>::..." if name[i:i + 1] == "I" else "") + " (not demangled)"


def families(obj, depth=None):
    text = subprocess.run(["nm", "-S", "-C", "--size-sort", obj], check=True, capture_output=True,
                          text=True).stdout
    size = collections.Counter()
    count = collections.Counter()
    total = 0
    for line in text.splitlines():
        parts = line.split(" ", 3)
        if len(parts) < 4 or parts[2].lower() not in ("t", "w"):
            continue
        n = int(parts[1], 16)
        fam = mangled_family(parts[3]) if parts[3].startswith("_Z") else strip_templates(parts[3])
        if depth:
            fam = "::".join(fam.split("::")[:depth])
        size[fam] += n
        count[fam] += 1
        total += n
    return size, count, total


def merged(objs, depth):
    size, count, total = collections.Counter(), collections.Counter(), 0
    for o in objs:
        s, c, t = families(o, depth)
        size.update(s)
        count.update(c)
        total += t
    return size, count, total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("objects", nargs="+")
    ap.add_argument("--top", type=int, default=30)
    ap.add_argument("--match", help="only families whose name matches this regular expression")
    ap.add_argument("--depth", type=int, help="group by the first N components of the qualified name")
    ap.add_argument("--compare", nargs="+", help="objects to compare against (before)")
    a = ap.parse_args()
    size, count, total = merged(a.objects, a.depth)
    keep = (lambda f: re.search(a.match, f)) if a.match else (lambda f: True)
    if not a.compare:
        print(f"{total} bytes of code in {sum(count.values())} functions")
        print(f"{'bytes':>9} {'share':>6} {'inst.':>6}  family")
        for fam, n in size.most_common():
            if not keep(fam):
                continue
            print(f"{n:9d} {100.0 * n / total:5.1f}% {count[fam]:6d}  {fam}")
            a.top -= 1
            if a.top == 0:
                break
        return 0
    bsize, bcount, btotal = merged(a.compare, a.depth)
    print(f"code: {btotal} -> {total} bytes ({100.0 * (total - btotal) / max(btotal, 1):+.1f} %)")
    print(f"{'before':>9} {'after':>9} {'change':>9} {'inst.':>11}  family")
    fams = sorted(set(size) | set(bsize), key=lambda f: -abs(size[f] - bsize[f]))
    for fam in fams:
        if not keep(fam) or size[fam] == bsize[fam]:
            continue
        print(f"{bsize[fam]:9d} {size[fam]:9d} {size[fam] - bsize[fam]:+9d} {bcount[fam]:5d}->{count[fam]:<5d}  {fam}")
        a.top -= 1
        if a.top == 0:
            break
    return 0


if __name__ == "__main__":
    sys.exit(main())
