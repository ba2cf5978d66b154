#!/usr/bin/env bash
# Side-by-side storage figures on this machine.
#
# 1. sysbench fileio 1.0.20 and sledge fileio, alternated run by run with
#    the same parameters (16 KiB blocks, direct I/O so the page cache stays
#    out), for rndrw, seqwr and seqrd. These are compatible definitions:
#    target ratio 1.00 +/- 0.10.
# 2. sledge disk next to bonnie++ and fio's sequential write and read.
# 3. sledge fileserver next to dbench, fileserver.net next to tbench.
# Parts 2 and 3 are NOT compatible definitions; the figures are printed
# side by side with how they differ, for orientation only.
#
#   bench/storage.sh                       # in a temp dir under $PWD
#   DIR=/mnt/data PAIRS=5 TIME=10 SIZE=2G bench/storage.sh
#   PARTS=fileio bench/storage.sh          # only part 1 (fileio disk fileserver)
#   PARTS=fileio MODES=seqwr bench/storage.sh
#
# Needs about SIZE of free space (default 1G); everything is removed at the end.
set -euo pipefail

PAIRS=${PAIRS:-3}
TIME=${TIME:-10}
SIZE=${SIZE:-1G}
FILES=${FILES:-16}
CLIENTS=${CLIENTS:-"1 2 4 8"}
PARTS=${PARTS:-"fileio disk fileserver"}
want() { [[ " $PARTS " == *" $1 "* ]]; }
here=$(cd "$(dirname "$0")/.." && pwd)
SLEDGE=${SLEDGE:-$here/target/release/sledge}

for tool in sysbench python3; do
  command -v "$tool" >/dev/null || { echo "$tool is missing" >&2; exit 1; }
done
if [ ! -x "$SLEDGE" ]; then
  (cd "$here" && cargo build --release --locked) >&2
fi

