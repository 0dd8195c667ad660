#!/usr/bin/env python3
"""Every metric the Prometheus rules and the Grafana dashboard name is one
`floodgate run` exports, and every label they group, match or print by is
one of its labels (or Prometheus' job and instance): no per-source series.

The exported names come from the code that writes /metrics: the counter
lists (include/fg_counters.h, user/service/crowdsec.h) and the families
user/service/metrics*.c writes. Prometheus' own `up` is allowed too.

  check-promql.py [ROOT] [--rules FILE] [--dashboard FILE]
  check-promql.py [ROOT] --scrape FILE   the families of a real scrape are
                                         all in the list read from the code
  check-promql.py [ROOT] --list          print the list
Exit 0 when all is well, 1 with one line per unknown name.
"""
import argparse
import glob
import json
import os
import re
import sys

import yaml

PROMETHEUS_OWN = {"up"}
PROMETHEUS_LABELS = {"job", "instance"}
# label="..." as the renderers write it (an escaped quote in a C string)
LABEL_IN_CODE = re.compile(r"([a-z_]+)=\\\"")
NAME = r"([a-z][a-z0-9_]*)"
CODE_PATTERNS = [
    # X(field, "metric", ...) rows of the counter lists
    re.compile(r"X\(\s*\w+,\s*\"" + NAME + r"\""),
    # family(out, "metric", ...) in the renderers
    re.compile(r"family\(\s*out,\s*\"" + NAME + r"\""),
    # {"metric", "gauge"|"counter", ...} rows of a renderer's table
    re.compile(r"\{\s*\"" + NAME + r"\",\s*\"(?:gauge|counter)\""),
]
CODE_FILES = ["include/fg_counters.h", "user/service/crowdsec.h", "user/service/metrics*.c"]

KEYWORDS = {"and", "or", "unless", "by", "without", "on", "ignoring", "group_left",
            "group_right", "bool", "offset", "inf", "nan"}


def exported(root):
    names = set()
    for pattern in CODE_FILES:
        paths = glob.glob(os.path.join(root, pattern))
        if not paths:
            sys.exit(f"check-promql: no {pattern} under {root}")
        for path in paths:
            text = open(path).read()
            for regex in CODE_PATTERNS:
                names.update("floodgate_" + m for m in regex.findall(text))
    return names | PROMETHEUS_OWN


def exported_labels(root):
    labels = set()
    for path in glob.glob(os.path.join(root, "user/service/metrics*.c")):
        labels.update(LABEL_IN_CODE.findall(open(path).read()))
    return labels | PROMETHEUS_LABELS


def label_names(expr, legend=""):
    """The labels an expression matches or groups by, and a legend prints."""
    labels = set(re.findall(r"\{\{\s*([a-zA-Z_]\w*)\s*\}\}", legend))
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)
    for matchers in re.findall(r"\{([^}]*)\}", text):
        labels.update(re.findall(r"([a-zA-Z_]\w*)\s*(?:=~|!~|!=|=)", matchers))
    for names in re.findall(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)",
                            text):
        labels.update(n.strip() for n in names.split(",") if n.strip())
    text = re.sub(r"\{[^}]*\}", " ", text)
    labels.update(re.findall(r"\blabel_values\s*\([^,()]*,\s*(\w+)\s*\)", text))
    return labels


def metric_names(expr):
    """The metric names a PromQL expression (or a Grafana variable query)
    selects: identifiers that are not functions, keywords or labels."""
    text = re.sub(r"\$\{[^}]*\}|\$\w+", " ", expr)          # Grafana variables
    text = re.sub(r'"(?:[^"\\]|\\.)*"', '""', text)        # strings
    text = re.sub(r"\{[^}]*\}", " ", text)                  # label matchers
    text = re.sub(r"\[[^\]]*\]", " ", text)                 # ranges
    text = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)",
                  " ", text)                                # label lists
    text = re.sub(r"\blabel_values\s*\(([^,()]*),[^)]*\)", r"(\1)", text)
    names = set()
    for m in re.finditer(r"(?<![\w.])([a-zA-Z_:][\w:]*)\s*(\()?", text):
        word, call = m.group(1), m.group(2)
        if not call and word.lower() not in KEYWORDS:
            names.add(word)
    return names


def rules_exprs(path):
    doc = yaml.safe_load(open(path))
    for group in doc.get("groups", []):
        for rule in group.get("rules", []):
            yield rule.get("alert") or rule.get("record"), rule["expr"], ""


def dashboard_exprs(path):
    doc = json.load(open(path))

    def walk(node, where):
        if isinstance(node, dict):
            here = node.get("title") or node.get("name") or where
            for key, value in node.items():
                if key == "expr" and isinstance(value, str):
                    yield here, value, node.get("legendFormat", "")
                elif key in ("query", "definition") and isinstance(value, str) and \
                        node.get("type") == "query":
                    yield here, value, ""
                else:
                    yield from walk(value, here)
        elif isinstance(node, list):
            for item in node:
                yield from walk(item, where)

    yield from walk(doc, "dashboard")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("root", nargs="?", default=os.path.join(os.path.dirname(__file__), ".."))
    ap.add_argument("--rules", action="append", default=[])
    ap.add_argument("--dashboard", action="append", default=[])
    ap.add_argument("--scrape")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    known = exported(args.root)
    labels = exported_labels(args.root)
    if args.list:
        print("\n".join(sorted(known)))
        print("labels: " + " ".join(sorted(labels)))
        return 0
    bad = []
    if args.scrape:
        for line in open(args.scrape):
            if line.startswith("# TYPE "):
                family = line.split()[2]
                if family not in known:
                    bad.append(f"{args.scrape}: {family} is served but not found in the code")
    checked = 0
    for kind, paths in (("rules", args.rules), ("dashboard", args.dashboard)):
        for path in paths:
            exprs = list((rules_exprs if kind == "rules" else dashboard_exprs)(path))
            if not exprs:
                bad.append(f"{path}: no expressions found")
            for where, expr, legend in exprs:
                for label in sorted(label_names(expr, legend) - labels):
                    bad.append(f"{path}: {where}: label {label} is not one floodgate exports")
                names = metric_names(expr)
                if not names:
                    bad.append(f"{path}: {where}: names no metric: {expr}")
                for name in sorted(names - known):
                    bad.append(f"{path}: {where}: {name} is not a metric floodgate exports")
                checked += 1
    for line in bad:
        print(line)
    if not bad:
        print(f"check-promql: {checked} expressions name only the {len(known)} metrics "
              "floodgate exports" if checked else
              f"check-promql: the scrape's families are all among the {len(known)} in the code")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
