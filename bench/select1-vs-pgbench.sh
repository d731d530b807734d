#!/usr/bin/env bash
# dbload timeit against pgbench on the cheapest possible query: `select 1`,
# prepared, 8 connections, on one throwaway PostgreSQL over loopback TCP,
# alternating the two tools round by round. The server's work per query is
# tiny, so on a small machine the client's CPU per query is the throughput
# gap: prints queries/s of each, their ratio (target >= 1.0, issue 18), and
# the client CPU each spent per query.
#
#   bench/select1-vs-pgbench.sh                        # 8 clients, 10 s, 3 rounds, prepared
#   ROUNDS=5 DURATION=30 bench/select1-vs-pgbench.sh
#   CLIENTS=16 THREADS=2 PROTOCOL=simple bench/select1-vs-pgbench.sh
#   TRANSPORT=socket bench/select1-vs-pgbench.sh        # the Unix socket instead of TCP
#   DBLOAD=/path/to/other/dbload bench/select1-vs-pgbench.sh
#
# Knobs: ROUNDS (3), DURATION (10; the duration of each side's run),
# CLIENTS (8; pgbench -c, dbload --concurrency), THREADS (2; pgbench -j),
# PROTOCOL (prepared; pgbench -M and dbload --protocol: simple, extended,
# prepared), TRANSPORT (tcp). DBLOAD=path runs that binary; otherwise the
# release build of this tree, rebuilt first.
#
# Measurement: pgbench's rate is its "tps (without initial connection time)";
# dbload's is `qps` from its JSON report. CPU per query is the client
# process's user+sys CPU time from /usr/bin/time (GNU time, `-f '%U %S'`, the
# same way for both tools: process start, connecting and preparing included)
# divided by the queries it counted; dbload's own `client_cpu_s` (getrusage)
# is printed beside it.
#
# Last measured: 2026-11-24, 2-core VM (Intel Xeon, PostgreSQL and pgbench
# 15.20), loopback TCP, 5 rounds of 10 s, load average 1.99 at start, 4.48 at
# end, workers thread per core (run::cores): pgbench 135,779 q/s at 4.96 us
# CPU per query, dbload 94,123 q/s at 7.79 us CPU per query; ratio 0.69 x
# pgbench (target >= 1.0). Before thread per core: 0.49-0.51, 10.8 us.
set -euo pipefail
cd "$(dirname "$0")/.."

ROUNDS=${ROUNDS:-3}
DURATION=${DURATION:-10}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
PROTOCOL=${PROTOCOL:-prepared}
TRANSPORT=${TRANSPORT:-tcp}
export TRANSPORT

# shellcheck source=bench/common.sh
. bench/common.sh
need_gnu_time select1-vs-pgbench
need_pgbench select1-vs-pgbench
# This tree's release build, brought up to date (a stale binary would be measured otherwise).
if [ -z "${DBLOAD:-}" ]; then
  cargo build --release --quiet
  DBLOAD=./target/release/dbload
fi

# shellcheck source=bench/server.sh
. bench/server.sh
# shellcheck source=bench/table.sh
. bench/table.sh
start_server
printf 'select 1;\n' >"$work/select1.sql"

# CPU microseconds per query from a `%U %S` file of /usr/bin/time and a query count.
us_per_query() { awk -v n="$2" '{printf "%.2f", ($1 + $2) / n * 1e6}' "$1"; }

load_start=$(uptime | sed 's/.*load average: //')
echo "select1-vs-pgbench: dbload $("$DBLOAD" --version | cut -d' ' -f2) vs $(pgbench --version | cut -d' ' -f3);" \
  "$(nproc) cores; $CLIENTS clients, ${DURATION} s, $PROTOCOL, $TRANSPORT; load average $load_start" >&2

pg_rates=() db_rates=() pg_cpu=() db_cpu=() db_rusage=()
for round in $(seq "$ROUNDS"); do
  /usr/bin/time -o "$work/pgbench.time" -f '%U %S' \
    pgbench -n -M "$PROTOCOL" -c "$CLIENTS" -j "$THREADS" -T "$DURATION" -f "$work/select1.sql" "$url" \
    >"$work/pgbench.txt" 2>&1 || { cat "$work/pgbench.txt" >&2; exit 1; }
  p_rate=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$work/pgbench.txt")
  p_count=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/pgbench.txt")
  p_failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/pgbench.txt")
  pg_rates+=("$(printf '%.0f' "$p_rate")")
  pg_cpu+=("$(us_per_query "$work/pgbench.time" "$p_count")")

  /usr/bin/time -o "$work/dbload.time" -f '%U %S' \
    "$DBLOAD" timeit --url "$url" -s 'select 1' --protocol "$PROTOCOL" --concurrency "$CLIENTS" \
    --duration "${DURATION}s" --output json --no-results --quiet >"$work/dbload.json"
  d_rate=$(json_field '["qps"]' <"$work/dbload.json")
  d_count=$(json_field '["count"]' <"$work/dbload.json")
  d_errors=$(json_field '["errors"]' <"$work/dbload.json")
  db_rates+=("$(printf '%.0f' "$d_rate")")
  db_cpu+=("$(us_per_query "$work/dbload.time" "$d_count")")
  db_rusage+=("$(awk -v c="$(json_field '["client_cpu_s"]' <"$work/dbload.json")" -v n="$d_count" \
    'BEGIN{printf "%.2f", c / n * 1e6}')")

  echo "  round $round: pgbench ${pg_rates[-1]} q/s (${pg_cpu[-1]} us CPU/query, ${p_failed:-0} failed)," \
    "dbload ${db_rates[-1]} q/s (${db_cpu[-1]} us CPU/query, $d_errors errors)" >&2
done
load_end=$(uptime | sed 's/.*load average: //')

p=$(median "${pg_rates[@]}")
d=$(median "${db_rates[@]}")
echo
echo "select1-vs-pgbench: select 1, $PROTOCOL, $CLIENTS clients, ${DURATION} s, $TRANSPORT, $ROUNDS rounds (medians)"
printf '  pgbench %10.0f q/s   %6.2f us CPU per query (-j %s)\n' "$p" "$(median "${pg_cpu[@]}")" "$THREADS"
printf '  dbload  %10.0f q/s   %6.2f us CPU per query (getrusage in its report: %.2f us)\n' \
  "$d" "$(median "${db_cpu[@]}")" "$(median "${db_rusage[@]}")"
ratio=$(awk -v d="$d" -v p="$p" 'BEGIN{printf "%.2f", d / p}')
echo "  ratio   $(printf '%10s' "$ratio") x pgbench (target >= 1.0)"
echo "  load average: $load_start at start, $load_end at end"
bench_row "timeit select 1, $PROTOCOL, $CLIENTS clients, q/s" "$(printf '%.0f' "$d")" \
  "$(printf '%.0f' "$p") (pgbench)" "$ratio" ">= 1.0" "$(met "$ratio" '>=' 1.0)"
p_cpu=$(median "${pg_cpu[@]}")
d_cpu=$(median "${db_cpu[@]}")
bench_row "  client CPU per query, us" "$d_cpu" "$p_cpu (pgbench)" \
  "$(awk -v d="$d_cpu" -v p="$p_cpu" 'BEGIN{printf "%.2f", d / p}')" - -
