#!/usr/bin/env python3
# wire.py: a raw nowq protocol peer for the hostile-input tests and bench/soak: requests past qsub's checks, idle, slow and garbage connections, and a master that loses its replies.
"""Usage (ADDR is HOST:PORT of the master's TCP listener, auth = none, or unix:PATH of its socket):
  wire.py send ADDR [JSON...]      HELLO as ourselves, send each message (else each line of stdin), print each reply
  wire.py pipe ADDR JSON...        HELLO and every message in one write (as qstat and qsub send), then print
                                   each reply in the order they come, until the master closes or is quiet
  wire.py idle ADDR N [hello]      open N connections (after HELLO with "hello"), print "open N", hold until stdin ends
  wire.py slow ADDR INTERVAL       HELLO, then a frame a byte every INTERVAL s; print the seconds until the master closed it
  wire.py noread ADDR SECONDS      HELLO, then 8000 STATUS requests without reading a reply; hold SECONDS
  wire.py garbage ADDR SECONDS SEED  for SECONDS, connections with random bytes, broken frames and hostile messages;
                                   print how many were sent
  wire.py hellos ADDR N            N connections one after another, each a HELLO and its reply; print the median
                                   and 90th percentile of the round trips in microseconds (bench/hello)
  wire.py drop unix:PATH N [UP]    a master that loses replies: listen at PATH; for each of N connections answer
                                   the HELLO, read the request, pass both on to the master at UP (if given) and
                                   wait for its answer, then close without one; print each request's type
                                   and key
  wire.py hold unix:PATH N         the same, without UP, but a master frozen after reading the request: each
                                   connection is held open, unanswered, until the client closes it
"""
import json
import os
import random
import resource
import socket
import struct
import sys
import time


def addr(s):
    host, port = s.rsplit(":", 1)
    return host, int(port)


def frame(obj):
    data = obj if isinstance(obj, bytes) else json.dumps(obj).encode()
    return struct.pack(">I", len(data)) + data


def hello():
    return {"type": "HELLO", "seq": 1, "version": 1, "role": "client",
            "auth": {"method": "none"}, "uid": os.getuid()}


def recv_frame(s):
    hdr = b""
    while len(hdr) < 4:
        b = s.recv(4 - len(hdr))
        if not b:
            return None
        hdr += b
    (n,) = struct.unpack(">I", hdr)
    data = b""
    while len(data) < n:
        b = s.recv(min(65536, n - len(data)))
        if not b:
            return None
        data += b
    return json.loads(data)


def open_socket(a, timeout):
    if a.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(a[5:])
        return s
    return socket.create_connection(addr(a), timeout=timeout)


def connect(a, say_hello):
    s = open_socket(a, 30)
    if say_hello:
        s.sendall(frame(hello()))
        rep = recv_frame(s)
        if not rep or not rep.get("ok"):
            raise SystemExit("HELLO refused: %r" % (rep,))
    return s


def cmd_send(a, msgs):
    s = connect(a, True)
    for i, m in enumerate(msgs):
        obj = json.loads(m)
        obj.setdefault("seq", i + 2)
        s.sendall(frame(obj))
        print(json.dumps(recv_frame(s)), flush=True)


def cmd_pipe(a, msgs):
    s = open_socket(a, 2)
    out = frame(hello())
    for i, m in enumerate(msgs):
        obj = json.loads(m) if m.startswith("{") else m.encode()
        if isinstance(obj, dict):
            obj.setdefault("seq", i + 2)
        out += frame(obj)
    s.sendall(out)
    try:
        while (r := recv_frame(s)) is not None:
            print(json.dumps(r), flush=True)
    except socket.timeout:
        pass


def raise_fds():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))


def cmd_idle(a, n, say_hello):
    raise_fds()
    socks = []
    for _ in range(n):
        try:
            socks.append(connect(a, say_hello))
        except OSError as e:
            print("stopped at %d: %s" % (len(socks), e), flush=True)
            break
    print("open %d" % len(socks), flush=True)
    sys.stdin.read()


def cmd_slow(a, interval):
    s = connect(a, True)
    start = time.monotonic()
    s.sendall(struct.pack(">I", 1000))
    try:
        while True:
            s.sendall(b" ")
            time.sleep(interval)
            if time.monotonic() - start > 120:
                break
    except OSError:
        pass
    print("%.1f" % (time.monotonic() - start), flush=True)


def cmd_noread(a, seconds):
    s = connect(a, True)
    # Whole frames only: the master reads them all, and its replies wait.
    s.settimeout(None)
    req = frame({"type": "STATUS", "seq": 1, "users": ["*"], "states": "prz"})
    n = 0
    try:
        while n < 8000:
            s.sendall(req)
            n += 1
    except OSError:
        pass
    print("sent %d" % n, flush=True)
    time.sleep(seconds)


# Messages a hostile client might send once past HELLO: every type, with
# fields of the wrong type, out of range, huge or absent.
TYPES = ["SUBMIT", "STATUS", "DELETE", "HOLD", "RELEASE", "WAIT", "HOSTS", "ACCT", "ALTER",
         "CONF", "CRON", "DISABLE", "ENABLE", "SUSPEND", "UNSUSPEND", "CLEAR", "REGISTER",
         "LOAD", "PULL", "CHILD_REGISTER", "CHILD_TERM", "DISPATCH", "SIGNAL", "ACK", "HELLO",
         "REPLY", "NOSUCH"]
