"""CPU breakdown per cluster operation for bench/sim (imported by bench_sim.sh's
report). Sources, per run WORK/CFG-ROUND:
- each client's and OSD's own "SIM-CPU NAME pid= user_us= sys_us= vcsw=
  ivcsw=" line (getrusage at its exit, in WORK/CFG-ROUND/logs/*.log): CPU
  time and context switches;
- WORK/CFG-ROUND.cpu.json from cpu_run.py: the whole process tree, the LTTng
  daemons' deltas, the machine's busy time; for traced runs also
  WORK/CFG-ROUND.inner.json (cpu_run.py --inner, `hoptrace record`'s command),
  which splits the tree into the cluster and `hoptrace record`;
- the clients' SIM-CLIENT lines for the number of operations.
Figures are summed over all rounds and divided by all rounds' operations, so
that rows add up to the totals. Whatever is missing is said, never filled in.
"""
import glob, json, os

DAEMONS = ("lttng-consumerd", "lttng-sessiond")
# rows for the rest of the process tree, and their labels
OTHER = (("launcher", "launcher (cluster.sh)"),
         ("record-setup", "hoptrace record, set-up"),
         ("record-after", "hoptrace record, after"))


def _round(work, cfg, r):
    d = os.path.join(work, "%s-%d" % (cfg, r))
    ops, rate = 0, 0.0
    for line in open(os.path.join(d, "clients.txt")):
        if line.startswith("SIM-CLIENT"):
            kv = dict(x.split("=", 1) for x in line.split()[2:])
            ops += int(kv["ops"])
            rate += float(kv["ops_s"])
    sim, csw = {}, [0, 0]
    for log in glob.glob(os.path.join(d, "logs", "*.log")):
        for line in open(log, errors="replace"):
            if line.startswith("SIM-CPU "):
                f = line.split()
                kv = dict(x.split("=", 1) for x in f[2:])
                u, s = sim.get(f[1], (0, 0))
                sim[f[1]] = (u + int(kv["user_us"]), s + int(kv["sys_us"]))
                csw[0] += int(kv.get("vcsw", 0))
                csw[1] += int(kv.get("ivcsw", 0))
    started = [l.split()[0] for l in open(os.path.join(d, "procs")) if l.strip()]
    cpu = json.load(open(os.path.join(work, "%s-%d.cpu.json" % (cfg, r))))
    p = os.path.join(work, "%s-%d.inner.json" % (cfg, r))
    inner = json.load(open(p)) if os.path.exists(p) else None
    return ops, rate, sim, started, cpu, inner, csw


def _order(name):
    role, _, n = name.partition(".")
    return (role != "client", role, int(n) if n.isdigit() else n)


