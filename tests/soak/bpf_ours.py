#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
# The BPF programs and maps no other process holds, one a line ("prog ID
# NAME TYPE"): those of the soak's floodgate (pinned, attached, or the
# daemon's, pid argv[1]). Debian's bpftool is built without the "pids"
# feature, so the holders are found here, from every process's
# /proc/PID/fdinfo (prog_id, map_id, and a link's prog_id) and the maps
# their programs use: the generators and other users of the machine (their
# test runs) are left out.
import json, os, subprocess, sys

ours = sys.argv[1]
held_progs, held_maps = set(), set()
for pid in os.listdir("/proc"):
    if not pid.isdigit() or pid == ours:
        continue
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except OSError:
        continue
    for fd in fds:
        try:
            if not os.readlink(f"/proc/{pid}/fd/{fd}").startswith("anon_inode:bpf"):
                continue
            info = open(f"/proc/{pid}/fdinfo/{fd}").read()
        except OSError:
            continue
        for line in info.splitlines():
            key, _, value = line.partition(":")
            if key == "prog_id":
                held_progs.add(int(value))
            elif key == "map_id":
                held_maps.add(int(value))


def show(kind):
    return json.loads(subprocess.run(["bpftool", "-j", kind, "show"], check=True,
                                     capture_output=True, text=True).stdout or "[]")


progs, maps = show("prog"), show("map")
for p in progs:
    if p["id"] in held_progs:
        held_maps.update(p.get("map_ids", []))
for p in progs:
    if p["id"] not in held_progs:
        print("prog", p["id"], p.get("name", "-"), p["type"])
for m in maps:
    if m["id"] not in held_maps:
        print("map", m["id"], m.get("name", "-"), m["type"])
