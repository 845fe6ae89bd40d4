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
    "retired_type5": envelope(mtype=5, op=b"ctl.sample", payload=b"0.1"),
    "error": envelope(mtype=4, seq=9, status=-14),
    "payload_first": tag(15, 2) + varint(3) + b"abc" + envelope(),
    "unknown_fields": envelope() + tag(99, 0) + varint(5) + tag(100, 5) + b"\1\2\3\4",
    "version2": envelope(version=2),
    # a repeated trace context: protobuf-c keeps only the later one whole
    "trace_twice": envelope(ctx=FULL) + tag(6, 2) + varint(2) + trace(0, 0, 0, 0, 1),
    # a length prefix padded to 6 bytes: protobuf-c refuses it
    "padded_length": envelope() + tag(15, 2) + bytes([0x83, 0x80, 0x80, 0x80, 0x80, 0]) + b"abc",
}


CONTROL = {  # first byte picks the reply capacity (0: HT_CONTROL_REPLY_MIN)
    "status": b"\0status",
    "help_quit": b"\0help\nquit\n",
    "sample": b"\0sample 0.25\nstatus",
    "sampler_rate": b"\3sampler rate rate=50 burst=10\r\nstatus",
    "sampler_parent": b"\0sampler parent root=ratio ratio=0.1 trust_remote_debug=on",
    "set_pairs": b"\2set rate=5 burst=0 remote_debug_rate=1.5\nset ratio=2",
    "trust_debug": b"\0trust-debug on 20\ntrust-debug off\ntrust-debug maybe",
    "bad_words": b"\0sample\nsampler\nset ratio\nset =1\nset nokey=1\nfrobnicate x",
    "bad_numbers": b"\0sample nan\nsample -0.1\nsample 1e999\nset rate=inf\nset burst=0.5",
    "long_line": b"\0set " + b"ratio=0.5 " * 40,
    "many_words": b"\0set" + b" a=1" * 20,
    "nonprintable": b"\0sta\x01tus\nstatus\x80\n\tstatus\t\n\n",
    "small_reply": b"\4status",
}


def conn_step(conn, text, end=False):
    """fuzz_control_lines.c: text received on connection conn (ends after)."""
    return bytes([conn | (0x80 if end else 0), len(text)]) + text


# fuzz_control_lines.c: first byte = connections - 1, then steps
CONTROL_LINES = {
    "interleaved": b"\2" + conn_step(0, b"sam") + conn_step(1, b"status\nhel")
    + conn_step(2, b"set ratio=0.5") + conn_step(0, b"ple 0.25\n")
    + conn_step(1, b"p\n", True) + conn_step(2, b"\n", True),
    "idle_and_busy": b"\7" + b"".join(conn_step(i, b"stat") for i in range(8))
    + conn_step(3, b"us\nstatus\n" * 10) + conn_step(5, b"us", True),
    "too_long_on_one": b"\1" + conn_step(0, b"x" * 200) + conn_step(1, b"help\n")
    + conn_step(0, b"x" * 100) + conn_step(1, b"status\n"),
    "exact_max_line": b"\0" + conn_step(0, b"set " + b"r" * 200)
    + conn_step(0, b"s" * 52 + b"\nstatus\n"),
    "last_line_no_newline": b"\3" + conn_step(3, b"quit\nsample 0.1\nsampler never")
    + conn_step(2, b"\x00\xff\r\n\n"),
}


# Event kinds of tools/hoptrace/read/event.h, in order.
START, END, ANNOT, KV_STR, KV_INT, KVS, STATUS, SEND, RECV = range(9)
# Indexes into fuzz_assemble.c's string table.
S_NULL, S_EMPTY, S_WRITE, S_READ, S_CS, S_SR, S_SS, S_CR, S_CLIENT, S_OSD, \
    S_ADDR, S_DROPPED, S_ERROR, S_LONG = range(14)


