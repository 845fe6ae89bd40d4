#!/usr/bin/env python3
"""Writes a small CTF 1.8 trace with one hostile hoptrace event among sane
ones, for tool_hostile_ctf.sh: what a damaged or hostile trace file can
hold that LTTng never writes, so no LTTng session is needed.

usage: hostile_ctf.py CASE STREAMS DIR
  CASE     kvs-not-array: a schema 1 `kvs` whose `types` and `ints` are
           variants, not arrays (trace 9)
           time-past-int64: a span_s (trace 2) and a schema 1 annotation
           (trace 3) whose time, in ns since the epoch, does not fit int64:
           the clock's offset is 7 s short of it, the events 10 s after it
           (beyond their packet's end, which src.ctf.fs checks; its events
           it does not)
  STREAMS  1 or 2 stream files; a sane span_s (traces 1, then 4) in each,
           the hostile event in the first
"""
import os
import struct
import sys

METADATA = '''/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
trace { major = 1; minor = 8; byte_order = le;
  packet.header := struct { uint32_t magic; uint32_t stream_id; }; };
env { hostname = "h1"; domain = "ust"; };
clock { name = "monotonic"; freq = 1000000000; offset_s = %(offset_s)d; offset = 0; };
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; }
  := uint64_clock_t;
stream { id = 0;
  packet.context := struct { uint64_clock_t timestamp_begin; uint64_clock_t timestamp_end;
                             uint64_t content_size; uint64_t packet_size; };
  event.header := struct { uint32_t id; uint64_clock_t timestamp; };
  event.context := struct { uint32_t vpid; };
};
event { name = "hoptrace:span_s"; id = 0; stream_id = 0; fields := struct {
  uint32_t side[4]; uint64_t at[5]; uint8_t kind;
  string name; string service; string endpoint; string peer_text; }; };
event { name = "hoptrace:kvs"; id = 1; stream_id = 0; fields := struct {
  uint64_t trace_id_hi; uint64_t trace_id_lo; uint64_t span_id; uint64_t parent_span_id;
  string keys; enum : uint8_t { A = 0, B = 1 } tag;
  variant <tag> { uint64_t A; uint64_t B; } types;
  variant <tag> { uint64_t A; uint64_t B; } ints; string strs; }; };
event { name = "hoptrace:annotation"; id = 2; stream_id = 0; fields := struct {
  uint64_t trace_id_hi; uint64_t trace_id_lo; uint64_t span_id; uint64_t parent_span_id;
  string name; }; };
'''


def u8(v):
    return struct.pack('<B', v)


def u32(v):
    return struct.pack('<I', v)


def u64(v):
    return struct.pack('<Q', v)


def text(t):
    return t.encode() + b'\0'


def span_s(trace, start):
    """A root client side of `trace` (span id = trace), process 100."""
    side = u32(0) + u32(100) + u32(7) + u32(0)
    at = u64(0) + u64(trace) + u64(trace) + u64(0) + u64(start)
    return (0, side + at + u8(1) + text('op') + text('svc') + text('ep') + text(''))


def kvs_not_array():
    """Trace 9, span 2; the variants' tag (B) selects their second option."""
    ids = u64(0) + u64(9) + u64(2) + u64(0)
    return (1, ids + text('a') + u8(1) + u64(0) + u64(0) + text('x'))


def annotation(trace):
    return (2, u64(0) + u64(trace) + u64(1) + u64(0) + text('note'))


def write(path, events, end=None):
    """One packet of (cycles, (event id, payload)) events."""
    body = b''.join(u32(eid) + u64(ts) + u32(100) + p for ts, (eid, p) in events)
    size = (8 + 32 + len(body)) * 8
    begin = min(ts for ts, _ in events)
    end = max(ts for ts, _ in events) if end is None else end
    with open(path, 'wb') as f:
        f.write(u32(0xC1FC1FC1) + u32(0) + u64(begin) + u64(end) + u64(size) + u64(size) + body)


def main():
    case, streams, out = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    offset_s, end = 0, None
    if case == 'kvs-not-array':
        first = [(100, span_s(1, 50)), (200, kvs_not_array())]
    elif case == 'time-past-int64':
        offset_s, end = 9223372030, 200
        first = [(100, span_s(1, 50)), (10 * 10**9, span_s(2, 60)),
                 (10 * 10**9 + 5, annotation(3))]
    else:
        sys.exit('hostile_ctf.py: unknown case ' + case)
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, 'metadata'), 'w') as f:
        f.write(METADATA % {'offset_s': offset_s})
    write(os.path.join(out, 'stream_0'), first, end)
    if streams > 1:
        write(os.path.join(out, 'stream_1'), [(150, span_s(4, 50))], end)


if __name__ == '__main__':
    main()
