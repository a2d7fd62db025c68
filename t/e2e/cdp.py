#!/usr/bin/env python3
# cdp.py: evaluates one JavaScript expression in a page headless Chromium lays out at a given window width, over the DevTools protocol, and prints its value (the standard library has no websocket client, so a bare one is here).
# Usage: cdp.py PROFILE_DIR URL WIDTH EXPRESSION; waits up to 30 s for the status page to have filled itself.
import base64, json, os, signal, socket, struct, subprocess, sys, time, urllib.request

profile, url, width, expr = sys.argv[1:5]
os.makedirs(profile, exist_ok=True)
port_file = os.path.join(profile, "DevToolsActivePort")
if os.path.exists(port_file):
    os.unlink(port_file)
chrome = subprocess.Popen(["chromium", "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                           "--user-data-dir=" + profile, "--remote-debugging-port=0",
                           "--window-size=%s,900" % width, url],
                          stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)


def recv_exact(s, n):
    b = b""
    while len(b) < n:
        chunk = s.recv(n - len(b))
        if not chunk:
            raise EOFError("DevTools closed the connection")
        b += chunk
    return b


def send_text(s, text):
    data = text.encode()
    head = bytes([0x81])
    if len(data) < 126:
        head += bytes([0x80 | len(data)])
    else:
        head += bytes([0x80 | 126]) + struct.pack(">H", len(data))
    mask = os.urandom(4)
    s.sendall(head + mask + bytes(c ^ mask[i % 4] for i, c in enumerate(data)))


def recv_text(s):
    b0, b1 = recv_exact(s, 2)
    n = b1 & 0x7F
    if n == 126:
        n = struct.unpack(">H", recv_exact(s, 2))[0]
    elif n == 127:
        n = struct.unpack(">Q", recv_exact(s, 8))[0]
    return recv_exact(s, n).decode()


def evaluate(s, seq, expression):
    send_text(s, json.dumps({"id": seq, "method": "Runtime.evaluate",
                             "params": {"expression": expression, "returnByValue": True}}))
    while True:
        m = json.loads(recv_text(s))
        if m.get("id") == seq:
            return m["result"]["result"].get("value")


try:
    deadline = time.time() + 30
    while not os.path.exists(port_file) and time.time() < deadline:
        time.sleep(0.1)
    port = int(open(port_file).read().split()[0])
    page = None
    while page is None and time.time() < deadline:
        pages = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json/list" % port, timeout=5))
        page = next((p for p in pages if p.get("type") == "page"), None)
        time.sleep(0.1)
    path = page["webSocketDebuggerUrl"].split(str(port), 1)[1]
    s = socket.create_connection(("127.0.0.1", port), timeout=10)
    key = base64.b64encode(os.urandom(16)).decode()
    s.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
               "Sec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n" % (path, port, key)).encode())
    reply = b""
    while b"\r\n\r\n" not in reply:
        reply += recv_exact(s, 1)
    seq = 1
    # The page fills itself from the API: wait until it says when.
    while time.time() < deadline and not evaluate(s, seq, "(document.getElementById('updated') || "
                                                          "{textContent: ''}).textContent.startsWith('updated')"):
        seq += 1
        time.sleep(0.2)
    print(evaluate(s, seq + 1, expr))
finally:
    try:
        os.killpg(chrome.pid, signal.SIGTERM)
        chrome.wait(timeout=10)
    except Exception:
        os.killpg(chrome.pid, signal.SIGKILL)
        chrome.wait()
