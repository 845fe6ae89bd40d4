"""One callgrind profile's instructions by function, for the benchmarks'
attribution scripts (bench/messenger/attribute.sh, bench/sim/cg_per_op.py)."""
import os
import re
import subprocess

LINE = re.compile(r"\s*([\d,]+)\s+\([\s\d.]+%\)\s+(\S+)(?: \[(.*)\])?")


def profile(path):
    """{(file:function, shared object): instructions} and the program's
    total (--threshold=100: every function listed, none left out)"""
    text = subprocess.run(["callgrind_annotate", "--auto=no", "--threshold=100", path],
                          capture_output=True, text=True, check=True).stdout
    funcs, total = {}, 0
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        if "PROGRAM TOTALS" in line:
            total = n
            continue
        key = (m.group(2).split("/")[-1], os.path.basename(m.group(3) or "(inlined)"))
        funcs[key] = funcs.get(key, 0) + n
    return funcs, total