def _collect(work, cfg, rounds):
    """name -> [user_us, sys_us] summed over rounds (None: not measured in
    some round), plus the totals and notes."""
    rows, notes, ops, wall, busy, per_round, rate = {}, [], 0, 0.0, 0, [], 0.0
    unmeasured, csw = set(), [0, 0]
    for r in range(rounds):
        o, rt, sim, started, cpu, inner, c = _round(work, cfg, r)
        csw = [csw[0] + c[0], csw[1] + c[1]]
        ops += o
        rate += rt / rounds
        wall += cpu["wall_s"]
        busy += cpu["machine_busy_us"]
        for name in set(started) - set(sim):
            unmeasured.add(name)
        for name, (u, s) in sim.items():
            acc = rows.setdefault(name, [0, 0])
            acc[0] += u
            acc[1] += s
        for g in DAEMONS:
            d = cpu["daemons"][g]
            if not d["pids"]:
                unmeasured.add(g)
            acc = rows.setdefault(g, [0, 0])
            acc[0] += d["user_us"]
            acc[1] += d["sys_us"]
        if cpu["lost"]:
            notes.append("round %d: exited during the run, not counted: %s" % (r, ", ".join(cpu["lost"])))
            unmeasured.update(x.split()[0] for x in cpu["lost"])
        # the rest of the tree: the launcher (cluster.sh, timeout) and, traced,
        # hoptrace record with its lttng commands; the inner helper is not ours
        other = {"launcher": (inner or cpu)["tree"]}
        helper = {"user_us": 0, "sys_us": 0}
        if inner:
            helper = inner["self"]
            other["record-setup"] = inner["parent"]
            other["record-after"] = {k: cpu["tree"][k] - inner["tree"][k] - helper[k]
                                     - inner["parent"][k] for k in ("user_us", "sys_us")}
        for name, v in other.items():
            acc = rows.setdefault(name, [0, 0])
            acc[0] += v["user_us"] - (sum(x[0] for x in sim.values()) if name == "launcher" else 0)
            acc[1] += v["sys_us"] - (sum(x[1] for x in sim.values()) if name == "launcher" else 0)
        tot = sum(cpu["tree"][k] - helper[k] for k in ("user_us", "sys_us")) + sum(
            cpu["daemons"][g]["user_us"] + cpu["daemons"][g]["sys_us"] for g in DAEMONS)
        per_round.append(tot / o if o else None)
    for name in unmeasured:
        rows[name] = None
    if any(n not in DAEMONS for n in unmeasured):
        notes.append("a client or OSD printed no SIM-CPU line: its time is inside the launcher's")
    return {"rows": rows, "ops": ops, "wall": wall, "busy": busy, "per_round": per_round,
            "notes": notes, "cpus": cpu["cpus"], "rate": rate, "csw": csw}


def _sum(rows, names):
    """None: not measured; a row a configuration did not run counts 0."""
    if any(n in rows and rows[n] is None for n in names):
        return None
    return [sum(rows.get(n, (0, 0))[i] for n in names) for i in (0, 1)]


