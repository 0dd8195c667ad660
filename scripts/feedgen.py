#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""Writes a deterministic feed file of COUNT mixed IPv4/IPv6 prefixes, as
FireHOL and Spamhaus publish them (comments, `; SBL` notes, some CRLF
lines), for tests/integration/test_feeds.sh and scripts/bench-feeds.sh.

  feedgen.py --seed S --count N --out FILE [--nft-sets SETFILE] [--line TEXT]...

The random prefixes never touch 10.0.0.0/8 or fd00::/8 (the lab's own
sources); --line adds lines of the caller's. Every prefix is distinct
within a family. --nft-sets also writes an nft -f script that fills
`inet fgbench` interval sets `v4` and `v6` with the same prefixes
(auto-merge: random prefixes overlap, which a plain interval set refuses).
"""
import argparse
import random
import socket

ap = argparse.ArgumentParser()
ap.add_argument("--seed", type=int, default=1)
ap.add_argument("--count", type=int, required=True)
ap.add_argument("--out", required=True)
ap.add_argument("--nft-sets")
ap.add_argument("--line", action="append", default=[])
a = ap.parse_args()

rng = random.Random(a.seed)
v4, v6 = set(), set()
n6 = a.count * 3 // 10
while len(v6) < n6:
    plen = rng.choice((32, 36, 40, 44, 48, 48, 56, 64))
    net = (0x2400 + rng.randrange(0x0a00)) << 112 | rng.getrandbits(112)
    v6.add((net >> (128 - plen) << (128 - plen), plen))
while len(v4) < a.count - n6:
    plen = rng.choice((16, 20, 22, 24, 24, 24, 28, 32, 32, 32))
    net = rng.randrange(11, 224) << 24 | rng.getrandbits(24)
    v4.add((net >> (32 - plen) << (32 - plen), plen))

# One order for the file, the same for every run with this seed.
entries = [(4, n, p) for n, p in sorted(v4)] + [(6, n, p) for n, p in sorted(v6)]
rng.shuffle(entries)


def text(fam, net, plen):
    if fam == 4:
        return f"{socket.inet_ntop(socket.AF_INET, net.to_bytes(4, 'big'))}/{plen}"
    return f"{socket.inet_ntop(socket.AF_INET6, net.to_bytes(16, 'big'))}/{plen}"


with open(a.out, "w", newline="") as f:
    f.write("#\n# feedgen.py: a FireHOL/Spamhaus-like feed\n#\n; Spamhaus DROP List\n")
    for line in a.line:
        f.write(line + "\n")
    for i, (fam, net, plen) in enumerate(entries):
        t = text(fam, net, plen)
        if i % 7 == 0:
            f.write(f"{t} ; SBL{100000 + i}\n")
        elif i % 11 == 0:
            f.write(f"{t}\r\n")
        else:
            f.write(t + "\n")

if a.nft_sets:
    with open(a.nft_sets, "w") as f:
        f.write("table inet fgbench {\n")
        for fam, name, typ in ((4, "v4", "ipv4_addr"), (6, "v6", "ipv6_addr")):
            items = [text(x, n, p) for x, n, p in entries if x == fam]
            f.write(f"  set {name} {{\n    type {typ}\n    flags interval\n    auto-merge\n    elements = {{\n")
            for j in range(0, len(items), 1000):
                f.write("      " + ", ".join(items[j:j + 1000]) + ",\n")
            f.write("    }\n  }\n")
        f.write("}\n")
