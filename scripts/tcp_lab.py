#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""TCP clients and a server for the veth lab (scripts/lab.sh), shared by
tests/integration/test_synproxy.sh and scripts/bench-synflood.sh.

  tcp_lab.py serve PORT READY       an echo server on both families (socketserver's
                                    default backlog); creates READY once it listens
  tcp_lab.py connects ADDR PORT N TIMEOUT
                                    N sequential connects, each sending a line and
                                    reading it back, TIMEOUT seconds for the
                                    connect and for each read; prints JSON: "done"
                                    (how many echoed their line), "connect_ms" and
                                    "echo_ms" per attempt (null when the connect,
                                    or the echo, failed) and "errors" by kind.
                                    Through a proxy the connect completes at the
                                    proxy: the echo time is what a client waits
                                    for its first reply.
  tcp_lab.py early ADDR PORT DIR    connects and echoes once, writes DIR/connected
                                    ("yes" or "no"), waits for DIR/go, echoes again
                                    on the same connection and writes DIR/result
                                    ("ok" or "lost")
  tcp_lab.py syns DEV MAC DST PORT N
                                    N IPv4 SYNs without TCP options, from random
                                    sources in 10.0.0.0/9, to DST:PORT, each a
                                    60-byte frame to MAC sent through DEV's own
                                    stack (AF_PACKET): small skbs, with little room
                                    at their end
"""
import json
import os
import random
import socket
import socketserver
import struct
import sys
import time


def echo(sock, msg):
    """Sends msg and reads it back: whether it came back whole."""
    sock.sendall(msg)
    got = b""
    while len(got) < len(msg):
        chunk = sock.recv(4096)
        if not chunk:
            break
        got += chunk
    return got == msg


def serve(port, ready):
    class Echo(socketserver.BaseRequestHandler):
        def handle(self):
            while True:
                data = self.request.recv(4096)
                if not data:
                    return
                self.request.sendall(data)

    class Server(socketserver.ThreadingTCPServer):
        address_family = socket.AF_INET6
        allow_reuse_address = True
        daemon_threads = True

        def server_bind(self):
            self.socket.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
            super().server_bind()

    srv = Server(("::", int(port)), Echo)
    open(ready, "w").close()
    srv.serve_forever()


def connects(addr, port, n, timeout):
    done, connect_ms, echo_ms, errors = 0, [], [], {}

    def failed(kind):
        errors[kind] = errors.get(kind, 0) + 1

    for i in range(int(n)):
        start = time.monotonic()
        try:
            sock = socket.create_connection((addr, int(port)), timeout=float(timeout))
        except OSError as e:
            connect_ms.append(None)
            echo_ms.append(None)
            failed(type(e).__name__)
            continue
        connect_ms.append((time.monotonic() - start) * 1000)
        try:
            with sock:
                ok = echo(sock, b"hello %d\n" % i)
        except OSError as e:
            ok = False
            failed("echo " + type(e).__name__)
        done += ok
        echo_ms.append((time.monotonic() - start) * 1000 if ok else None)
    print(json.dumps({"done": done, "connect_ms": connect_ms, "echo_ms": echo_ms,
                      "errors": errors}))


def early(addr, port, folder):
    sock = socket.create_connection((addr, int(port)), timeout=2)
    first = echo(sock, b"before\n")
    open(os.path.join(folder, "connected"), "w").write("yes" if first else "no")
    while not os.path.exists(os.path.join(folder, "go")):
        time.sleep(0.02)
    try:
        ok = echo(sock, b"after\n")
    except OSError:
        ok = False
    # Written whole or not at all: the test polls for the file.
    open(os.path.join(folder, "result.tmp"), "w").write("ok" if ok else "lost")
    os.rename(os.path.join(folder, "result.tmp"), os.path.join(folder, "result"))


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    total = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while total >> 16:
        total = (total & 0xffff) + (total >> 16)
    return ~total & 0xffff


def syns(dev, mac, dst, port, n):
    sock = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    sock.bind((dev, 0))
    src_mac = bytes.fromhex(open("/sys/class/net/%s/address" % dev).read().strip().replace(":", ""))
    dst_mac = bytes.fromhex(mac.replace(":", ""))
    daddr = socket.inet_aton(dst)
    pad = b"\0" * 6  # Ethernet's 60-byte minimum, carried in the IP length
    for i in range(int(n)):
        saddr = struct.pack("!I", (10 << 24) | random.getrandbits(23))
        tcp = struct.pack("!HHIIBBHHH", 1024 + i % 60000, int(port), i, 0, 5 << 4, 0x02,
                          65535, 0, 0)
        pseudo = saddr + daddr + struct.pack("!BBH", 0, socket.IPPROTO_TCP, len(tcp) + len(pad))
        tcp = tcp[:16] + struct.pack("!H", checksum(pseudo + tcp + pad)) + tcp[18:]
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + len(tcp) + len(pad), 0, 0, 64,
                         socket.IPPROTO_TCP, 0, saddr, daddr)
        ip = ip[:10] + struct.pack("!H", checksum(ip)) + ip[12:]
        sock.send(dst_mac + src_mac + b"\x08\x00" + ip + tcp + pad)


COMMANDS = {"serve": (serve, 2), "connects": (connects, 4), "early": (early, 3),
            "syns": (syns, 5)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS or \
            len(sys.argv) - 2 != COMMANDS[sys.argv[1]][1]:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]][0](*sys.argv[2:])
