#!/usr/bin/env bash
# dbload's pgbench habits against pgbench itself, on one throwaway
# PostgreSQL over loopback TCP, alternating the two tools round by round:
#   - `dbload init --scale N` against `pgbench -i -s N` (wall time to make
#     and fill pgbench's four tables, vacuum and keys included in both);
#   - `dbload timeit --builtin tpcb-like` against `pgbench -b tpcb-like`
#     on those tables (transactions/s, CPU per transaction), with the
#     percentiles only dbload gives.
#
#   bench/pgbench-builtin.sh                     # scale 10, 8 clients, 15 s, 3 rounds
#   SCALE=50 DURATION=30 ROUNDS=5 bench/pgbench-builtin.sh
#   DBLOAD=/path/to/other/dbload bench/pgbench-builtin.sh
#
# Knobs: ROUNDS (3), SCALE (10), CLIENTS (8), THREADS (2; pgbench -j),
# DURATION (15; seconds of each side's tpcb-like run), PROTOCOL (prepared).
# Both tools run the TPC-B-like load on tables that dbload's init made, so
# the tables are the same size for both; pgbench's run is `-n` (no vacuum
# before it), as dbload's.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
DURATION=${DURATION:-15}
PROTOCOL=${PROTOCOL:-prepared}
export TRANSPORT=${TRANSPORT:-tcp}

# shellcheck source=bench/common.sh
. bench/common.sh
need_gnu_time pgbench-builtin
need_pgbench pgbench-builtin
if [ -z "${DBLOAD:-}" ]; then
  cargo build --release --quiet
  DBLOAD=./target/release/dbload
fi

# shellcheck source=bench/server.sh
. bench/server.sh
# shellcheck source=bench/table.sh
. bench/table.sh
start_server

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{printf "%.2f", a / b}'; }
# Wall seconds of a command, its output in $work/out.txt.
wall() {
  /usr/bin/time -o "$work/wall.time" -f '%e' "$@" >"$work/out.txt" 2>&1 || { cat "$work/out.txt" >&2; return 1; }
  cat "$work/wall.time"
}

load_start=$(uptime | sed 's/.*load average: //')
echo "pgbench-builtin: dbload $("$DBLOAD" --version | cut -d' ' -f2) vs $(pgbench --version | cut -d' ' -f3);" \
  "$(nproc) cores; scale $SCALE, $CLIENTS clients, ${DURATION} s, $PROTOCOL; load average $load_start" >&2

pg_init=() db_init=() pg_tps=() db_tps=() pg_cpu=() db_cpu=() db_p99=()
for round in $(seq "$ROUNDS"); do
  pg_init+=("$(wall pgbench -i -q -s "$SCALE" "$url")")
  db_init+=("$(wall "$DBLOAD" init --url "$url" --scale "$SCALE" --quiet)")

  /usr/bin/time -o "$work/pgbench.time" -f '%U %S' \
    pgbench -n -b tpcb-like -M "$PROTOCOL" -c "$CLIENTS" -j "$THREADS" -T "$DURATION" "$url" \
    >"$work/pgbench.txt" 2>&1 || { cat "$work/pgbench.txt" >&2; exit 1; }
  p_rate=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$work/pgbench.txt")
  p_count=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/pgbench.txt")
  pg_tps+=("$(printf '%.0f' "$p_rate")")
  pg_cpu+=("$(awk -v n="$p_count" '{printf "%.1f", ($1 + $2) / n * 1e6}' "$work/pgbench.time")")

  /usr/bin/time -o "$work/dbload.time" -f '%U %S' \
    "$DBLOAD" timeit --url "$url" --builtin tpcb-like --protocol "$PROTOCOL" --concurrency "$CLIENTS" \
    --duration "${DURATION}s" --output json --no-results --quiet >"$work/dbload.json"
  d_count=$(json_field '["count"]' <"$work/dbload.json")
  db_tps+=("$(printf '%.0f' "$(json_field '["qps"]' <"$work/dbload.json")")")
  db_cpu+=("$(awk -v n="$d_count" '{printf "%.1f", ($1 + $2) / n * 1e6}' "$work/dbload.time")")
  db_p99+=("$(json_field '["latency_ms"]["p99"]' <"$work/dbload.json")")

  echo "  round $round: init pgbench ${pg_init[-1]} s, dbload ${db_init[-1]} s;" \
    "tpcb-like pgbench ${pg_tps[-1]} tps (${pg_cpu[-1]} us CPU/tx), dbload ${db_tps[-1]} tps" \
    "(${db_cpu[-1]} us CPU/tx, p99 ${db_p99[-1]} ms)" >&2
done
load_end=$(uptime | sed 's/.*load average: //')

pi=$(median "${pg_init[@]}") di=$(median "${db_init[@]}")
pt=$(median "${pg_tps[@]}") dt=$(median "${db_tps[@]}")
echo
echo "pgbench-builtin: scale $SCALE; tpcb-like, $PROTOCOL, $CLIENTS clients, ${DURATION} s; $ROUNDS rounds (medians)"
printf '  init      pgbench %8.2f s      dbload %8.2f s      pgbench/dbload %s x\n' "$pi" "$di" "$(ratio "$pi" "$di")"
printf '  tpcb-like pgbench %8.0f tps    dbload %8.0f tps    dbload/pgbench %s x (p99 %s ms)\n' \
  "$pt" "$dt" "$(ratio "$dt" "$pt")" "$(median "${db_p99[@]}")"
printf '  CPU/tx    pgbench %8.1f us     dbload %8.1f us\n' "$(median "${pg_cpu[@]}")" "$(median "${db_cpu[@]}")"
echo "  load average: $load_start at start, $load_end at end"
bench_row "init --scale $SCALE, seconds (ratio: pgbench's / dbload's)" "$di" "$pi (pgbench -i)" \
  "$(ratio "$pi" "$di")" ">= 1.0" "$(met "$(ratio "$pi" "$di")" '>=' 1.0)"
bench_row "timeit --builtin tpcb-like, $CLIENTS clients, tps" "$dt" "$pt (pgbench)" \
  "$(ratio "$dt" "$pt")" ">= 1.0" "$(met "$(ratio "$dt" "$pt")" '>=' 1.0)"
