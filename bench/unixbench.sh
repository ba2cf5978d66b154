#!/usr/bin/env bash
# Side-by-side: UnixBench's own programs (byte-unixbench, built by you with
# its own `make`) and sledge's unixbench.* workloads, test by test,
# alternated pair by pair (the order flips every pair) so that drift and
# noise hit both alike. Prints each tool's median score, the median of the
# per-pair ratios sledge / UnixBench, and the System Benchmarks Index of
# both with its ratio (baselines read from your copy's pgms/index.base).
#
#   bench/unixbench.sh                       # fetches and builds byte-unixbench under /tmp
#   UB_DIR=/path/to/byte-unixbench/UnixBench bench/unixbench.sh   # a copy you built
#   UB_DIR=... PAIRS=5 COPIES=2 bench/unixbench.sh     # 5 pairs, 2 copies at once
#   UB_DIR=... TIME=5 TESTS="dhry2reg pipe" bench/unixbench.sh
#
# Without UB_DIR the script clones UB_GIT (default: byte-unixbench on
# GitHub; a local clone's path works too) into a temporary directory under
# /tmp, builds it with its own `make` (needs git, make and gcc), and removes
# it at exit. Nothing of UnixBench's is ever committed to this repository.
#
# UnixBench's programs run as its Run script runs them: the same arguments
# (TIME overrides every duration but Whetstone's, which is built in), LANG
# set to en_US.utf8, shell scripts in its testdir, COPIES copies at once
# whose counts are summed and divided by their mean time. A UB_DIR you give
# is used as it is: run `make` in it first.
#
# sledge's side of a pair is one pass too (`--rounds 1`, one trial, no
# warm-up): without `--rounds 1` sledge runs several rounds, and its mean
# over minutes was compared with one UnixBench pass of seconds, which
# breaks the alternation on a host whose load drifts.
#
# Target: every ratio within 1.00 +/- 0.10 except Dhrystone and Whetstone,
# which measure the compiler (gcc -O3 -ffast-math -march=native for
# UnixBench, rustc for sledge); the index ratio within 1.00 +/- 0.10.
set -euo pipefail

PAIRS=${PAIRS:-3}
COPIES=${COPIES:-1}
TIME=${TIME:-}
TESTS=${TESTS:-"dhry2reg whetstone-double execl fstime fsbuffer fsdisk pipe context1 spawn syscall shell1 shell8"}
here=$(cd "$(dirname "$0")/.." && pwd)
SLEDGE=${SLEDGE:-$here/target/release/sledge}

