#!/usr/bin/env python3
"""Runs one benchmark command and writes, as JSON, the CPU time spent around it:

- tree: user/system time of the command and every descendant it waited for
  (getrusage RUSAGE_CHILDREN delta: the cluster, its launcher, hoptrace
  record and the lttng commands it runs);
- daemons: the LTTng session and consumer daemons of this user, delta of
  /proc/PID/stat utime/stime over the run (they are long-lived and shared,
  so only a delta means anything); a daemon that exited during the run is
  listed under "lost" (its time is unknown, never guessed);
- machine: busy time of all CPUs from /proc/stat (other jobs included).

With --inner (run as `hoptrace record`'s command), it also writes its parent's
CPU so far, /proc/PPID/stat utime/stime and cutime/cstime (the lttng commands
it ran to set the session up), and its own (the helper's, to be excluded):
the outer run's tree minus these splits `hoptrace record`'s cost into before
the command ended and after it (stop, destroy, reading the trace back).

usage: cpu_run.py [--inner] OUT.json -- COMMAND...   (exits with COMMAND's status)
"""
import json, os, resource, signal, subprocess, sys, time

TCK = os.sysconf("SC_CLK_TCK")
DAEMONS = ("lttng-sessiond", "lttng-consumerd")


def procs():
    """pid -> (comm, ppid, starttime, utime, stime) for this user's processes."""
    out, uid = {}, os.getuid()
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            if os.stat("/proc/" + pid).st_uid != uid:
                continue
            raw = open("/proc/%s/stat" % pid).read()
        except OSError:
            continue  # gone meanwhile
        comm = raw[raw.index("(") + 1:raw.rindex(")")]
        f = raw[raw.rindex(")") + 2:].split()  # f[0] is field 3 (state)
        out[int(pid)] = (comm, int(f[1]), int(f[19]), int(f[11]), int(f[12]))
    return out


def ours(pid):
    """True for a session daemon this user's lttng commands talk to: same mount
    namespace and LTTNG_HOME (tests elsewhere run private ones, and kill them)."""
    try:
        env = dict(kv.split(b"=", 1) for kv in open("/proc/%d/environ" % pid, "rb").read().split(b"\0")
                   if b"=" in kv)
        same_ns = os.readlink("/proc/%d/ns/mnt" % pid) == os.readlink("/proc/self/ns/mnt")
    except OSError:
        return False
    return same_ns and env.get(b"LTTNG_HOME") == os.environb.get(b"LTTNG_HOME")


def daemons(ps):
    """(pid, starttime) -> [group, utime, stime]: our session daemon, the
    consumer daemons it started, and their lttng-runas helpers (forked
    children, counted with their parent)."""
    out = {}
    for pid, (comm, ppid, start, ut, st) in ps.items():
        if comm == "lttng-sessiond" and ours(pid):
            out[(pid, start)] = ["lttng-sessiond", ut, st]
    for _ in range(2):  # consumerd under sessiond, runas under either
        owners = {pid: g for (pid, _), (g, _, _) in out.items()}
        for pid, (comm, ppid, start, ut, st) in ps.items():
            if ppid in owners and (pid, start) not in out and comm in (
                    "lttng-consumerd", "lttng-runas"):
                g = comm if comm == "lttng-consumerd" else owners[ppid]
                out[(pid, start)] = [g, ut, st]
    return out


def machine_busy():
    f = [int(x) for x in open("/proc/stat").readline().split()[1:]]
    # user nice system idle iowait irq softirq steal (guest time is in user)
    return sum(f[:8]) - f[3] - f[4]


def main():
    sep = sys.argv.index("--")
    inner, out, cmd = "--inner" in sys.argv[1:sep], sys.argv[sep - 1], sys.argv[sep + 1:]
    before, busy0, t0 = daemons(procs()), machine_busy(), time.monotonic()
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    child = subprocess.Popen(cmd)
    # hoptrace record forwards INT/TERM to its command: pass them on
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, lambda s, _: child.send_signal(s))
    rc = child.wait()
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    after, busy1, wall = daemons(procs()), machine_busy(), time.monotonic() - t0
    groups = {g: {"user_us": 0, "sys_us": 0, "pids": []} for g in DAEMONS}
    lost = []
    for key, (g, ut, st) in after.items():
        _, ut0, st0 = before.get(key, (g, 0, 0))  # new during the run: all of it
        groups[g]["user_us"] += (ut - ut0) * 1000000 // TCK
        groups[g]["sys_us"] += (st - st0) * 1000000 // TCK
        groups[g]["pids"].append(key[0])
    for key, (g, _, _) in before.items():
        if key not in after:
            lost.append("%s pid %d" % (g, key[0]))
    us = lambda tv: int(round(tv * 1e6))
    extra = {}
    if inner:
        f = open("/proc/%d/stat" % os.getppid()).read()
        f = [int(x) * 1000000 // TCK for x in f[f.rindex(")") + 2:].split()[11:15]]
        me = resource.getrusage(resource.RUSAGE_SELF)
        extra = {"parent": {"user_us": f[0] + f[2], "sys_us": f[1] + f[3]},
                 "self": {"user_us": us(me.ru_utime), "sys_us": us(me.ru_stime)}}
    json.dump(dict(extra, **{"wall_s": wall, "rc": rc,
               "tree": {"user_us": us(ru1.ru_utime - ru0.ru_utime),
                        "sys_us": us(ru1.ru_stime - ru0.ru_stime)},
               "daemons": groups, "lost": lost,
               "machine_busy_us": (busy1 - busy0) * 1000000 // TCK,
               "cpus": os.cpu_count()}), open(out, "w"), indent=1)
    sys.exit(rc)


if __name__ == "__main__":
    main()
