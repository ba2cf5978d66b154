#!/usr/bin/env bash
# The store on SQLite and on PostgreSQL side by side: how long importing
# RUNS runs takes (each run's cases, trials, metrics and samples, in one
# transaction), and how long `sledge show` of one of them takes, alternated
# pair by pair. Prints each store's median and the median of the per-pair
# ratios PostgreSQL / SQLite.
#
#   bench/store.sh                                   # PostgreSQL on 127.0.0.1:5432 as postgres
#   PG=postgres://bench:pw@db1/postgres PAIRS=9 RUNS=50 bench/store.sh
#
# PG names a server and a database to connect to while creating and
# dropping one scratch database per pair (psql does that). The runs are
# copies (new UUIDs) of one real run of cpu.primes at threads=1,2 with 3
# rounds of 2 trials. On loopback the cost is PostgreSQL's own work and
# its round trips; over a network each round trip adds its latency.
set -euo pipefail

PAIRS=${PAIRS:-5}
RUNS=${RUNS:-20}
PG=${PG:-postgres://postgres@127.0.0.1:5432/test}
here=$(cd "$(dirname "$0")/.." && pwd)
SLEDGE=${SLEDGE:-$here/target/release/sledge}

for tool in psql python3; do
  command -v "$tool" >/dev/null || { echo "$tool is missing: apt-get install postgresql-client python3" >&2; exit 1; }
done
if [ ! -x "$SLEDGE" ]; then
  (cd "$here" && cargo build --release --locked) >&2
fi

work=$(mktemp -d)
scratch_db=sledge_bench_$$
cleanup() {
  psql "$PG" -qc "DROP DATABASE IF EXISTS $scratch_db WITH (FORCE)" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

"$SLEDGE" --store "$work/seed.db" run cpu.primes -p max_prime=2000 -p threads=1,2 \
  -p time=0.05 --no-idle-check --rounds 3 --warmup 0 --min-trials 2 --max-trials 2 >/dev/null 2>&1
"$SLEDGE" --store "$work/seed.db" export last -o "$work/seed.json" 2>/dev/null
python3 - "$work/seed.json" "$work/runs.json" "$RUNS" <<'EOF'
import json, sys, uuid
doc = json.load(open(sys.argv[1]))
run = doc["runs"][0]
doc["runs"] = [dict(run, uuid=str(uuid.uuid4())) for _ in range(int(sys.argv[3]))]
json.dump(doc, open(sys.argv[2], "w"))
EOF
url=$(python3 -c 'import sys; u=sys.argv[1]; head,_,q=u.partition("?"); b=head.rsplit("/",1)[0]; print(b+"/"+sys.argv[2]+("?"+q if q else ""))' "$PG" "$scratch_db")

# Seconds one command takes.
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null 2>&1; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }

imports_sqlite=(); imports_pg=(); shows_sqlite=(); shows_pg=()
for pair in $(seq "$PAIRS"); do
  rm -f "$work/pair.db"
  psql "$PG" -qc "DROP DATABASE IF EXISTS $scratch_db WITH (FORCE)" >/dev/null
  psql "$PG" -qc "CREATE DATABASE $scratch_db" >/dev/null
  imports_sqlite+=("$(seconds "$SLEDGE" --store "$work/pair.db" import "$work/runs.json")")
  imports_pg+=("$(seconds "$SLEDGE" --store "$url" import "$work/runs.json")")
  shows_sqlite+=("$(seconds "$SLEDGE" --store "$work/pair.db" show last --metrics all)")
  shows_pg+=("$(seconds "$SLEDGE" --store "$url" show last --metrics all)")
  echo "pair $pair: import ${imports_sqlite[-1]} s vs ${imports_pg[-1]} s; show ${shows_sqlite[-1]} s vs ${shows_pg[-1]} s" >&2
done

python3 - "$RUNS" "${imports_sqlite[*]}" "${imports_pg[*]}" "${shows_sqlite[*]}" "${shows_pg[*]}" <<'EOF'
import statistics as st, sys
runs = sys.argv[1]
a, b, c, d = ([float(x) for x in arg.split()] for arg in sys.argv[2:6])
def line(what, s, p):
    ratios = [y / x for x, y in zip(s, p)]
    print(f"{what:<22} SQLite {st.median(s):.3f} s  PostgreSQL {st.median(p):.3f} s  "
          f"ratio PG/SQLite {st.median(ratios):.2f} (median of {len(s)} pairs)")
line(f"import {runs} runs", a, b)
line("show last", c, d)
EOF
