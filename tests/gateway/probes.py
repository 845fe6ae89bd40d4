"""Hostile and odd requests at sim-gateway: malformed trace headers (each
must start a new, recorded root and be counted), a body over --max-body,
a bad path, a method it does not serve: each answered from a new root
span, whose traceresponse goes with the probe, one JSON line per probe to
OUT; only the well-formed GETs reach the OSDs.

usage: probes.py PORT OUT"""
import http.client
import json
import sys

port, out = int(sys.argv[1]), sys.argv[2]
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
with open(out, "w") as f:
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
