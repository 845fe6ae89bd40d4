"""Hostile and odd requests at sim-gateway: malformed trace headers (each
must start a new, recorded root and be counted), a body over --max-body,
a bad path, a method it does not serve: each answered from a new root
span, whose traceresponse goes with the probe, one JSON line per probe to
OUT; only the well-formed GETs reach the OSDs. Before them, abuse that
must cost nothing but a closed connection: more connections than
--http-connections (CONNS), a 200 kB header, a chunked body over
--max-body (its connection closed; its span, continuing a traceparent
sent with it, goes to OUT without a traceresponse), a garbage request.

usage: probes.py PORT CONNS OUT"""
import http.client
import json
import socket
import sys
import time

port, conns, out = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
TP = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"
probes = [  # name, method, path, headers, body, expected status, reaches the OSDs
    ("tp-garbage", "GET", "/gw-probe/a", [("traceparent", "00-xyz")], b"", 404, True),
    ("tp-upper", "GET", "/gw-probe/a", [("traceparent", TP.upper())], b"", 404, True),
    ("tp-twice", "GET", "/gw-probe/a", [("traceparent", TP), ("traceparent", TP)], b"", 404, True),
    ("b3-garbage", "GET", "/gw-probe/a", [("b3", "zzz-1")], b"", 404, True),
    ("too-large", "PUT", "/gw-probe/big", [("Content-Length", "70000")], b"", 413, False),
    ("bad-path", "GET", "/no-key", [], b"", 400, False),
    ("bad-method", "POST", "/gw-probe/a", [], b"", 405, False),
]


def raw(data):
    """Sends bytes on a new connection: the answer's status line, or ""
    when the connection is closed without one."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    try:
        s.sendall(data)
        return s.recv(200).split(b"\r\n")[0].decode()
    except OSError:
        return ""
    finally:
        s.close()


GET = b"GET /gw-probe/a HTTP/1.1\r\nHost: t\r\n"
held = [socket.create_connection(("127.0.0.1", port), timeout=30) for _ in range(conns + 4)]
time.sleep(0.5)
if raw(GET + b"\r\n") != "":
    sys.exit("probe conn-limit: answered with %d connections held" % len(held))
for h in held:
    h.close()
time.sleep(0.5)  # the gateway's threads see them closed
if not raw(GET + b"X-Big: " + b"a" * 200000 + b"\r\n\r\n").startswith("HTTP/1.1 431"):
    sys.exit("probe big-header: want 431")
TP2 = "00-5ca1ab1e000000000000000000000001-00000000000000aa-01"
chunked = b"PUT /gw-probe/c HTTP/1.1\r\nHost: t\r\ntraceparent: " + TP2.encode() + \
    b"\r\nTransfer-Encoding: chunked\r\n\r\n" + b"4000\r\n" + b"z" * 0x4000 + b"\r\n"
s = socket.create_connection(("127.0.0.1", port), timeout=30)
try:
    for _ in range(64):  # 1 MiB offered, --max-body is less
        s.sendall(chunked if _ == 0 else chunked[chunked.index(b"4000"):])
    closed = s.recv(100) == b""
except OSError:
    closed = True
s.close()
if not closed:
    sys.exit("probe chunked-too-large: the connection was not closed")
if raw(b"\x00\x01garbage\r\n\r\n") not in ("", "HTTP/1.1 400 Bad Request"):
    sys.exit("probe garbage: want 400 or a closed connection")

with open(out, "w") as f:
    f.write(json.dumps({"name": "chunked-too-large", "sent": TP2, "traceresponse": "",
                        "status": 0, "osds": False}) + "\n")
    for name, method, path, headers, body, want, osds in probes:
        c = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        c.putrequest(method, path, skip_accept_encoding=True)
        for k, v in headers:
            c.putheader(k, v)
        if not any(k == "Content-Length" for k, _ in headers):
            c.putheader("Content-Length", str(len(body)))
        c.endheaders(body)
        r = c.getresponse()
        r.read()
        c.close()
        if r.status != want:
            sys.exit("probe %s: status %d, want %d" % (name, r.status, want))
        f.write(json.dumps({"name": name, "sent": dict(headers).get("traceparent", ""),
                            "traceresponse": r.getheader("traceresponse", ""),
                            "status": r.status, "osds": osds}) + "\n")