# Removed at exit: the fetched UnixBench (if any) and the scratch directory.
cleanup=()
trap 'rm -rf "${cleanup[@]}"' EXIT
if [ -z "${UB_DIR:-}" ]; then
  for tool in git make gcc; do
    command -v "$tool" >/dev/null || { echo "$tool is missing (needed to fetch and build UnixBench; or set UB_DIR to a built copy)" >&2; exit 1; }
  done
  fetched=$(mktemp -d /tmp/byte-unixbench.XXXXXX)
  cleanup+=("$fetched")
  UB_GIT=${UB_GIT:-https://github.com/kdlucas/byte-unixbench.git}
  echo "fetching $UB_GIT into $fetched and building it" >&2
  git clone --quiet "$UB_GIT" "$fetched/src" >&2
  make -C "$fetched/src/UnixBench" >"$fetched/make.log" 2>&1 ||
    { echo "UnixBench's make failed; its output:" >&2; tail -20 "$fetched/make.log" >&2; exit 1; }
  UB_DIR=$fetched/src/UnixBench
fi
UB_DIR=$(cd "$UB_DIR" && pwd)
for program in dhry2reg whetstone-double execl fstime pipe context1 spawn syscall looper multi.sh tst.sh index.base; do
  if [ ! -e "$UB_DIR/pgms/$program" ]; then
    echo "$UB_DIR/pgms/$program is missing: run make in $UB_DIR first (or leave UB_DIR unset to fetch and build a copy)" >&2
    exit 1
  fi
done
command -v python3 >/dev/null || { echo "python3 is missing" >&2; exit 1; }
if [ ! -x "$SLEDGE" ]; then
  (cd "$here" && cargo build --release --locked) >&2
fi

# Both tools' files on the same filesystem as UnixBench's own tmp and testdir.
work=$(mktemp -d "$UB_DIR/sledge-bench.XXXXXX")
cleanup+=("$work")

python3 - "$UB_DIR" "$SLEDGE" "$work" "$PAIRS" "$COPIES" "$TIME" "$TESTS" <<'PY'
import json, math, os, statistics, subprocess, sys, threading, time

ub, sledge, work, pairs, copies, time_override, tests = sys.argv[1:8]
pairs, copies = int(pairs), int(copies)
pgms = os.path.join(ub, "pgms")
store = os.path.join(work, "bench.db")
env = dict(os.environ, LANG="en_US.utf8", UB_BINDIR=pgms, UB_TMPDIR=work, UB_TESTDIR=os.path.join(ub, "testdir"))

# name: (title, UnixBench duration, UnixBench argv for duration T, cwd,
#        sledge workload and parameters)
def fstime(b, m):
    return lambda t: [f"{pgms}/fstime", "-c", "-t", str(t), "-d", work, "-b", str(b), "-m", str(m)]
TESTS = {
    "dhry2reg": ("Dhrystone 2 using register variables", 10, lambda t: [f"{pgms}/dhry2reg", str(t)], None,
                 ["unixbench.dhrystone"]),
    "whetstone-double": ("Double-Precision Whetstone", 10, lambda t: [f"{pgms}/whetstone-double"], None,
                         ["unixbench.whetstone"]),
    "execl": ("Execl Throughput", 30, lambda t: [f"{pgms}/execl", str(t)], None,
              ["unixbench.execl", "-p", f"dir={work}"]),
    "fstime": ("File Copy 1024 bufsize 2000 maxblocks", 30, fstime(1024, 2000), None,
               ["unixbench.fcopy", "-p", "buffer=1K", "-p", f"dir={work}"]),
    "fsbuffer": ("File Copy 256 bufsize 500 maxblocks", 30, fstime(256, 500), None,
                 ["unixbench.fcopy", "-p", "buffer=256", "-p", f"dir={work}"]),
    "fsdisk": ("File Copy 4096 bufsize 8000 maxblocks", 30, fstime(4096, 8000), None,
               ["unixbench.fcopy", "-p", "buffer=4K", "-p", f"dir={work}"]),
    "pipe": ("Pipe Throughput", 10, lambda t: [f"{pgms}/pipe", str(t)], None, ["unixbench.pipe"]),
    "context1": ("Pipe-based Context Switching", 10, lambda t: [f"{pgms}/context1", str(t)], None,
                 ["unixbench.context"]),
    "spawn": ("Process Creation", 30, lambda t: [f"{pgms}/spawn", str(t)], None, ["unixbench.spawn"]),
    "syscall": ("System Call Overhead", 10, lambda t: [f"{pgms}/syscall", str(t)], None, ["unixbench.syscall"]),
    "shell1": ("Shell Scripts (1 concurrent)", 60, lambda t: [f"{pgms}/looper", str(t), f"{pgms}/multi.sh", "1"],
               os.path.join(ub, "testdir"), ["unixbench.shell", "-p", "concurrent=1", "-p", f"dir={work}"]),
    "shell8": ("Shell Scripts (8 concurrent)", 60, lambda t: [f"{pgms}/looper", str(t), f"{pgms}/multi.sh", "8"],
               os.path.join(ub, "testdir"), ["unixbench.shell", "-p", "concurrent=8", "-p", f"dir={work}"]),
}

def baselines():
    base = {}
    with open(os.path.join(pgms, "index.base")) as f:
        for line in f:
            line = line.split("#")[0].strip()
            if line:
                fields = line.split("|")
                base[fields[0]] = float(fields[4])
    return base

def unixbench(name, seconds):
    """One pass of COPIES copies, scored as Run scores it."""
    _, _, argv, cwd, _ = TESTS[name]
    results = [None] * copies
    def one(i):
        start = time.monotonic()
        out = subprocess.run(argv(seconds), cwd=cwd, env=env, capture_output=True, text=True)
        elapsed = time.monotonic() - start
        fields = {}
        for line in (out.stdout + out.stderr).splitlines():
            parts = line.split("|")
            if len(parts) >= 2 and parts[0] in ("COUNT", "TIME"):
                fields[parts[0]] = parts[1:]
        if out.returncode != 0 or "COUNT" not in fields:
            raise SystemExit(f"UnixBench {name} failed: {out.stdout}{out.stderr}")
        results[i] = (float(fields["COUNT"][0]), float(fields["COUNT"][1]),
                      float(fields["TIME"][0]) if "TIME" in fields else elapsed)
    threads = [threading.Thread(target=one, args=(i,)) for i in range(copies)]
    for t in threads: t.start()
    for t in threads: t.join()
    count = sum(r[0] for r in results)
    timebase = results[0][1]
    mean_time = sum(r[2] for r in results) / copies
    return count / (mean_time / timebase) if timebase > 0 and mean_time > 0 else count

def sledge_run(name, seconds):
    _, _, _, _, target = TESTS[name]
    if name == "whetstone-double":
        seconds = 10  # UnixBench's Whetstone duration is built in
    out = subprocess.run([sledge, "run", *target, "-p", f"time={seconds}", "-p", f"copies={copies}",
                          "--store", store, "--json", "--no-idle-check",
                          "--rounds", "1", "--warmup", "0", "--min-trials", "1", "--max-trials", "1"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise SystemExit(f"sledge {name} failed: {out.stderr}{out.stdout}")
    case = json.loads(out.stdout)["cases"][0]
    return case["metrics"][0]["summary"]["mean"]

names = [n for n in tests.split() if n in TESTS]
unknown = [n for n in tests.split() if n not in TESTS]
if unknown:
    raise SystemExit(f"unknown tests {unknown}; known: {' '.join(TESTS)}")
base = baselines()
scores = {n: ([], []) for n in names}
durations = "UnixBench's durations" if not time_override else f"{time_override} s passes (Whetstone 10 s)"
print(f"sledge vs UnixBench ({ub}), {copies} cop{'y' if copies == 1 else 'ies'} at once, "
      f"{pairs} pairs, {durations}, {os.cpu_count()} CPUs", flush=True)
print(f"{'test':<40} {'UnixBench':>12} {'sledge':>12} {'unit':<6} {'ratio':>6}  pairs", flush=True)
for name in names:
    title, default_seconds = TESTS[name][0], TESTS[name][1]
    seconds = int(time_override) if time_override else default_seconds
    for i in range(pairs):
        subprocess.run(["sync"])
        first_ub = i % 2 == 0
        for tool in ("ub", "sledge") if first_ub else ("sledge", "ub"):
            subprocess.run(["sync"])
            if tool == "ub":
                scores[name][0].append(unixbench(name, seconds))
            else:
                scores[name][1].append(sledge_run(name, seconds))
    a, b = scores[name]
    ratios = [y / x for x, y in zip(a, b)]
    unit = {"whetstone-double": "MWIPS", "shell1": "lpm", "shell8": "lpm"}.get(name, "KBps" if name.startswith("fs") else "lps")
    print(f"{title:<40} {statistics.median(a):>12.1f} {statistics.median(b):>12.1f} {unit:<6} "
          f"{statistics.median(ratios):>6.3f}  {' '.join(f'{r:.3f}' for r in ratios)}", flush=True)

def index(values):
    logs = [math.log(v / base[n]) for n, v in values.items() if v / base[n] > 0.000001]
    return math.exp(sum(logs) / len(values)) * 10 if values else float("nan")

for label, subset in (("System Benchmarks Index Score", names),
                      ("  without Dhrystone and Whetstone", [n for n in names if n not in ("dhry2reg", "whetstone-double")])):
    if not subset:
        continue
    per_pair = [(index({n: scores[n][0][i] for n in subset}), index({n: scores[n][1][i] for n in subset}))
                for i in range(pairs)]
    ub_index = index({n: statistics.median(scores[n][0]) for n in subset})
    sl_index = index({n: statistics.median(scores[n][1]) for n in subset})
    ratios = [s / u for u, s in per_pair]
    print(f"{label:<40} {ub_index:>12.1f} {sl_index:>12.1f} {'':<6} {statistics.median(ratios):>6.3f}  "
          f"{' '.join(f'{r:.3f}' for r in ratios)}  ({len(subset)} tests)")
PY
