#!/usr/bin/env bash
# db.oltp against sysbench 1.0.20 and db.tpcb against pgbench, on this
# machine's PostgreSQL and MariaDB, alternated:
#
#   bench/db.sh oltp [PAIRS]   # sysbench oltp_read_write, oltp_read_only and
#                              # oltp_point_select (pgsql and mysql drivers)
#                              # against `db.oltp mode=...` with the same
#                              # tables, table size, threads and time; each
#                              # pair's transactions/s and the ratio
#                              # sledge / sysbench, then the median ratio
#   bench/db.sh tpcb [PAIRS]   # pgbench at scale 10 (the default script and
#                              # -S) against `db.tpcb script=tpcb-like` and
#                              # `select-only` on PostgreSQL, the same way
#   bench/db.sh all [PAIRS]    # both (the default; PAIRS defaults to 3)
#   bench/db.sh sync [ROUNDS]  # the known difference: `sledge ab` with
#                              # synchronous_commit on (A) and off (B) set on
#                              # the PostgreSQL server by --a-setup/--b-setup
#                              # (ALTER SYSTEM, reset by --restore), modes
#                              # write_only and point_select: B found faster
#                              # in write_only, no verdict in point_select
#   bench/db.sh aa [ROUNDS]    # the same pair with B's setting on too (A/A):
#                              # nothing may be called faster or slower
#
# Settings (environment): TIME (s per run, default 30), THREADS (default 2),
# TABLES (default 4), TABLE_SIZE (default 100000), SCALE (default 10),
# PGBENCH_MODE (pgbench -M, default `prepared`: db.tpcb prepares its
# statements, as sysbench does), PG_URL (default
# postgres://postgres@127.0.0.1:5432), MY_URL (default
# mysql://root@127.0.0.1:3306), KEEP_STORE (a path: the runs' store is
# copied there at the end, for `sledge show` and `compare`). Each side loads its tables before its own
# run, untimed: sysbench `prepare` and `pgbench -i`, sledge's case
# preparation. PIN=1 pins the servers (every thread of PostgreSQL's
# processes and of mariadbd/mysqld) to CPU 0 and the clients (sysbench,
# pgbench, sledge) to CPU 1, and gives the servers all CPUs back at the
# end: on a 2-CPU host the client's own CPU then cannot become the
# server's, and both tools load the same one-CPU server (root, 2 CPUs).
#
# Target (issue 40): transactions/s within ±10% of the tool's, median of
# at least 3 pairs. Run it alone: anything else on the machine moves both.
#
# The tools work in databases of their own, `sledge_bench` (created here
# on both servers and dropped at the end): nothing of the user's is
# touched. Needs sysbench, pgbench, psql and mysql (Debian's sysbench,
# postgresql-client, mariadb-client) and python3.
set -euo pipefail

