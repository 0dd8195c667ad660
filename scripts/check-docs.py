#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Checks the links of README.md and docs/*.md, and the README's length.

Usage: check-docs.py [REPO]
Every relative link [text](PATH#ANCHOR) must name a file that exists, and an
anchor must be a heading of that file, slugged as GitHub does (lower case,
punctuation but - and _ dropped, spaces to -, a repeated heading gets -1,
-2, ...). Links to http(s) and mailto are not followed. The README must stay
a front door: at most README_MAX_LINES lines.
Exit status: 0 clean, 1 a broken link or a README too long (each printed as
FILE:LINE: ...).
"""
import os
import re
import sys

README_MAX_LINES = 300
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def slug(title):
    s = re.sub(r"[^\w\- ]", "", title.strip().lower())
    return s.replace(" ", "-")


def outside_code(lines):
    """(line number, text) of each line outside ``` fences, inline code cut."""
    fence = False
    for n, line in enumerate(lines, 1):
        if line.startswith("```"):
            fence = not fence
            continue
        if not fence:
            yield n, re.sub(r"`[^`]*`", "", line)


def anchors(path):
    found, seen = set(), {}
    lines = open(path, encoding="utf-8").read().split("\n")
    fence = False
    for line in lines:
        if line.startswith("```"):
            fence = not fence
        m = None if fence else re.match(r"^#+ (.*)$", line)
        if m:
            base = slug(m.group(1))
            n = seen.get(base, 0)
            seen[base] = n + 1
            found.add(base if n == 0 else "%s-%d" % (base, n))
    return found


def main():
    repo = sys.argv[1] if len(sys.argv) > 1 else "."
    docs = os.path.join(repo, "docs")
    pages = [os.path.join(repo, "README.md")] + sorted(
        os.path.join(docs, f) for f in os.listdir(docs) if f.endswith(".md")
    )
    errors = []
    cache = {}
    for page in pages:
        lines = open(page, encoding="utf-8").read().split("\n")
        rel_page = os.path.relpath(page, repo)
        for n, text in outside_code(lines):
            for target in LINK.findall(text):
                if re.match(r"^(https?|mailto):", target):
                    continue
                path, _, anchor = target.partition("#")
                full = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                if not os.path.exists(full):
                    errors.append("%s:%d: %s: no such file" % (rel_page, n, target))
                    continue
                if anchor:
                    if not full.endswith(".md"):
                        errors.append("%s:%d: %s: an anchor into a file that is not markdown" % (rel_page, n, target))
                        continue
                    if full not in cache:
                        cache[full] = anchors(full)
                    if anchor not in cache[full]:
                        errors.append("%s:%d: %s: no heading #%s there" % (rel_page, n, target, anchor))
        if rel_page == "README.md" and len(lines) - 1 > README_MAX_LINES:
            errors.append("README.md:%d: %d lines, more than %d: move the detail to docs/"
                          % (len(lines), len(lines) - 1, README_MAX_LINES))
    for e in errors:
        print(e)
    return 1 if errors else 0


sys.exit(main())
