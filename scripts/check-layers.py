#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""`make check-layers`: user/ is one folder per layer, and a file may include
headers of its own layer and of the layers below it, never above. A module
(a .c and its .h) may not reach itself through includes: the graph of
modules has no cycle, within a layer or across.

    check-layers.py [ROOT]     ROOT defaults to the repository

Only the CLI layer prints to stdout and chooses exit codes: FG_EXIT_* and
stdout writes anywhere else in user/ are reported too.

The order of the layers is written here, once; README.md's Layout section
says in words what each may call. Exit status: 0 clean, 1 a violation (each
one printed as FILE:LINE: ...), 2 a file or folder the order does not name.
"""
import os
import re
import sys

# Lowest first: a layer may include itself and what stands before it.
LAYERS = ["base", "config", "policy", "maps", "attach", "ops", "views", "service", "cli"]
RANK = {name: i for i, name in enumerate(LAYERS)}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
# What only the CLI layer may do: choose exit codes, write to stdout.
CLI_ONLY_LAYER = "cli"
CLI_ONLY = re.compile(r"\bFG_EXIT_[A-Z]+\b|\b(?:printf|puts|putchar|vprintf)\s*\(|\bstdout\b")
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"(?:\\.|[^"\\\n])*"')


def sources(root):
    user = os.path.join(root, "user")
    for folder in sorted(os.listdir(user)):
        path = os.path.join(user, folder)
        if not os.path.isdir(path):
            yield os.path.join("user", folder), None
            continue
        for name in sorted(os.listdir(path)):
            if name.endswith((".c", ".h")):
                yield os.path.join("user", folder, name), folder


def includes(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        for lineno, line in enumerate(f, 1):
            m = INCLUDE.match(line)
            if m:
                yield lineno, m.group(1)


def cli_only_uses(root, rel):
    """FILE:LINE: lines outside the CLI layer that print to stdout or
    name an exit code (comments and string literals do not count)."""
    with open(os.path.join(root, rel), encoding="utf-8") as f:
        text = f.read()
    # Blank out comments and strings, keeping the newlines (line numbers).
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))
    code = STRING.sub(blank, COMMENT.sub(blank, text))
    for lineno, line in enumerate(code.split("\n"), 1):
        m = CLI_ONLY.search(line)
        if m:
            yield f"{rel}:{lineno}: {m.group(0).strip()} outside user/{CLI_ONLY_LAYER}/ " \
                  f"(only the CLI prints to stdout and picks exit codes)"


def module(rel):
    """user/maps/pinned.c and user/maps/pinned.h are one module: maps/pinned."""
    return os.path.splitext(rel[len("user/"):])[0]


def find_cycle(graph):
    """A list of modules that reach themselves, or None (iterative DFS)."""
    state = {}
    for start in sorted(graph):
        if state.get(start):
            continue
        stack = [(start, iter(sorted(graph[start])))]
        path = [start]
        state[start] = 1
        while stack:
            node, edges = stack[-1]
            nxt = next(edges, None)
            if nxt is None:
                state[node] = 2
                stack.pop()
                path.pop()
                continue
            if state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            if not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append((nxt, iter(sorted(graph.get(nxt, ())))))
    return None


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    problems = []
    graph = {}
    for rel, layer in sources(root):
        if layer is None or layer not in RANK:
            print(f"{rel}: not in a layer folder ({', '.join(LAYERS)})", file=sys.stderr)
            return 2
        me = module(rel)
        graph.setdefault(me, set())
        if layer != CLI_ONLY_LAYER:
            problems.extend(cli_only_uses(root, rel))
        for lineno, target in includes(root, rel):
            parts = target.split("/")
            if len(parts) == 1:
                if os.path.exists(os.path.join(root, "user", layer, target)):
                    problems.append(f"{rel}:{lineno}: includes \"{target}\": "
                                    f"write it as \"{layer}/{target}\"")
                continue  # include/, a generated skeleton, or a system header
            if parts[0] not in RANK:
                continue
            if RANK[parts[0]] > RANK[layer]:
                problems.append(f"{rel}:{lineno}: {layer} includes {target}, "
                                f"from {parts[0]}, a layer above it")
            dep = os.path.splitext(target)[0]
            if dep != me:
                graph[me].add(dep)
    cycle = find_cycle(graph)
    if cycle:
        problems.append("modules include each other in a circle: " + " -> ".join(cycle))
    for p in problems:
        print(p)
    if problems:
        print(f"check-layers: {len(problems)} problem(s); the order, lowest first: "
              + " < ".join(LAYERS))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
