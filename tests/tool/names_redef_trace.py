"""Writes a CTF 1.8 trace (a minimal writer, after review-3's gen/ctf.py)
in which process 100 names desc 1 "old_op", writes a span side of desc 1
and peer 5 (peer 5 not named yet: the side is held for it), names desc 1
again as "new_op" (a new process with the same vpid, or a hostile one),
then peer 5, then a second span side of desc 1 (trace 10).
The first side (trace 9) was written under "old_op".
usage: names_redef_trace.py DIR"""
import os, struct, sys

META = '''/* CTF 1.8 */
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
event { name = "hoptrace:span"; id = 0; stream_id = 0; fields := struct { uint64_t rec[7]; }; };
event { name = "hoptrace:process"; id = 1; stream_id = 0;
  fields := struct { uint32_t schema; string procname; uint32_t vpid; }; };
event { name = "hoptrace:desc"; id = 2; stream_id = 0; fields := struct {
  uint32_t id; uint32_t vpid; uint8_t kind; string name; string service; string endpoint; }; };
event { name = "hoptrace:peer"; id = 3; stream_id = 0;
  fields := struct { uint32_t id; uint32_t vpid; string text; }; };
'''

def u8(v): return struct.pack('<B', v)
def u32(v): return struct.pack('<I', v)
def u64(v): return struct.pack('<Q', v)
def s(t): return t.encode() + b'\0'

V = 100
def span(desc, peer, trace, start):  # schema 3's rec: ids, flags, times
    return b''.join(u64(x) for x in (desc | peer << 16 | V << 32, 7 | 0x10 << 24, 0, trace, 1, 0,
                                     start))
def desc(name): return u32(1) + u32(V) + u8(1) + s(name) + s('svc') + s('ep')

events = [(500, 1, u32(3) + s('proc') + u32(V)),
          (1000, 2, desc('old_op')),
          (2000, 0, span(1, 5, 9, 1500)),
          (3000, 2, desc('new_op')),
          (4000, 3, u32(5) + u32(V) + s('10.0.0.1:1')),
          (5000, 0, span(1, 5, 10, 4500))]
d = sys.argv[1]
os.makedirs(d, exist_ok=True)
open(os.path.join(d, 'metadata'), 'w').write(META)
body = b''.join(u32(eid) + u64(ts) + u32(V) + p for ts, eid, p in events)
size = 8 + 32 + len(body)
packet = (u32(0xC1FC1FC1) + u32(0) + u64(events[0][0]) + u64(events[-1][0]) + u64(size * 8)
          + u64(size * 8) + body)
open(os.path.join(d, 'stream_0'), 'wb').write(packet)
