#!/usr/bin/env python3
"""Two overlapping flight-recorder snapshots written by hand (CTF 1.8),
for tool_snapshot_copies.sh: both snapshot directories (named as LTTng
names them) hold the same stream of hoptrace:span_s sides of trace 7, so
every event of one is a copy of the other's.

  snapshot_copies.py DIR same-time N   N sides, all at one time
  snapshot_copies.py DIR back          2 sides, the stream's time going
                                       back (2000 then 1000 ns)

(From review 3's generators, /tmp/me/gen: ctf.py, dedupe_cap.py,
dedupe_back.py; one stream, one packet, the fields span_s has.)"""
import os, struct, sys

METADATA = '''/* CTF 1.8 */
typealias integer { size = 8; align = 8; signed = false; } := uint8_t;
typealias integer { size = 32; align = 8; signed = false; } := uint32_t;
typealias integer { size = 64; align = 8; signed = false; } := uint64_t;
trace { major = 1; minor = 8; byte_order = le;
  packet.header := struct { uint32_t magic; uint32_t stream_id; }; };
env { hostname = "h1"; domain = "ust"; };
clock { name = "monotonic"; freq = 1000000000; offset_s = 0; offset = 0; };
typealias integer { size = 64; align = 8; signed = false; map = clock.monotonic.value; } := uint64_clock_t;
stream { id = 0;
  packet.context := struct { uint64_clock_t timestamp_begin; uint64_clock_t timestamp_end;
                             uint64_t content_size; uint64_t packet_size; };
  event.header := struct { uint32_t id; uint64_clock_t timestamp; };
  event.context := struct { uint32_t vpid; };
};
event { name = "hoptrace:span_s"; id = 0; stream_id = 0; fields := struct {
  uint32_t side[4]; uint64_t at[5]; uint8_t kind; string name; string service;
  string endpoint; string peer_text; }; };
'''
VPID = 100


def span_s(trace, span, parent, start):
    """side: desc 0, vpid, vtid 7; at: trace (hi, lo), span, parent, start"""
    return (struct.pack('<4I', 0, VPID, 7, 0) + struct.pack('<5Q', 0, trace, span, parent, start)
            + bytes([1]) + b'op\0svc\0ep\0\0')


def write_snapshot(d, events):
    """events: [(ts, payload)], one packet of stream 0"""
    os.makedirs(d)
    with open(os.path.join(d, 'metadata'), 'w') as f:
        f.write(METADATA)
    body = b''.join(struct.pack('<IQI', 0, ts, VPID) + p for ts, p in events)
    size = (8 + 32 + len(body)) * 8
    times = [ts for ts, _ in events]
    header = struct.pack('<IIQQQQ', 0xC1FC1FC1, 0, min(times), max(times), size, size)
    with open(os.path.join(d, 'stream_0'), 'wb') as f:
        f.write(header + body)


def main():
    out, shape = sys.argv[1], sys.argv[2]
    if shape == 'same-time':
        n = int(sys.argv[3])
        events = [(1000, span_s(7, 1, 0, 500))] + \
                 [(1000, span_s(7, i, 1, 600)) for i in range(2, n + 1)]
    elif shape == 'back':
        events = [(2000, span_s(7, 1, 0, 500)), (1000, span_s(7, 2, 1, 600))]
    else:
        sys.exit('unknown shape ' + shape)
    for k in range(2):
        write_snapshot(os.path.join(out, 'snapshot-1-20240101-120000-%d' % k), events)


main()
