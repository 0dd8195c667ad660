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
"""
import json
import os
import socket
import socketserver
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


COMMANDS = {"serve": (serve, 2), "connects": (connects, 4), "early": (early, 3)}

if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1] not in COMMANDS or \
            len(sys.argv) - 2 != COMMANDS[sys.argv[1]][1]:
        sys.exit(__doc__)
    COMMANDS[sys.argv[1]][0](*sys.argv[2:])
