#!/usr/bin/env bash
# dbload's pgbench habits against pgbench itself, on one throwaway
# PostgreSQL over loopback TCP, alternating the two tools round by round:
#   - `dbload init --scale N` against `pgbench -i -s N` (wall time to make
#     and fill pgbench's four tables, vacuum and keys included in both);
#   - `dbload timeit --builtin tpcb-like -c 8 -j 2 -M prepared` against
#     `pgbench -n -b tpcb-like -c 8 -j 2 -M prepared` on those tables
#     (transactions/s: the median of the rounds' ratios with its IQR, issue
#     31's aim >= 1.0; client CPU per transaction of each).
#
#   bench/pgbench-builtin.sh                     # scale 10, 8 clients, 10 rounds of 5 s each side
#   SCALE=50 DURATION=30 ROUNDS=5 bench/pgbench-builtin.sh
#   DBLOAD=/path/to/other/dbload bench/pgbench-builtin.sh
#
# Knobs: ROUNDS (10), SCALE (10), CLIENTS (8), THREADS (2; -j of both),
# DURATION (5; seconds of each side's tpcb-like run), PROTOCOL (prepared).
# Both tools run the TPC-B-like load on the tables the last init made (the
# rounds of inits come first), so the tables are the same for both, growing
# alike round by round; pgbench's run is `-n` (no vacuum before it), as
# dbload's.
set -euo pipefail
cd "$(dirname "$0")/.."

SCALE=${SCALE:-10}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
DURATION=${DURATION:-5}
PROTOCOL=${PROTOCOL:-prepared}
export TRANSPORT=${TRANSPORT:-tcp}

# shellcheck source=bench/common.sh
. bench/common.sh
against_pgbench pgbench-builtin

# init_in SIDE COMMAND...: the wall seconds of one init, kept as the side's `seconds`.
init_in() {
  local side=$1
  shift
  /usr/bin/time -o "$work/wall.time" -f '%e' "$@" >"$work/init.txt" 2>&1 || { cat "$work/init.txt" >&2; return 1; }
  record "$side" seconds "$(cat "$work/wall.time")"
  echo "  round $round $side: $(cat "$work/wall.time") s" >&2
}
side_init_dbload() { init_in init_dbload "$DBLOAD" init --url "$url" --scale "$SCALE" --quiet; }
side_init_pgbench() { init_in init_pgbench pgbench -i -q -s "$SCALE" "$url"; }

unit=transaction
run=(-M "$PROTOCOL" -c "$CLIENTS" -j "$THREADS")
side_dbload() { timed_dbload dbload 1 timeit --url "$url" --builtin tpcb-like "${run[@]}" --duration "${DURATION}s"; }
side_pgbench() { timed_pgbench pgbench 1 -n -b tpcb-like "${run[@]}" -T "$DURATION"; }

load_start=$(load_average)
echo "pgbench-builtin: dbload $("$DBLOAD" --version | cut -d' ' -f2) vs $(pgbench --version | cut -d' ' -f3);" \
  "$(nproc) cores; scale $SCALE, $CLIENTS clients, -j $THREADS, ${DURATION} s, $PROTOCOL; load average $load_start" >&2

alternate init_dbload init_pgbench
echo
echo "pgbench-builtin: scale $SCALE; tpcb-like, $PROTOCOL, $CLIENTS clients, ${DURATION} s; $ROUNDS alternating rounds (medians)"
di=$(printf '%.2f' "$(median_of init_dbload seconds)")
pi=$(printf '%.2f' "$(median_of init_pgbench seconds)")
# The init's ratio is pgbench's time over dbload's: above 1.0, dbload is faster.
read -r q1 ratio q3 < <(ratios init_pgbench init_dbload seconds | quartiles)
printf '  init --scale %s: dbload %.2f s, pgbench -i %.2f s; pgbench/dbload %.2f x, IQR %.2f-%.2f\n' \
  "$SCALE" "$di" "$pi" "$ratio" "$q1" "$q3"
bench_row "init --scale $SCALE, seconds (ratio: pgbench's / dbload's)" "$di" "$pi (pgbench -i)" \
  "$(printf '%.2f' "$ratio")" "$(printf '%.2f-%.2f' "$q1" "$q3")" ">= 1.0 x" "$(met "$ratio" '>=' 1.0)"

alternate dbload pgbench
versus dbload pgbench "timeit --builtin tpcb-like, $CLIENTS clients, tps"
cpu_versus dbload pgbench "  client CPU per transaction, us"
echo "  load average: $load_start before, $(load_average) after"