work=$(mktemp -d "${DIR:-$PWD}/storage-bench.XXXXXX")
srv=
# tbench_srv runs in the background during part 3: an error or Ctrl-C
# there must not leave it running.
cleanup() {
  if [ -n "$srv" ]; then
    kill "$srv" 2>/dev/null || true
    wait "$srv" 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
store=$work/bench.db
data=$work/data
mkdir -p "$data"
size_mib=$(python3 -c "
s='$SIZE'.upper().rstrip('B').rstrip('I'); m={'K':1/1024,'M':1,'G':1024,'T':1<<20}
print(int(float(s[:-1])*m[s[-1]]) if s[-1] in m else int(s)//(1<<20))")

# One sledge trial, no warm-up (the classic tools have none), printing the
# named metrics' means, space-separated.
sledge_metrics() { # "metric metric..." workload params...
  local metrics=$1; shift
  "$SLEDGE" run "$@" --store "$store" --json --no-idle-check \
      --warmup 0 --min-trials 1 --max-trials 1 2>/dev/null |
    python3 -c "
import json, sys
r = json.load(sys.stdin); c = r['cases'][0]
if c.get('error'): sys.exit('sledge: ' + c['error'])
m = {x['name']: x['summary']['mean'] for x in c['metrics']}
print(' '.join(str(m[k]) for k in '$metrics'.split()))"
}

report() { # name sysbench-values sledge-values
  python3 - "$@" <<'PY'
import statistics, sys
name, a, b = sys.argv[1], sys.argv[2].split(), sys.argv[3].split()
a = [float(x) for x in a]; b = [float(x) for x in b]
ratios = [y / x for x, y in zip(a, b) if x > 0]
r = statistics.median(ratios)
flag = "ok" if abs(r - 1) <= 0.10 else "OUTSIDE 1.00 +/- 0.10"
print(f"{name:<28} sysbench {statistics.median(a):>10.2f}   sledge {statistics.median(b):>10.2f}"
      f"   ratio {r:.3f} (pairs: {' '.join(f'{x:.2f}' for x in ratios)})  {flag}")
PY
}

if want fileio; then
echo "== fileio vs sysbench fileio: $SIZE in $FILES files, 16 KiB, O_DIRECT, ${TIME} s, $PAIRS pairs"
sb_common=(--file-num="$FILES" --file-total-size="$SIZE" --file-block-size=16384
           --file-extra-flags=direct --time="$TIME")
run_sysbench() { # mode
  local out sbdir
  # A fresh directory per run, as sledge makes one: ext4 places a new
  # directory's files in a fresh block group, which matters for the
  # allocating writes of seqwr.
  sbdir=$(mktemp -d "$data/sysbench.XXXXXX")
  out=$(cd "$sbdir" && sysbench fileio "${sb_common[@]}" --file-test-mode="$1" prepare >/dev/null &&
        sysbench fileio "${sb_common[@]}" --file-test-mode="$1" run;
        sysbench fileio "${sb_common[@]}" cleanup >/dev/null)
  rmdir "$sbdir"
  read -r r w f rm wm < <(echo "$out" | awk '
    /reads\/s:/ {r=$2} /writes\/s:/ {w=$2} /fsyncs\/s:/ {f=$2}
    /read, MiB\/s:/ {rm=$3} /written, MiB\/s:/ {wm=$3}
    END {print r, w, f, rm, wm}')
  sb_r+=" $r"; sb_w+=" $w"; sb_f+=" $f"; sb_rm+=" $rm"; sb_wm+=" $wm"
}
run_sledge() { # mode
  read -r r w f rm wm < <(sledge_metrics \
    "reads_per_sec writes_per_sec fsyncs_per_sec read_mib_per_sec written_mib_per_sec" \
    fileio --param mode="$1" --param file_num="$FILES" --param total_size="$SIZE" \
    --param block_size=16K --param direct=true --param time="$TIME" --param dir="$data")
  sl_r+=" $r"; sl_w+=" $w"; sl_f+=" $f"; sl_rm+=" $rm"; sl_wm+=" $wm"
}
for mode in ${MODES:-rndrw seqwr seqrd}; do
  sb_r=""; sb_w=""; sb_f=""; sb_rm=""; sb_wm=""; sl_r=""; sl_w=""; sl_f=""; sl_rm=""; sl_wm=""
  for pair in $(seq "$PAIRS"); do
    # Alternate which tool goes first, so an order effect (the disk still
    # busy with the other tool's cleanup) cancels out.
    if (( pair % 2 )); then run_sysbench "$mode"; run_sledge "$mode"
    else run_sledge "$mode"; run_sysbench "$mode"; fi
  done
  case $mode in
    rndrw)
      report "rndrw reads/s" "$sb_r" "$sl_r"
      report "rndrw writes/s" "$sb_w" "$sl_w"
      report "rndrw fsyncs/s" "$sb_f" "$sl_f" ;;
    seqwr)
      report "seqwr written MiB/s" "$sb_wm" "$sl_wm"
      report "seqwr fsyncs/s" "$sb_f" "$sl_f" ;;
    seqrd) report "seqrd read MiB/s" "$sb_rm" "$sl_rm" ;;
  esac
done
fi

if want disk; then
echo
echo "== disk vs bonnie++ and fio: $SIZE file, 8 KiB chunks, O_DIRECT (own definitions)"
read -r dw drw dr ds dsc dss dsd < <(sledge_metrics \
  "write_kib_per_sec rewrite_kib_per_sec read_kib_per_sec seeks_per_sec seq_create_per_sec seq_stat_per_sec seq_delete_per_sec" \
  disk --param size="$SIZE" --param direct=true --param dir="$data")
if command -v bonnie++ >/dev/null; then
  # -f: no per-char phases (sledge has none); -D: O_DIRECT; -r: claim a RAM
  # size of half the file so bonnie++ accepts a file smaller than 2 x RAM.
  csv=$(bonnie++ -q -f -D -d "$data" -s "$size_mib" -r $((size_mib / 2)) -n 16 -u root 2>/dev/null | tail -1)
  IFS=, read -ra b <<<"$csv"
  # bonnie++ 1.98 CSV: 9 putc, 11 write, 13 rewrite, 15 getc, 17 read, 19 seeks,
  # 26, 28, 30 seq create / stat / delete (+++++: too fast for bonnie++ to time).
  bw=${b[11]}; brw=${b[13]}; br=${b[17]}; bs=${b[19]}; bc=${b[26]}; bst=${b[28]}; bd=${b[30]}
else
  bw=-; brw=-; br=-; bs=-; bc=-; bst=-; bd=-
fi
if command -v fio >/dev/null; then
  fio_kib() { # rw
    fio --name=seq --directory="$data" --rw="$1" --bs=8k --size="$SIZE" --direct=1 \
        --ioengine=psync --end_fsync=1 --output-format=json 2>/dev/null |
      python3 -c "import json,sys; j=json.load(sys.stdin)['jobs'][0]; print(j['$2']['bw'])"
  }
  fw=$(fio_kib write write); fr=$(fio_kib read read); rm -f "$data"/seq.*
else
  fw=-; fr=-
fi
printf '%-26s %14s %14s %14s\n' phase sledge bonnie++ fio
printf '%-26s %14.0f %14s %14s\n' "block write KiB/s" "$dw" "$bw" "$fw"
printf '%-26s %14.0f %14s %14s\n' "rewrite KiB/s" "$drw" "$brw" -
printf '%-26s %14.0f %14s %14s\n' "block read KiB/s" "$dr" "$br" "$fr"
printf '%-26s %14.0f %14s %14s\n' "random seeks/s" "$ds" "$bs" -
printf '%-26s %14.0f %14s %14s\n' "seq create files/s" "$dsc" "$bc" -
printf '%-26s %14.0f %14s %14s\n' "seq stat files/s" "$dss" "$bst" -
printf '%-26s %14.0f %14s %14s\n' "seq delete files/s" "$dsd" "$bd" -
cat <<'EOF'
How they differ: sledge's write and rewrite end with a timed fsync
(bonnie++ and fio without --end_fsync do not count it); fio here runs with
end_fsync; bonnie++ splits its file in 1 GiB pieces and uses its own
chunk and seek counts (sledge: 8000 seeks by 3 workers, as bonnie++ 1.98);
bonnie++'s file phases use -n 16 (16384 files) like sledge's default.
EOF
fi

if want fileserver; then
echo
echo "== fileserver vs dbench, fileserver.net vs tbench: ${TIME} s, the first fifth as warm-up (own definitions)"
printf '%-8s %14s %14s %16s %14s\n' clients "dbench MB/s" "fileserver" "tbench MB/s" "fileserver.net"
warm=$((TIME / 5))
for n in $CLIENTS; do
  db=-; tb=-
  if command -v dbench >/dev/null; then
    # dbench 4.00 has no --warmup flag: it warms up for a fifth of -t.
    db=$(dbench -c /usr/share/dbench/client.txt -D "$data" -t "$TIME" "$n" 2>/dev/null |
         awk '/Throughput/ {print $2}')
    rm -rf "$data/clients"
  fi
  fs=$(sledge_metrics mb_per_sec fileserver --param clients="$n" --param time="$TIME" \
       --param warmup="$warm" --param dir="$data")
  if command -v tbench >/dev/null && command -v tbench_srv >/dev/null; then
    tbench_srv >/dev/null 2>&1 & srv=$!
    sleep 0.5
    tb=$(tbench -t "$TIME" "$n" 127.0.0.1 2>/dev/null | awk '/Throughput/ {print $2}')
    kill "$srv" 2>/dev/null; wait "$srv" 2>/dev/null || true
    srv=
  fi
  fn=$(sledge_metrics mb_per_sec fileserver.net --param clients="$n" --param time="$TIME" \
       --param warmup="$warm")
  printf '%-8s %14s %14.1f %16s %14.1f\n' "$n" "$db" "$fs" "$tb" "$fn"
done
cat <<'EOF'
How they differ: dbench replays the recorded NetBench trace (client.txt,
458k operations per loop) with a process per client; sledge replays a
built-in mix with the trace's operation shares and payload sizes (about
4.7k operations per loop) with a thread per client. Both count read + write
payload after the warm-up, in MB/s of 10^6 bytes. tbench's messages carry
SMB-sized headers; fileserver.net's carry 16/8-byte headers, so at small
payloads it moves fewer bytes per operation.
EOF
fi