mode=${1:-all}
pairs=${2:-3}
here=$(cd "$(dirname "$0")/.." && pwd)
SLEDGE=${SLEDGE:-$here/target/release/sledge}
TIME=${TIME:-30}
THREADS=${THREADS:-2}
TABLES=${TABLES:-4}
TABLE_SIZE=${TABLE_SIZE:-100000}
SCALE=${SCALE:-10}
PGBENCH_MODE=${PGBENCH_MODE:-prepared}
PG_URL=${PG_URL:-postgres://postgres@127.0.0.1:5432}
MY_URL=${MY_URL:-mysql://root@127.0.0.1:3306}
DB=sledge_bench
PIN=${PIN:-0}
CLIENT=()

for tool in sysbench pgbench psql mysql python3; do
  command -v "$tool" >/dev/null || { echo "$tool is missing" >&2; exit 1; }
done
if [ ! -x "$SLEDGE" ]; then
  (cd "$here" && cargo build --release --locked) >&2
fi

# host, port and user of a URL scheme://user@host:port
url_part() { # url user|host|port
  python3 -c '
import sys, urllib.parse
u = urllib.parse.urlparse(sys.argv[1])
print({"user": u.username or "", "host": u.hostname or "", "port": u.port or ""}[sys.argv[2]])' "$1" "$2"
}
pg_user=$(url_part "$PG_URL" user); pg_host=$(url_part "$PG_URL" host); pg_port=$(url_part "$PG_URL" port)
my_user=$(url_part "$MY_URL" user); my_host=$(url_part "$MY_URL" host); my_port=$(url_part "$MY_URL" port)
pg_port=${pg_port:-5432}; my_port=${my_port:-3306}

# Every pid of the local database servers.
server_pids() { pgrep -x 'postgres|mariadbd|mysqld' || true; }
# Sets the CPUs of every thread of every server process to $1.
pin_servers() {
  local pid
  for pid in $(server_pids); do taskset -a -p -c "$1" "$pid" >/dev/null 2>&1 || true; done
}
if [ "$PIN" = 1 ]; then
  [ "$(nproc)" -ge 2 ] || { echo "PIN=1 needs 2 CPUs" >&2; exit 1; }
  [ -n "$(server_pids)" ] || { echo "PIN=1 needs the servers on this host" >&2; exit 1; }
  pin_servers 0
  CLIENT=(taskset -c 1)
fi

work=$(mktemp -d)
store=$work/db.db
cleanup() {
  if [ -n "${KEEP_STORE:-}" ] && [ -f "$store" ]; then cp "$store" "$KEEP_STORE"; fi
  [ "$PIN" = 1 ] && pin_servers "0-$(($(nproc) - 1))"
  psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres -qc "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  mysql -h "$my_host" -P "$my_port" -u "$my_user" -e "DROP DATABASE IF EXISTS $DB" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres -qc "DROP DATABASE IF EXISTS $DB" >/dev/null
psql -h "$pg_host" -p "$pg_port" -U "$pg_user" -d postgres -qc "CREATE DATABASE $DB" >/dev/null
mysql -h "$my_host" -P "$my_port" -u "$my_user" -e "DROP DATABASE IF EXISTS $DB; CREATE DATABASE $DB"

sysbench_opts() { # pgsql|mysql
  if [ "$1" = pgsql ]; then
    echo "--db-driver=pgsql --pgsql-host=$pg_host --pgsql-port=$pg_port --pgsql-user=$pg_user --pgsql-db=$DB"
  else
    echo "--db-driver=mysql --mysql-host=$my_host --mysql-port=$my_port --mysql-user=$my_user --mysql-db=$DB"
  fi
}

# transactions/s of a sysbench run's report on stdin
sysbench_tps() {
  python3 -c '
import re, sys
m = re.search(r"transactions:\s+\d+\s+\(([0-9.]+) per sec", sys.stdin.read())
print(m.group(1) if m else "nan")'
}

# transactions/s of a pgbench run's report on stdin
pgbench_tps() {
  python3 -c '
import re, sys
m = re.search(r"tps = ([0-9.]+)", sys.stdin.read())
print(m.group(1) if m else "nan")'
}

# the headline mean of the last sledge run's only case
sledge_tps() {
  "$SLEDGE" --store "$store" show last --json | python3 -c '
import json, sys
case = json.load(sys.stdin)["cases"][0]
if case.get("error"):
    print("nan"); sys.exit()
print(next(m["summary"]["mean"] for m in case["metrics"] if m["name"] == "transactions_per_sec"))'
}

sledge_one_trial() { # workload params...
  "${CLIENT[@]}" "$SLEDGE" --store "$store" run "$@" -p "time=$TIME" --rounds 1 --warmup 0 \
    --min-trials 1 --max-trials 1 --no-idle-check >/dev/null 2>"$work/sledge.err" || {
    cat "$work/sledge.err" >&2
  }
  sledge_tps
}

ratios=$work/ratios
: > "$ratios"
pair_line() { # label i tool_tps sledge_tps
  python3 -c '
import sys
label, i, t, s = sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4])
print(f"{label} pair {i}: tool {t:.1f} tps, sledge {s:.1f} tps, sledge/tool {s/t:.4f}")' "$@"
  python3 -c 'import sys; print(sys.argv[1], float(sys.argv[3]) / float(sys.argv[2]))' "$1" "$3" "$4" >> "$ratios"
}

run_oltp() {
  local driver url script mode i t s opts
  for driver in pgsql mysql; do
    if [ "$driver" = pgsql ]; then url="$PG_URL/$DB"; else url="$MY_URL/$DB"; fi
    opts=$(sysbench_opts "$driver")
    for mode in read_write read_only point_select; do
      script=oltp_$mode
      echo "== $driver: sysbench $script vs db.oltp mode=$mode (tables=$TABLES table_size=$TABLE_SIZE threads=$THREADS time=$TIME)"
      for i in $(seq 1 "$pairs"); do
        # shellcheck disable=SC2086
        sysbench $script $opts --tables="$TABLES" --table-size="$TABLE_SIZE" prepare >/dev/null
        # shellcheck disable=SC2086
        t=$("${CLIENT[@]}" sysbench $script $opts --tables="$TABLES" --table-size="$TABLE_SIZE" \
          --threads="$THREADS" --time="$TIME" run | sysbench_tps)
        # shellcheck disable=SC2086
        sysbench $script $opts --tables="$TABLES" cleanup >/dev/null
        s=$(sledge_one_trial db.oltp -p "db=$url" -p "mode=$mode" -p "tables=$TABLES" \
          -p "table_size=$TABLE_SIZE" -p "threads=$THREADS")
        pair_line "$driver/$mode" "$i" "$t" "$s"
      done
    done
  done
}

run_tpcb() {
  local flag script i t s
  for script in tpcb-like select-only; do
    flag=""
    [ "$script" = select-only ] && flag="-S"
    echo "== pgsql: pgbench -M $PGBENCH_MODE $flag vs db.tpcb script=$script (scale=$SCALE clients=$THREADS time=$TIME)"
    for i in $(seq 1 "$pairs"); do
      pgbench -h "$pg_host" -p "$pg_port" -U "$pg_user" -i -q -s "$SCALE" "$DB" >/dev/null 2>&1
      # shellcheck disable=SC2086
      t=$("${CLIENT[@]}" pgbench -h "$pg_host" -p "$pg_port" -U "$pg_user" -M "$PGBENCH_MODE" $flag \
        -c "$THREADS" -j "$THREADS" -T "$TIME" "$DB" 2>/dev/null | pgbench_tps)
      pgbench -h "$pg_host" -p "$pg_port" -U "$pg_user" -i -I d "$DB" >/dev/null 2>&1 || true
      s=$(sledge_one_trial db.tpcb -p "db=$PG_URL/$DB" -p "script=$script" -p "scale=$SCALE" \
        -p "clients=$THREADS")
      pair_line "pgsql/$script" "$i" "$t" "$s"
    done
  done
}

run_sync() { # rounds [B's synchronous_commit: off, or on for the A/A pair]
  local rounds=${1:-6} b=${2:-off} psql_c
  psql_c="psql -h $pg_host -p $pg_port -U $pg_user -d postgres -qAt -o /dev/null -c"
  echo "== sledge ab: synchronous_commit on (A) vs $b (B), db.oltp write_only and point_select"
  "$SLEDGE" --store "$store" ab db.oltp -p "db=$PG_URL/$DB" -p mode=write_only,point_select \
    -p "threads=$THREADS" -p "time=$TIME" --rounds "$rounds" --no-idle-check \
    --a-setup "$psql_c 'ALTER SYSTEM SET synchronous_commit = on' && $psql_c 'SELECT pg_reload_conf()'" \
    --b-setup "$psql_c 'ALTER SYSTEM SET synchronous_commit = $b' && $psql_c 'SELECT pg_reload_conf()'" \
    --restore "$psql_c 'ALTER SYSTEM RESET synchronous_commit' && $psql_c 'SELECT pg_reload_conf()'"
}

if [ "$mode" = sync ]; then
  run_sync "$pairs"
  exit 0
fi
if [ "$mode" = aa ]; then
  run_sync "$pairs" on
  exit 0
fi

case $mode in
  oltp) run_oltp ;;
  tpcb) run_tpcb ;;
  all) run_oltp; run_tpcb ;;
  *) echo "usage: bench/db.sh oltp|tpcb|all [PAIRS]" >&2; exit 2 ;;
esac

echo "== median sledge/tool per comparison (target 0.90..1.10)"
python3 - "$ratios" <<'PY'
import statistics, sys
groups = {}
for line in open(sys.argv[1]):
    label, ratio = line.split()
    groups.setdefault(label, []).append(float(ratio))
for label, rs in groups.items():
    m = statistics.median(rs)
    print(f"{label}: median {m:.4f} of {len(rs)} pairs {'ok' if 0.9 <= m <= 1.1 else 'OUT'}")
PY
