#!/usr/bin/env python3
"""Writes the seed corpus of every fuzz target (tests/fuzz/corpus/).
Deterministic; encodes protobuf by hand so seeds do not depend on the code
under test. Re-run after changing the schema and commit the result."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))


def varint(v):
    out = bytearray()
    while v >= 0x80:
        out.append((v & 0x7F) | 0x80)
        v >>= 7
    out.append(v)
    return bytes(out)


def tag(field, wt):
    return varint(field << 3 | wt)


def fixed64(v):
    return struct.pack("<Q", v)


def zigzag32(v):
    return (v << 1) ^ (v >> 31)


def trace(hi, lo, span, parent, flags):
    b = b""
    for field, v in ((1, hi), (2, lo), (3, span), (4, parent)):
        if v:
            b += tag(field, 1) + fixed64(v)
    if flags:
        b += tag(5, 0) + varint(flags)
    return b


def envelope(version=1, mtype=1, seq=0, op=b"", status=0, ctx=None, payload=b""):
    b = b""
    if version:
        b += tag(1, 0) + varint(version)
    if mtype:
        b += tag(2, 0) + varint(mtype)
    if seq:
        b += tag(3, 0) + varint(seq)
    if op:
        b += tag(4, 2) + varint(len(op)) + op
    if status:
        b += tag(5, 0) + varint(zigzag32(status) & 0xFFFFFFFF)
    if ctx is not None:
        b += tag(6, 2) + varint(len(ctx)) + ctx
    if payload:
        b += tag(15, 2) + varint(len(payload)) + payload
    return b


def frame(body):
    return struct.pack(">I", len(body)) + body


FULL = trace(0x4BF92F3577B34DA6, 0xA3CE929D0E0E4736, 0x00F067AA0BA902B7,
             0x05E3AC9A4F6E3B90, 1)
ENVELOPES = {
    "bare_request": envelope(),
    "reply_with_status": envelope(mtype=2, seq=7, op=b"osd.read", status=-5),
    "traced_write": envelope(seq=1 << 40, op=b"osd.write", ctx=FULL,
                             payload=b"x" * 64),
    "traced_64bit_root": envelope(mtype=3, ctx=trace(0, 42, 43, 0, 3)),
    "reserved_flags": envelope(ctx=trace(1, 2, 3, 4, 0xFFFFFFF1)),
    "control": envelope(mtype=5, op=b"ctl.sample", payload=b"0.1"),
    "error": envelope(mtype=4, seq=9, status=-14),
    "payload_first": tag(15, 2) + varint(3) + b"abc" + envelope(),
    "unknown_fields": envelope() + tag(99, 0) + varint(5) + tag(100, 5) + b"\1\2\3\4",
    "version2": envelope(version=2),
}


def write(target, name, data):
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def main():
    for name, body in ENVELOPES.items():
        write("envelope", name, body)
        # frame-reader inputs: 2 control bytes (max frame, chunk) + frames
        write("frame_reader", name, bytes([255, 3]) + frame(body))
    stream = b"".join(frame(b) for b in ENVELOPES.values())
    write("frame_reader", "stream_all", bytes([255, 7]) + stream)
    write("frame_reader", "stream_bytewise", bytes([255, 0]) + stream)
    write("frame_reader", "oversize", bytes([0, 1]) + struct.pack(">I", 1 << 20))
    write("frame_reader", "truncated", bytes([255, 5]) + frame(ENVELOPES["traced_write"])[:30])
    for name, text in {
        "spec": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
        "unsampled": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00",
        "future": "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-09-more",
        "zero_trace": "00-00000000000000000000000000000000-00f067aa0ba902b7-01",
        "upper": "00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",
        "version_ff": "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",
    }.items():
        write("traceparent", name, text.encode())
    for name, text in {
        "full": "80f198ee56343ba864fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3ac9a4f6e3b90",
        "short_trace": "64fe8b2a57d3eff7-e457b5a2e4d86bd1",
        "debug": "64fe8b2a57d3eff7-e457b5a2e4d86bd1-d",
        "deny": "64fe8b2a57d3eff7-e457b5a2e4d86bd1-0",
        "alone_deny": "0",
        "alone_debug": "d",
        "bad_parent": "64fe8b2a57d3eff7-e457b5a2e4d86bd1-1-05e3",
    }.items():
        write("b3", name, text.encode())


if __name__ == "__main__":
    main()