def event(kind, step, trace, span_id, parent, name=S_WRITE, service=S_OSD,
          status=0, kvs=(), int_value=0, raw_ts=None):
    """One event as fuzz_assemble.c decodes it. trace: 0..15 picks (hi, lo);
    raw_ts: an absolute timestamp instead of the step."""
    b = bytes([kind, 0xFF if raw_ts is not None else step])
    if raw_ts is not None:
        b += struct.pack(">q", raw_ts)
    b += bytes([trace | 0x10, span_id, parent if parent else 0x80,
               S_OSD, S_EMPTY, 1, 1, name, service, S_ADDR, status & 0xFF,
               S_ERROR, S_ERROR, S_DROPPED]) + struct.pack(">q", int_value)
    b += bytes([len(kvs)])
    for key, is_int, value in kvs:
        b += bytes([key, is_int, value]) + (b"" if is_int else bytes([S_CLIENT]))
    return b + bytes([1, 7, 64, S_ADDR])


def request(trace, client, server, parent=0, step=1):
    """A client span and its server child, as one traced request records."""
    return (event(START, step, trace, client, parent, service=S_CLIENT) +
            event(ANNOT, 1, trace, client, parent, name=S_CS) +
            event(SEND, 1, trace, client, parent) +
            event(START, 1, trace, server, client) +
            event(ANNOT, 1, trace, server, client, name=S_SR) +
            event(KVS, 1, trace, server, client,
                  kvs=((S_WRITE, 1, 5), (S_READ, 0, 0))) +
            event(ANNOT, 1, trace, server, client, name=S_SS) +
            event(END, 1, trace, server, client) +
            event(RECV, 1, trace, client, parent) +
            event(ANNOT, 1, trace, client, parent, name=S_CR) +
            event(END, 1, trace, client, parent))


