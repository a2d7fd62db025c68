#!/usr/bin/env python3
# rawreq.py: sends hand-made frames to a master (unix:PATH or HOST:PORT) and prints each reply as one JSON line.
# Usage: rawreq.py [--half-close] ADDR MSG_JSON...   The first message is
# usually a HELLO; each message gets a seq if it has none, and the script
# waits for that reply (or for the connection to close) before sending the
# next.  --half-close shuts down the writing side right after the last
# message, before its reply is read.
import json
import socket
import struct
import sys


def connect(addr):
    if addr.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr[5:])
    else:
        host, port = addr.rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
    s.settimeout(10)
    return s


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            return None
        buf += chunk
    return buf


def main():
    args = sys.argv[1:]
    half_close = args[0] == "--half-close"
    if half_close:
        args = args[1:]
    s = connect(args[0])
    for seq, text in enumerate(args[1:], start=1):
        msg = json.loads(text)
        msg.setdefault("seq", seq)
        data = json.dumps(msg).encode()
        s.sendall(struct.pack(">I", len(data)) + data)
        if half_close and seq == len(args) - 1:
            s.shutdown(socket.SHUT_WR)
        while True:
            hdr = recv_exact(s, 4)
            if hdr is None:
                print(json.dumps({"closed": True}))
                return
            body = recv_exact(s, struct.unpack(">I", hdr)[0])
            reply = json.loads(body)
            if reply.get("type") == "REPLY" and reply.get("seq") == msg["seq"]:
                print(json.dumps(reply), flush=True)
                break


main()
