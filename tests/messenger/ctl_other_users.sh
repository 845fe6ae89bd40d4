#!/usr/bin/env bash
# `hoptrace ctl` and users other than the process's:
#  1. a socket another user planted in a shared (1777) directory, whose
#     listener answers "ok" to anything: ctl refuses before sending (exit
#     2, says the listener's uid and pid); the listener received nothing;
#  2. a traced process whose socket another user can reach (chmod 0666):
#     that user's ctl gets the process's refusal, every time, at once
#     (never "no answer within"), and nothing is applied;
#  3. a process that closes without answering: ctl says so (exit 2), not
#     that it timed out;
#  4. ctl by the process's own user still works.
# Needs root to run a process as another uid (65534): exit 77 otherwise.
# usage: ctl_other_users.sh NODE HOPTRACE PROVIDER WORKDIR
set -euo pipefail
node=$1 hoptrace=$2 provider=$3 work=$4
if [[ $(id -u) != 0 ]] || ! command -v setpriv > /dev/null; then
  echo "SKIP: needs root and setpriv to run a listener as another uid"
  exit 77
fi
py=/usr/bin/python3 # nobody may not reach a python under root's home
[[ -x $py ]] || py=$(command -v python3)
# setpriv execs the command: $! of a background one is the command's pid
as_nobody=(setpriv --reuid=65534 --regid=65534 --clear-groups)
"${as_nobody[@]}" true || { echo "SKIP: cannot switch to uid 65534"; exit 77; }

rm -rf "$work" && mkdir -p "$work"
shared=$work/shared
# a Unix socket path holds 107 bytes: a deep build tree uses /tmp
(( ${#shared} < 80 )) || shared=$(mktemp -d /tmp/ht-ctl-users-XXXXXX)
mkdir -p "$shared" && chmod 1777 "$shared"
"${as_nobody[@]}" test -w "$shared" || { echo "SKIP: uid 65534 cannot reach $shared"; exit 77; }
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  [[ $shared == /tmp/ht-ctl-users-* ]] && rm -rf "$shared"
  return 0
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
ms() { date +%s%3N; }
wait_file() { for ((t = 0; t < 100; t++)); do [[ -e $1 ]] && return 0; sleep 0.1; done; return 1; }

# listener.py PATH MODE, as whoever runs it: MODE "ok" answers "ok
# planted" to every connection at once, "close" closes without a byte;
# records what each connection sent in PATH.got, a line each in PATH.log;
# PATH.ready (its pid) once it listens.
cat > "$work/listener.py" <<'PY'
import os, socket, sys
path, mode = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_UNIX)
s.bind(path); os.chmod(path, 0o666); s.listen(8)
open(path + ".got", "wb").close()
with open(path + ".ready", "w") as f:
    f.write("%d\n" % os.getpid())
while True:
    c, _ = s.accept()
    got = b""
    if mode == "ok":
        c.settimeout(2)
        try:
            c.sendall(b"ok planted\n")
            while True:
                b = c.recv(4096)
                if not b:
                    break
                got += b
        except OSError:
            pass
    c.close()
    with open(path + ".got", "ab") as f:
        f.write(got)
    with open(path + ".log", "a") as f:
        f.write("conn %d\n" % len(got))
PY

# --- 1: another user's socket in a shared directory
planted=$shared/planted.sock
"${as_nobody[@]}" "$py" "$work/listener.py" "$planted" ok &
pids+=("$!")
wait_file "$planted.ready" || fail "the planted listener did not start"
planted_pid=$(cat "$planted.ready")
[[ $(stat -c %u "$planted") == 65534 ]] || fail "planted socket not owned by 65534"
rc=0
"$hoptrace" ctl "$planted" sample 0.5 > "$work/planted.out" 2> "$work/planted.err" || rc=$?
cat "$work/planted.err"
[[ $rc == 2 ]] || fail "ctl to another user's socket: exit $rc, want 2 ($(cat "$work/planted.out"))"
want="hoptrace ctl: refused: the process listening on $planted runs as uid 65534 (pid $planted_pid), not as you (uid 0) or root; nothing was sent"
[[ $(cat "$work/planted.err") == "$want" ]] || fail "refusal reads: $(cat "$work/planted.err"), want: $want"
[[ ! -s $work/planted.out ]] || fail "ctl printed the planted answer: $(cat "$work/planted.out")"
wait_file "$planted.log" || fail "the planted listener saw no connection"
[[ ! -s $planted.got ]] || fail "the planted listener received: $(cat "$planted.got")"
echo "another user's socket: refused, nothing sent"

# --- 2: a traced process refuses another user: ctl says so, every time
export HT_LTTNG_PROVIDER=$provider
unset HT_SAMPLER HT_SAMPLE_RATIO HT_SAMPLE_RATE HT_TRUST_REMOTE_DEBUG
sock=$shared/node.sock
HT_MESSENGER=traced HT_SAMPLER=ratio HT_SAMPLE_RATIO=0.25 HT_CONTROL_SOCKET=$sock \
  "$node" server --name N --url-file "$work/url" 2> "$work/node.log" &
node_pid=$!
pids+=("$node_pid")
wait_file "$sock" || { cat "$work/node.log" >&2; fail "no control socket"; }
chmod 0666 "$sock" # lets uid 65534 connect: the process itself must refuse
# An answer comes before ctl's own deadline (5 s; the exit code and the
# message tell an answer from a timeout too); the bound leaves room for a
# loaded machine (ASan at load 11 took 2,396 ms).
answer_ms=4500
for ((i = 0; i < 20; i++)); do
  t0=$(ms) rc=0
  "${as_nobody[@]}" "$hoptrace" ctl "$sock" sample 0.9 > "$work/other.out" 2> "$work/other.err" || rc=$?
  took=$(( $(ms) - t0 ))
  [[ $rc == 1 ]] || fail "ctl as uid 65534, try $i: exit $rc, want 1 ($(cat "$work/other.out" "$work/other.err"))"
  grep -qx "error EPERM refused: you are uid 65534; this process serves uid 0 and root only" \
    "$work/other.out" || fail "try $i: $(cat "$work/other.out" "$work/other.err")"
  (( took < answer_ms )) || fail "try $i took ${took} ms"
done
echo "refused by the process: $(cat "$work/other.out")"
status=$("$hoptrace" ctl "$sock" status) || fail "ctl status as root"
[[ $status == "ok "* && $status == *" ratio=0.25"* ]] || fail "a refused command was applied: $status"

# --- 3: a process that closes without answering (same user: passes)
closer=$shared/closer.sock
"$py" "$work/listener.py" "$closer" close &
pids+=("$!")
wait_file "$closer.ready" || fail "the closing listener did not start"
for ((i = 0; i < 10; i++)); do
  t0=$(ms) rc=0
  "$hoptrace" ctl "$closer" status > /dev/null 2> "$work/closer.err" || rc=$?
  took=$(( $(ms) - t0 ))
  [[ $rc == 2 ]] || fail "ctl to a closing process: exit $rc, want 2"
  grep -q "the process closed the connection without answering" "$work/closer.err" ||
    fail "try $i: $(cat "$work/closer.err")"
  (( took < answer_ms )) || fail "try $i took ${took} ms"
done
echo "closed without an answer: $(cat "$work/closer.err")"

# --- 4: the process's own user
"$hoptrace" ctl "$sock" sample 0.5 > "$work/own.out" || fail "ctl as the owner"
status=$("$hoptrace" ctl "$sock" status)
[[ $status == *" ratio=0.5"* ]] || fail "ctl as the owner not applied: $status"
echo "ctl_other_users: all passed"
