#!/usr/bin/env python3
"""Checks the relative links of README.md and docs/*.md.

Every markdown link `[text](target)` whose target is not a URL must name a file
or folder that exists, and a `#anchor` (on its own, or after a .md file) must be
a heading of that page, spelled as GitHub spells a heading's anchor. Prints each
broken link as `file:line: target` and exits 1 if there is one.

Usage: check_links.py SOURCE_ROOT
"""
import re
import sys
from pathlib import Path

LINK = re.compile(r'(?<!!)\[[^\]]*\]\(([^)\s]+)\)')
FENCE = re.compile(r'^\s*(```|~~~)')


def anchor(heading):
    a = heading.strip().lower()
    a = re.sub(r'[^\w\- ]', '', a)   # GitHub keeps letters, digits, '_', '-' and spaces
    return a.replace(' ', '-')


def headings(path, cache={}):
    if path not in cache:
        seen = {}
        found = set()
        in_fence = False
        for line in path.read_text(encoding='utf-8').splitlines():
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            m = None if in_fence else re.match(r'^#{1,6}\s+(.*?)\s*#*\s*$', line)
            if m:
                a = anchor(m.group(1))
                n = seen.get(a, 0)
                seen[a] = n + 1
                found.add(a if n == 0 else f'{a}-{n}')
        cache[path] = found
    return cache[path]


def main(root):
    root = Path(root)
    pages = [root / 'README.md'] + sorted((root / 'docs').glob('*.md'))
    broken = 0
    for page in pages:
        in_fence = False
        for number, line in enumerate(page.read_text(encoding='utf-8').splitlines(), 1):
            if FENCE.match(line):
                in_fence = not in_fence
                continue
            if in_fence:
                continue
            for target in LINK.findall(re.sub(r'`[^`]*`', '', line)):
                if re.match(r'^[a-z][a-z0-9+.-]*:', target):
                    continue   # a URL
                file, _, frag = target.partition('#')
                dest = (page.parent / file) if file else page
                ok = dest.exists()
                if ok and frag:
                    ok = dest.suffix == '.md' and frag in headings(dest.resolve())
                if not ok:
                    print(f'{page.relative_to(root)}:{number}: {target}')
                    broken += 1
    print(f'{len(pages)} pages, {broken} broken links')
    return 1 if broken else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else '.'))
