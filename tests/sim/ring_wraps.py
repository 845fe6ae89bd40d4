#!/usr/bin/env python3
"""ring_wraps.py SNAPSHOT_DIR SUBBUFS [NAMES_SUBBUFS]: how many times each CPU's ring had
wrapped when the snapshot was taken, from LTTng's own packet sequence
numbers (the packet context's packet_seq_num: packets the stream ever
produced), read from the stream files (LTTng-UST's 64-bit layout: a
32-byte packet header, then timestamp_begin, timestamp_end, content_size,
packet_size (bits), packet_seq_num). Prints one line per stream and the
smallest count of the span rings (hoptrace_CPU) that carried the traffic
last; with NAMES_SUBBUFS, then the same count of the names channel's
rings (hoptrace_names_CPU: the names written again each period, which
must outrun a ring that wraps)."""
import glob
import os
import re
import struct
import sys

root, subbufs = sys.argv[1], int(sys.argv[2])
names_subbufs = int(sys.argv[3]) if len(sys.argv) > 3 else 0
wraps, names_wraps = [], []
for path in sorted(glob.glob(os.path.join(root, "**", "hoptrace_*"), recursive=True)):
    data = open(path, "rb").read()
    seqs, off = [], 0
    while off + 72 <= len(data):
        magic, = struct.unpack_from("<I", data, off)
        if magic != 0xC1FC1FC1:
            sys.exit(f"{path}: no packet header at {off}")
        packet_bits, seq = struct.unpack_from("<QQ", data, off + 56)
        seqs.append(seq)
        if packet_bits == 0:
            break
        off += packet_bits // 8
    if seqs:
        w = (max(seqs) + 1) / subbufs
        if re.fullmatch(r"hoptrace_\d+", os.path.basename(path)):
            wraps.append(w)
        elif names_subbufs and re.fullmatch(r"hoptrace_names_\d+", os.path.basename(path)):
            w = (max(seqs) + 1) / names_subbufs
            names_wraps.append(w)
        print(f"{os.path.relpath(path, root)}: {len(seqs)} packets, packets produced {max(seqs) + 1}, {w:.1f} wraps")
# a CPU the scheduler left (nearly) idle carries (nearly) no spans and
# need not wrap: the rings of at least a tenth of the busiest one's
# packets count (at load, the whole cluster ran on one CPU: its ring
# wrapped 109 times, the other's 0.1)
def least_busy(ws):
    busy = [w for w in ws if w >= max(ws) / 10] if ws else [0]
    return f"{min(busy):.1f}"
print(least_busy(wraps) + (" " + least_busy(names_wraps) if names_subbufs else ""))