VALUES = [None, True, False, 0, -1, 1, 2 ** 31, -2 ** 63, 2 ** 64, 1.5, float("nan"), "", "x", "*",
          "a\nb", "a\x00b", "\u00e9\u00e9", "9" * 40, [], [1, "a", None], {}, {"a": 1},
          "../../etc/passwd", "%s%n%x", "$(id)"]
FIELDS = ["job", "jobs", "users", "states", "id", "ids", "name", "owner", "tasks", "req", "prio",
          "hold", "queue", "op", "action", "targets", "host", "slots", "load", "free", "attrs",
          "task", "attempt", "rusage", "deps", "cron", "verify", "summary", "after", "limit",
          "brief", "signal", "exit_status", "pid", "start_time", "end_time", "force", "since"]


def hostile_message(r):
    msg = {"type": r.choice(TYPES), "seq": r.choice([1, -1, 2 ** 40, "s", None])}
    for _ in range(r.randint(0, 6)):
        msg[r.choice(FIELDS)] = r.choice(VALUES)
    if msg["type"] == "SUBMIT" and r.random() < 0.5:
        job = {"name": r.choice(["j", "a b", "x" * 300, "a\nb", ""]), "script": "true\n"}
        for _ in range(r.randint(0, 4)):
            job[r.choice(["args", "env", "cwd", "out", "t_first", "t_last", "t_step", "slots",
                          "pe", "prio", "req", "mail_to", "argv"])] = r.choice(VALUES)
        msg["job"] = job
    # Only requests that change nothing lasting, or are refused: the soak
    # counts the jobs it submitted, so garbage must not submit any.
    if msg["type"] == "SUBMIT" and isinstance(msg.get("job"), dict):
        msg["job"]["name"] = ""
    if msg["type"] in ("DELETE", "HOLD", "SUSPEND", "CLEAR", "ALTER", "DISABLE", "CRON", "CONF",
                       "REGISTER", "CHILD_TERM", "CHILD_REGISTER", "PULL", "LOAD"):
        msg["type"] = "STATUS"
    return json.dumps(msg, allow_nan=True).encode()


def garbage_once(a, r):
    s = open_socket(a, 5)
    s.settimeout(2)
    kind = r.randint(0, 5)
    try:
        if kind == 0:
            s.sendall(os.urandom(r.randint(1, 300)))
        elif kind == 1:
            s.sendall(struct.pack(">I", r.choice([0, 2 ** 32 - 1, 70000, 20 * 2 ** 20])) + b"{")
        elif kind == 2:
            s.sendall(frame(hostile_message(r)))   # before HELLO
        elif kind == 3:
            s.sendall(frame(b"{\"type\":\"HELLO\"" + os.urandom(r.randint(0, 40))))
        else:
            s.sendall(frame(hello()))
            recv_frame(s)
            for _ in range(r.randint(1, 20)):
                m = hostile_message(r)
                if r.random() < 0.1:
                    m = m[: r.randint(0, len(m))]
                s.sendall(frame(m))
            s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
    except OSError:
        pass
    finally:
        s.close()


def cmd_garbage(a, seconds, seed):
    r = random.Random(seed)
    end = time.monotonic() + seconds
    n = 0
    while time.monotonic() < end:
        try:
            garbage_once(a, r)
        except OSError:
            time.sleep(0.05)
        n += 1
    print("sent %d" % n, flush=True)


def cmd_hellos(a, n):
    times = []
    for _ in range(n):
        t0 = time.perf_counter()
        s = connect(a, True)
        times.append(time.perf_counter() - t0)
        s.close()
    times.sort()
    print("median %d p90 %d" % (times[n // 2] * 1e6, times[n * 9 // 10] * 1e6), flush=True)


def cmd_drop(a, n, up, hold=False):
    lis = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    lis.bind(a[5:])
    lis.listen(8)
    lis.settimeout(60)
    for _ in range(n):
        c, _ = lis.accept()
        c.settimeout(10)
        hi = recv_frame(c)
        c.sendall(frame({"type": "REPLY", "seq": hi["seq"], "ok": True, "epoch": 1}))
        req = recv_frame(c)
        if req is None:
            c.close()
            continue
        if up:
            # What the master did with it stands; only its answer is lost.
            s = open_socket(up, 10)
            s.sendall(frame(hi) + frame(req))
            while (r := recv_frame(s)) is not None and r.get("seq") != req["seq"]:
                pass
            s.close()
        print(req["type"], req.get("key", ""), flush=True)
        if hold:
            c.settimeout(60)
            try:
                while c.recv(65536):
                    pass
            except OSError:
                pass
        c.close()


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    cmd, a = sys.argv[1], sys.argv[2]
    if cmd == "pipe":
        cmd_pipe(a, sys.argv[3:])
    elif cmd == "send":
        cmd_send(a, sys.argv[3:] or sys.stdin.read().splitlines())
    elif cmd == "idle":
        cmd_idle(a, int(sys.argv[3]), len(sys.argv) > 4 and sys.argv[4] == "hello")
    elif cmd == "noread":
        cmd_noread(a, float(sys.argv[3]))
    elif cmd == "slow":
        cmd_slow(a, float(sys.argv[3]))
    elif cmd == "garbage":
        cmd_garbage(a, float(sys.argv[3]), int(sys.argv[4]))
    elif cmd == "hellos":
        cmd_hellos(a, int(sys.argv[3]))
    elif cmd == "hold":
        cmd_drop(a, int(sys.argv[3]), None, True)
    elif cmd == "drop":
        cmd_drop(a, int(sys.argv[3]), sys.argv[4] if len(sys.argv) > 4 else None)
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    main()
