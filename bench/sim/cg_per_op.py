"""Instructions per cluster operation, plain against traced, from the
callgrind profiles bench/sim/attribute.sh leaves in OUT/{plain,traced}
(cg.osd.PID, cg.client.PID; OUT/MODE/ops: the operations the clients
completed).  usage: cg_per_op.py OUT TOP"""
import glob
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "common"))
from callgrind_profile import profile  # noqa: E402


def per_op(out, mode, prog):
    """a program's functions and total, all its processes, per operation"""
    ops = int(open(os.path.join(out, mode, "ops")).read().split()[0])
    funcs, total = {}, 0
    for path in glob.glob(os.path.join(out, mode, "cg.%s.*" % prog)):
        f, t = profile(path)
        total += t
        for k, v in f.items():
            funcs[k] = funcs.get(k, 0) + v
    return {k: v / ops for k, v in funcs.items()}, total / ops, ops


def main():
    out, top = sys.argv[1], int(sys.argv[2])
    label_path = os.path.join(out, "traced", "label")  # attribute.sh's flight mode
    second = open(label_path).read().strip() if os.path.exists(label_path) else "traced at 100 %"
    for prog, label in (("osd", "OSDs (4)"), ("client", "clients (2)")):
        a, ta, na = per_op(out, "plain", prog)
        b, tb, nb = per_op(out, "traced", prog)
        print("%s: %.0f instructions an operation plain (%d ops), %.0f %s "
              "(%d ops): +%.0f" % (label, ta, na, tb, second, nb, tb - ta))
        objs = {}
        for k in set(a) | set(b):
            objs[k[1]] = objs.get(k[1], 0) + b.get(k, 0) - a.get(k, 0)
        print("  by object: " + ", ".join("%s %+.0f" % (o, v) for o, v in
                                          sorted(objs.items(), key=lambda x: -abs(x[1]))
                                          if abs(v) >= 5))
        rows = sorted(set(a) | set(b), key=lambda k: -(b.get(k, 0) - a.get(k, 0)))
        for k in rows[:top]:
            print("  %+8.0f  %s (%s)" % (b.get(k, 0) - a.get(k, 0), k[0], k[1]))


if __name__ == "__main__":
    main()