def breakdown(work, rounds, configs):
    data = {c: _collect(work, c, rounds) for c in configs}
    procs = sorted({n for d in data.values() for n in d["rows"]
                    if n not in DAEMONS and n not in dict(OTHER)}, key=_order)
    roles = {}
    for n in procs:
        roles.setdefault(n.split(".")[0], []).append(n)
    # (label, names summed) in print order; per-process rows indented under their role
    table = []
    for role, names in roles.items():
        table.append(("%ss (%d)" % (role, len(names)), names))
        table += [("  " + n, [n]) for n in names]
    table += [(g, [g]) for g in DAEMONS]
    table += [(label, [n]) for n, label in OTHER]
    everything = procs + list(DAEMONS) + [n for n, _ in OTHER]
    table.append(("total", everything))

    def cell(cfg, names):
        d = data[cfg]
        if not any(n in d["rows"] for n in names):
            return ()  # not run in this configuration
        v = _sum(d["rows"], names)
        return None if v is None or not d["ops"] else (v[0] / d["ops"], v[1] / d["ops"])

    w = 22
    head1 = "%-*s" % (w, "") + "".join("%21s" % c for c in configs)
    head2 = "%-*s" % (w, "process") + "".join("%7s%7s%7s" % ("user", "sys", "total") for _ in configs)
    last = configs[-1]
    if len(configs) > 1:
        head1 += "%16s" % ("%s - %s" % (last.split("-")[-1], configs[0]))
        head2 += "%16s" % "total"
    out = ["CPU per operation: microseconds of CPU per cluster operation (all rounds'",
           "CPU / all rounds' operations), user and system, by process:", "", head1, head2]
    for label, names in table:
        line = "%-*s" % (w, label)
        for cfg in configs:
            c = cell(cfg, names)
            line += "%7s%7s%7s" % ("n/m", "n/m", "n/m") if c is None else \
                "%7s%7s%7s" % ("-", "-", "-") if c == () else \
                "%7.1f%7.1f%7.1f" % (c[0], c[1], c[0] + c[1])
        if len(configs) > 1:
            a, b = cell(configs[0], names), cell(last, names)
            line += "%16s" % ("n/m" if a is None or b is None else "%+.1f" % (sum(b) - sum(a)))
        out.append(line)
    # whole-machine view: CPU the measured processes used, and what else ran
    line1, line2 = "%-*s" % (w, "cores x ops/s rate"), "%-*s" % (w, "machine: busy (ours)")
    for cfg in configs:
        d = data[cfg]
        t = _sum(d["rows"], everything)
        # CPU/op x mean ops/s, hoptrace record's work after the run left out:
        # about the cores the workload kept busy while it ran
        r = _sum(d["rows"], [n for n in everything if n != "record-after"])
        line1 += "%21s" % ("n/m" if r is None else "%.2f of %d" % (
            sum(r) / d["ops"] * d["rate"] / 1e6, d["cpus"]))
        # whole runs (start-up, shutdown, trace read-back too), every process
        line2 += "%21s" % ("%.2f (%s)" % (d["busy"] / 1e6 / d["wall"], "n/m" if t is None else
                                          "%.2f" % (sum(t) / 1e6 / d["wall"])))
    # wake-ups: where much of the system time goes (each a sleep and a wake)
    line3 = "%-*s" % (w, "ctx switches/op (v+i)")
    for cfg in configs:
        d = data[cfg]
        line3 += "%21s" % ("-" if not d["ops"] else "%.2f + %.2f" % (
            d["csw"][0] / d["ops"], d["csw"][1] / d["ops"]))
    out += [line1, line2, line3, ""]
    out.append("total per round (us/op): " + "; ".join(
        "%s %s" % (c, ", ".join("%.1f" % x if x is not None else "n/m" for x in data[c]["per_round"]))
        for c in configs))
    tb = cell(configs[0], everything)
    if tb:
        out.append("%s: system time is %.0f%% of the CPU (loopback sockets, wake-ups); it moves"
                   % (configs[0], 100 * tb[1] / sum(tb)))
        out.append("between rounds with scheduling: user time, where the recording code runs,"
                   " is the")
        out.append("steadier measure of its cost.")
    base = configs[0]
    record = [n for n, _ in OTHER if n.startswith("record")]
    for cfg in configs[1:]:
        tb, tc = cell(base, everything), cell(cfg, everything)
        if tb is None or tc is None:
            out.append("%s vs %s: not all of the cost was measured (n/m rows)" % (cfg, base))
            continue
        def delta(names, i=None):  # i: 0 user, 1 system, None both
            a, b = cell(base, names), cell(cfg, names)
            if a is None or b is None:
                return None
            return (sum(b) - sum(a)) if i is None else (b[i] if b else 0) - (a[i] if a else 0)
        fmt = lambda v: "n/m" if v is None else "%+.1f" % v
        run = [(label.split(" (")[0], names) for label, names in table
               if not label.startswith(" ") and label != "total" and names[0] not in record]
        during = delta([n for _, names in run for n in names])
        after = data[cfg]["rows"].get("record-after")
        out.append("%s costs %s us CPU/op over %s (%+.0f%%): %s while the cluster runs (%s);"
                   " hoptrace record %s%s." % (
            cfg, fmt(sum(tc) - sum(tb)), base, 100 * (sum(tc) - sum(tb)) / sum(tb), fmt(during),
            ", ".join("%s %s" % (l, fmt(delta(n))) for l, n in run), fmt(delta(record)),
            "" if not after else " (%.2f s a run after its command: lttng stop and destroy, then "
            "reading the whole trace back to count its events: tool work, not recording)"
            % (sum(after) / rounds / 1e6)))
        # the recording code runs in user space: user time is its cleanest signal,
        # system time swings with scheduling (how many messages a wake-up handles)
        out.append("  user time only: %s (%s); system time %s." % (
            fmt(delta([n for _, names in run for n in names], 0)),
            ", ".join("%s %s" % (l, fmt(delta(n, 0))) for l, n in run),
            fmt(delta([n for _, names in run for n in names], 1))))
    for cfg in configs:
        out += ["%s: %s" % (cfg, n) for n in data[cfg]["notes"]]
    return out, data