TICK, DISCARD, DISCARD_ANY, FLUSH, JUMP = 0xC0, 0xE0, 0xE1, 0xF0, 0xF8
ASSEMBLE = {  # first byte: grace (bits 0-1) and timeout (bits 2-3) choices
    "one_request": bytes([0]) + request(5, 1, 2),
    "replicated": bytes([1 | 4]) + request(5, 1, 2) + request(5, 3, 4, parent=2),
    "interleaved": bytes([2 | 8]) + b"".join(
        request(t, 1 + t, 20 + t) for t in range(4)) + bytes([TICK | 31]),
    "orphan_and_unfinished": bytes([1]) + event(START, 1, 6, 9, 33) +
        event(ANNOT, 1, 6, 10, 0, name=S_DROPPED) + bytes([TICK | 1]),
    "self_parent": bytes([0]) + event(START, 1, 7, 3, 3) + event(END, 1, 7, 3, 3),
    "status_and_kv": bytes([0]) + event(START, 1, 8, 1, 0) +
        event(STATUS, 1, 8, 1, 0, status=-110) +
        event(KV_STR, 1, 8, 1, 0) + event(KV_INT, 1, 8, 1, 0, int_value=-1) +
        event(END, 1, 8, 1, 0, status=-5),
    "lossy": bytes([1 | 4]) + request(9, 1, 2) + bytes([DISCARD]) +
        request(10, 1, 2) + bytes([DISCARD_ANY, TICK | 2]),
    "timeout_then_reuse": bytes([1 | 4]) + event(START, 1, 11, 1, 0) +
        bytes([TICK | 31]) + event(END, 1, 11, 1, 0) + bytes([FLUSH]) +
        request(11, 1, 2),
    "big_trace": bytes([0]) + b"".join(
        event(START, 1, 12, i, i - 1 if i > 1 else 0) +
        event(END, 1, 12, i, i - 1 if i > 1 else 0) for i in range(1, 64)),
    "clock_jumps": bytes([2]) + request(13, 1, 2) + bytes([JUMP]) +
        struct.pack(">Q", 0x7FFFFFFFFFFFFF00) + event(END, 0, 13, 1, 0, raw_ts=-(1 << 62)) +
        request(14, 1, 2, step=0xF5) + bytes([JUMP]) + struct.pack(">Q", 1 << 63),
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
    # W3C random (flags bit 2) with SAMPLED; outside ENVELOPES so that the
    # frame-reader streams stay as they were
    write("envelope", "random_flag", envelope(ctx=trace(1, 2, 3, 4, 5)))
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
        "random": "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03",
        "ows": " \t00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01\t ",
        "inner_space": "00-4bf92f3577b34da6a3ce929d0e0e4736 -00f067aa0ba902b7-01",
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
    for name, data in CONTROL.items():
        write("control", name, data)
    for name, data in CONTROL_LINES.items():
        write("control_lines", name, data)
    for name, data in ASSEMBLE.items():
        write("assemble", name, data)
    for name, data in EVENT_BLOCK.items():
        write("event_block", name, data)
    for name, data in PARTIAL.items():
        write("partial", name, data)


def discarded_record(count, begin, end):
    """event_block.h's event_record of type 2 (a loss), 32 bytes."""
    return struct.pack("<IIqQq", 32, 2, begin, count, end)


def raw_block(records):
    body = b"".join(records)
    header = struct.pack("<II", len(records), 16 + len(body)) + bytes(8)
    return b"\x00" + header + body  # first byte even: a raw block


# fuzz_event_block.c: even first byte, a block as it may arrive; odd, a
# description of events to pack and read back (kind, ts, span, string,
# kv count per event).
EVENT_BLOCK = {
    "raw_losses": raw_block([discarded_record(17, 100, 200), discarded_record(0, 0, 0)]),
    "raw_bad_size": raw_block([struct.pack("<IIqQq", 48, 2, 1, 1, 1)]),
    "raw_unknown_type": raw_block([struct.pack("<IIqQq", 32, 9, 1, 1, 1)]),
    "round_trip": b"\x01\x02" + b"".join(
        bytes([k, 3, k + 1, 5]) + b"osd.3" + bytes([k % 5]) for k in range(15)),
    "round_trip_null_strings": b"\x01\x00" + b"".join(
        bytes([k, 0, 1, 0xFF, 2]) for k in range(20)),
    "round_trip_fills_block": b"\x01\x00" + b"".join(
        bytes([1, 1, 1, 40]) + b"x" * 40 + bytes([4]) for _ in range(40)),
}




def partial_pb(rejected, message):
    """An ExportTraceServiceResponse: partial_success (1) of rejected_spans
    (1, int64: a negative one as its 64-bit two's complement) and
    error_message (2)."""
    inner = tag(1, 0) + varint(rejected & (1 << 64) - 1) + tag(2, 2) + varint(len(message)) + message
    return tag(1, 2) + varint(len(inner)) + inner


def partial(fmt, spans, body):
    """fuzz_partial's input: the format (0 protobuf, 1 JSON, 2 Zipkin), the
    batch's span count (2 bytes, big-endian), the reply body."""
    return bytes([fmt]) + struct.pack(">H", spans) + body


PARTIAL = {
    "proto_some_rejected": partial(0, 10, partial_pb(5, b"5 spans had no name")),
    "proto_negative": partial(0, 10, partial_pb(-1, b"neg")),
    "proto_past_batch": partial(0, 2, partial_pb(1 << 40, b"\xc2\x85C1 \xe2\x82\xac \xff bad")),
    "proto_long_message": partial(0, 256, partial_pb(3, "\u00e9".encode() * 150)),
    "proto_unreadable": partial(0, 10, b"\x0a\xff\xff\xff\x0f\x08"),
    "json_string_count": partial(1, 10, b'{"partialSuccess": {"rejectedSpans": "3", '
                                        b'"errorMessage": "bad \\u00e9\\n\\"span\\" \xe2\x82\xac"}}'),
    "json_number_count": partial(1, 10, b'{"partialSuccess":{"rejectedSpans":12,"errorMessage":"too many"}}'),
    "json_huge_count": partial(1, 10, b'{"partialSuccess":{"rejectedSpans":99999999999999999999999,'
                                      b'"errorMessage":"x\\u0007\\ud800"}}'),
    "json_not_a_number": partial(1, 10, b'{"partialSuccess":{"rejectedSpans":1.5e3,"errorMessage":"\\'),
    "json_none": partial(1, 10, b"{}"),
    "zipkin": partial(2, 10, b'{"partialSuccess":{"rejectedSpans":"3"}}'),
}


if __name__ == "__main__":
    main()
