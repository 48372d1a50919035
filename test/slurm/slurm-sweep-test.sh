#!/usr/bin/env bash
# Integration test of `scoville sweep --emit-slurm` against a real single-node Slurm.
#
# Starts, inside a fresh temporary directory, a private munged, slurmctld and slurmd (Debian's
# munge and Slurm 22.05 packages, installed by scripts/install-deps) on free ports, submits the
# array job that `scoville sweep --emit-slurm` writes for a 4-point sweep, waits for it, merges the
# points with `scoville merge` and checks the results. Nothing outside the temporary directory is
# used or changed: the system's /etc/munge, /etc/slurm and default sockets are left alone.
#
# Usage: slurm-sweep-test.sh [SCOVILLE]   (default: build/scoville in the repository)
#
# Exit status: 0 passed; 1 failed; 77 skipped (ctest's SKIP_RETURN_CODE), only when the Slurm
# daemons cannot start on this machine (munged, slurmctld or slurmd dies or the node never comes
# up), with the reason from their logs. Missing packages are a failure, not a skip. Once the node
# is up, anything that goes wrong is a failure.
#
# The daemons are always stopped and the directory removed on exit, whatever happens (a trap, and
# a watchdog in case this script is killed outright).
set -euo pipefail

here=${BASH_SOURCE[0]%/*}
[ "$here" != "${BASH_SOURCE[0]}" ] || here=.
repo_root=$(cd "$here/../.." && pwd)
scoville=${1:-$repo_root/build/scoville}
case $scoville in /*) ;; *) scoville=$PWD/$scoville ;; esac
export SYSTEMC_DISABLE_COPYRIGHT_MESSAGE=1
# Run inside a Slurm job, or with SBATCH_PARTITION and the like set, the client commands would
# take those for this private cluster; forget them (SLURM_CONF is set below).
while read -r name; do unset "$name"; done < <(compgen -e | grep -E '^(SLURM|SBATCH|SALLOC|SRUN|SQUEUE|SINFO|SCONTROL)_' || true)
# The daemons live in /usr/sbin, which a non-login PATH may lack.
export PATH=$PATH:/usr/sbin:/sbin

node_timeout_s=45  # until the node is idle (it takes about 2 s)
job_timeout_s=90   # until the array job is done (it takes a few seconds)
# Both together stay under the ctest TIMEOUT (180 s), so the trap always gets to clean up.

log() { echo "slurm-sweep-test [${SECONDS}s]: $*"; }
fail() {
  echo "FAIL: $*" >&2
  exit 1
}

# --- Prerequisites: a failure, not a skip --------------------------------------------------------
for tool in munged mungekey munge unmunge slurmctld slurmd sbatch sinfo squeue scontrol scancel python3; do
  command -v "$tool" >/dev/null || fail "'$tool' not found: run scripts/install-deps (it installs slurmctld slurmd slurm-client munge)"
done
[ -x "$scoville" ] || fail "no scoville binary at $scoville (build it first, or pass its path)"

# --- Temporary directory and cleanup -------------------------------------------------------------
work=$(mktemp -d "${TMPDIR:-/tmp}/scoville-slurm.XXXXXX")
# munged insists that its socket's directory, and every directory above it, be searchable by all.
chmod 0755 "$work"
munged_pid='' slurmctld_pid='' slurmd_pid='' watchdog_pid=''

# Stops a daemon by its pid: SIGTERM, up to 5 s to exit, then SIGKILL (slurmd still registering
# with a controller that never came up does not exit on SIGTERM).
stop() {
  local pid=$1
  [ -n "$pid" ] || return 0
  kill "$pid" 2>/dev/null || return 0
  for _ in $(seq 50); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$?
  set +e
  # On a failure (not a skip, which prints its own), show the daemons' last words, less the noise
  # Slurm 22.05 always logs at start (see skip).
  if [ "$status" -ne 0 ] && [ "$status" -ne 77 ] && [ -d "${slurm:-}" ]; then
    for file in "$slurm/slurmctld.log" "$slurm/slurmd.log"; do
      [ -f "$file" ] || continue
      echo "--- last lines of $file"
      grep -v -i -E 'pmix|state file|state save file' "$file" | tail -n 15
    done
  fi
  # Cancel whatever is still queued or running, so that slurmd ends its job steps before it stops.
  if [ -n "$slurmctld_pid" ] && kill -0 "$slurmctld_pid" 2>/dev/null && [ -n "${job_id:-}" ]; then
    scancel "$job_id" 2>/dev/null
    for _ in $(seq 50); do
      [ -z "$(squeue -h -j "$job_id" -o %i 2>/dev/null)" ] && break
      sleep 0.1
    done
  fi
  stop "$slurmd_pid"
  stop "$slurmctld_pid"
  stop "$munged_pid"
  stop "$watchdog_pid"
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The watchdog stops the daemons if this script is killed without running its trap (SIGKILL, say
# from a ctest timeout); normally the trap stops the watchdog first.
start_watchdog() {
  local parent=$$ pids="$munged_pid $slurmctld_pid $slurmd_pid"
  [ -z "$watchdog_pid" ] || kill "$watchdog_pid" 2>/dev/null || true
  (
    while kill -0 "$parent" 2>/dev/null; do sleep 1; done
    for pid in $pids; do kill -9 "$pid" 2>/dev/null; done
    rm -rf "$work"
  ) </dev/null >/dev/null 2>&1 &
  watchdog_pid=$!
}

# Skips (exit 77) because a daemon could not start, citing the log's last errors.
skip() {
  local reason=$1 logfile=${2:-}
  if [ -n "$logfile" ] && [ -s "$logfile" ]; then
    # The reason is the log's last fatal error, else its last errors, leaving out what Slurm 22.05
    # always logs at start (the PMIx MPI plugins it loads regardless of MpiDefault, and the state
    # files a fresh StateSaveLocation lacks). The log's last lines follow in any case.
    local errors
    errors=$(grep -i 'fatal' "$logfile" | tail -n 1 || true)
    [ -n "$errors" ] || errors=$(grep -i -E 'error|fail|cannot|denied|not permitted' "$logfile" |
      grep -v -i -E 'pmix|state file|state save file' | tail -n 2 | tr '\n' ' ' || true)
    [ -z "$errors" ] || reason="$reason: $errors"
  fi
  echo "SKIP: Slurm daemons cannot start on this machine: $reason"
  if [ -n "$logfile" ] && [ -f "$logfile" ]; then
    echo "--- last lines of $logfile"
    tail -n 20 "$logfile"
  fi
  exit 77
}

user=$(id -un)
host=$(hostname -s)
cpus=$(nproc)
log "work directory $work (user $user, node $host, $cpus CPUs)"

# --- munged, with its own key and socket ---------------------------------------------------------
mkdir -m 0700 "$work/munge-etc"  # the key's directory: private
mkdir -m 0755 "$work/munge-run"  # the socket's directory: searchable by all
munge_key=$work/munge-etc/munge.key
munge_socket=$work/munge-run/munge.socket
mungekey --create --keyfile="$munge_key" 2>/dev/null ||
  dd if=/dev/urandom of="$munge_key" bs=1 count=1024 status=none
chmod 0400 "$munge_key"  # owned by this user, as munged runs as this user
munged --foreground --socket="$munge_socket" --key-file="$munge_key" \
  --pid-file="$work/munge-run/munged.pid" --log-file="$work/munged.log" \
  --seed-file="$work/munge-etc/munged.seed" </dev/null >"$work/munged.out" 2>&1 &
munged_pid=$!
start_watchdog
# In the foreground munged logs to stderr; the log file is there in case it does not.
cat_munged_log() { cat "$work/munged.out" "$work/munged.log" 2>/dev/null || true; }
for _ in $(seq 100); do
  [ -S "$munge_socket" ] && break
  kill -0 "$munged_pid" 2>/dev/null || { cat_munged_log >"$work/munged.all"; skip "munged exited" "$work/munged.all"; }
  sleep 0.1
done
[ -S "$munge_socket" ] || { cat_munged_log >"$work/munged.all"; skip "munged created no socket in 10 s" "$work/munged.all"; }
munge -n --socket="$munge_socket" | unmunge --socket="$munge_socket" >"$work/unmunge.out" 2>&1 ||
  skip "munged cannot encode and decode a credential" "$work/unmunge.out"
log "munged up (pid $munged_pid)"

# --- slurm.conf: one node, one partition, private directories and ports ---------------------------
# Two free TCP ports, as the kernel hands them out (a race with another process is unlikely).
read -r ctld_port slurmd_port < <(python3 -c '
import socket
socks = [socket.socket() for _ in range(2)]
for s in socks: s.bind(("127.0.0.1", 0))
print(*(s.getsockname()[1] for s in socks))')
slurm=$work/slurm
mkdir -p "$slurm/state" "$slurm/spool"
: >"$slurm/plugstack.conf"  # no SPANK plugins (instead of /etc/slurm/plugstack.conf)
conf=$slurm/slurm.conf
cat >"$conf" <<EOF
# A throwaway single-node cluster for slurm-sweep-test.sh.
ClusterName=scoville-test
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$user
SlurmdUser=$user
# munge through the private munged (auth/munge and cred/munge both read socket= from AuthInfo).
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$munge_socket
StateSaveLocation=$slurm/state
SlurmdSpoolDir=$slurm/spool
SlurmctldPidFile=$slurm/slurmctld.pid
SlurmdPidFile=$slurm/slurmd.pid
SlurmctldLogFile=$slurm/slurmctld.log
SlurmdLogFile=$slurm/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$slurm/plugstack.conf
MailProg=/bin/true
# No cgroups (containers rarely allow them), no accounting, no MPI.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
# Schedule each CPU on its own, so the array's tasks run side by side.
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdTimeout=60
MinJobAge=600
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus RealMemory=100 State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF=$conf  # for sinfo, sbatch, squeue, scontrol, scancel

# --- slurmctld and slurmd, in the foreground of background jobs ----------------------------------
slurmctld -D -i -f "$conf" </dev/null >"$slurm/slurmctld.out" 2>&1 &
slurmctld_pid=$!
slurmd -D -f "$conf" -N "$host" </dev/null >"$slurm/slurmd.out" 2>&1 &
slurmd_pid=$!
start_watchdog

# Waits for the node to be idle; a daemon that exits, or a node that never comes up, is a skip.
# With -D a daemon logs to stderr as well as to its log file; stderr also has what it says before
# it opens the log file.
daemon_log() {
  if [ -s "$slurm/$1.out" ]; then cat "$slurm/$1.out"; else cat "$slurm/$1.log" 2>/dev/null || true; fi
}
state=''
deadline=$((SECONDS + node_timeout_s))
while [ $SECONDS -lt $deadline ]; do
  if ! kill -0 "$slurmctld_pid" 2>/dev/null; then
    daemon_log slurmctld >"$work/slurmctld.all"
    skip "slurmctld exited" "$work/slurmctld.all"
  fi
  if ! kill -0 "$slurmd_pid" 2>/dev/null; then
    daemon_log slurmd >"$work/slurmd.all"
    skip "slurmd exited" "$work/slurmd.all"
  fi
  state=$(sinfo -h -n "$host" -o %T 2>/dev/null || true)
  [ "$state" = idle ] && break
  sleep 0.2
done
if [ "$state" != idle ]; then
  reason=$(scontrol show node "$host" 2>/dev/null | grep -o 'Reason=.*' || true)
  { daemon_log slurmctld; daemon_log slurmd; } >"$work/slurm.all"
  skip "node $host not idle after ${node_timeout_s} s (state '${state:-unknown}'${reason:+, $reason})" "$work/slurm.all"
fi
log "slurmctld (pid $slurmctld_pid, port $ctld_port) and slurmd (pid $slurmd_pid, port $slurmd_port) up, node $host idle"

# --- From here on, everything that goes wrong is a failure ---------------------------------------
out=$work/sweep
sweep=("$scoville" sweep -p jalapeno -m tiny-dense -s inferencex-1k1k
  --set scenario.requests=4 --set scenario.input_tokens=256 --set scenario.output_tokens=16
  --set scenario.random_range_ratio=1 -c 1,2,4,8 --out "$out" --emit-slurm)
"${sweep[@]}" >"$work/emit.out" 2>&1 || { cat "$work/emit.out"; fail "scoville sweep --emit-slurm failed"; }
grep -q '^4 of 4 points to run' "$work/emit.out" || { cat "$work/emit.out"; fail "expected 4 of 4 points to run"; }
script=$out/slurm/sweep.sbatch
[ -f "$script" ] || fail "no $script"
grep -q '^#SBATCH --array=0-3$' "$script" || { cat "$script"; fail "expected #SBATCH --array=0-3 in $script"; }

job_id=$(sbatch --parsable --chdir="$work" "$script" 2>"$work/sbatch.err") ||
  { cat "$work/sbatch.err"; fail "sbatch failed"; }
job_id=${job_id%%;*}
log "submitted array job $job_id"

# Waits for every task of the array to leave the queue (squeue lists pending, running and
# completing tasks; a finished array is an empty list, not an error, for MinJobAge).
deadline=$((SECONDS + job_timeout_s))
while :; do
  tasks=$(squeue -h -j "$job_id" -o '%i %T' 2>"$work/squeue.err") || { cat "$work/squeue.err"; fail "squeue failed"; }
  [ -n "$tasks" ] || break
  if [ $SECONDS -ge $deadline ]; then
    echo "$tasks"
    fail "array job $job_id not done after ${job_timeout_s} s"
  fi
  kill -0 "$slurmctld_pid" 2>/dev/null || fail "slurmctld died while the job ran"
  kill -0 "$slurmd_pid" 2>/dev/null || fail "slurmd died while the job ran"
  sleep 0.2
done

# Slurm's own record of the array (kept for MinJobAge): four tasks, each completed with exit 0 on
# this node. The job ran under Slurm, not beside it.
scontrol -o show job "$job_id" >"$work/job.txt" 2>&1 || { cat "$work/job.txt"; fail "scontrol show job $job_id failed"; }
python3 - "$work/job.txt" "$job_id" "$host" <<'EOF' || { cat "$work/job.txt"; fail "the array's tasks did not all complete under Slurm"; }
import sys
path, job_id, host = sys.argv[1:]
tasks = {}
for line in open(path):
    fields = dict(f.split("=", 1) for f in line.split() if "=" in f)
    if fields.get("ArrayJobId") == job_id:
        tasks[fields.get("ArrayTaskId")] = fields
assert sorted(tasks) == ["0", "1", "2", "3"], f"array tasks {sorted(tasks)}, expected 0-3"
for task, f in sorted(tasks.items()):
    assert f.get("JobState") == "COMPLETED", f"task {task}: JobState={f.get('JobState')}"
    assert f.get("ExitCode") == "0:0", f"task {task}: ExitCode={f.get('ExitCode')}"
    assert f.get("NodeList") == host, f"task {task}: NodeList={f.get('NodeList')}"
EOF
for task in 0 1 2 3; do
  [ -f "$out/slurm/point-$task.out" ] || fail "no $out/slurm/point-$task.out (Slurm's output of task $task)"
done
log "array job $job_id: 4 tasks completed on $host"

"$scoville" merge "$out" >"$work/merge.out" 2>&1 || { cat "$work/merge.out"; fail "scoville merge failed"; }
python3 - "$out" <<'EOF' || { cat "$work/merge.out"; fail "results.json is not the complete sweep"; }
import json, os, sys
out = sys.argv[1]
results = json.load(open(os.path.join(out, "results.json")))
sweep = json.load(open(os.path.join(out, "sweep.json")))
assert len(results["points"]) == 4, f"{len(results['points'])} points in results.json, expected 4"
assert results["missing"] == [], f"missing: {results['missing']}"
assert len(sweep["points"]) == 4, f"{len(sweep['points'])} points in sweep.json, expected 4"
for point in sweep["points"]:
    report = os.path.join(out, point["dir"], "report.json")
    assert os.path.isfile(report), f"no {report}"
    json.load(open(report))
assert sorted(p["id"] for p in results["points"]) == sorted(p["id"] for p in sweep["points"]), "ids differ"
EOF
log "merge: 4 points, none missing"

# Emitting again finds nothing left to run.
"${sweep[@]}" >"$work/emit2.out" 2>&1 || { cat "$work/emit2.out"; fail "second scoville sweep --emit-slurm failed"; }
grep -q '^every point is done' "$work/emit2.out" || { cat "$work/emit2.out"; fail "expected: every point is done"; }

log "PASS"
