#!/usr/bin/env bash
# dbload timeit against pgbench on the cheapest possible query: `select 1`,
# not pipelined, prepared, 8 connections, on one throwaway PostgreSQL over
# loopback TCP, alternating the two tools round by round (dbload, pgbench,
# dbload, ...). The server's work per query is tiny, so on a small machine
# the client's CPU per query decides the rate: issue 31's gate is dbload's
# median client CPU per query at or below pgbench's; the aim, the median of
# the rounds' rate ratios at least 1.0 (printed with its IQR).
#
#   bench/select1-vs-pgbench.sh                        # 8 clients, 10 rounds of 5 s each side, prepared
#   ROUNDS=3 DURATION=10 bench/select1-vs-pgbench.sh
#   CLIENTS=16 THREADS=2 PROTOCOL=simple bench/select1-vs-pgbench.sh
#   TRANSPORT=socket bench/select1-vs-pgbench.sh        # the Unix socket instead of TCP
#   DBLOAD=/path/to/other/dbload bench/select1-vs-pgbench.sh
#
# Knobs: ROUNDS (10), DURATION (5; seconds of each side's run), CLIENTS (8;
# pgbench -c, dbload -c), THREADS (2; -j of both), PROTOCOL (prepared; -M of
# both: simple, extended, prepared), TRANSPORT (tcp). DBLOAD=path runs that
# binary; otherwise the release build of this tree, rebuilt first.
#
# Measurement (bench/common.sh): pgbench's rate is its "tps (without initial
# connection time)", dbload's its report's `qps`; client CPU per query is the
# process's user+sys from GNU time over the queries it counted.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
PROTOCOL=${PROTOCOL:-prepared}
export TRANSPORT=${TRANSPORT:-tcp}

# shellcheck source=bench/common.sh
. bench/common.sh
against_pgbench select1-vs-pgbench
printf 'select 1;\n' >"$work/select1.sql"

unit=query
side_dbload() {
  timed_dbload dbload 1 timeit --url "$url" -s 'select 1' -M "$PROTOCOL" -c "$CLIENTS" -j "$THREADS" \
    --duration "${DURATION}s"
}
side_pgbench() {
  timed_pgbench pgbench 1 -n -M "$PROTOCOL" -c "$CLIENTS" -j "$THREADS" -T "$DURATION" -f "$work/select1.sql"
}

load_start=$(load_average)
echo "select1-vs-pgbench: dbload $("$DBLOAD" --version | cut -d' ' -f2) vs $(pgbench --version | cut -d' ' -f3);" \
  "$(nproc) cores; $CLIENTS clients, -j $THREADS, ${DURATION} s, $PROTOCOL, $TRANSPORT; load average $load_start" >&2
alternate dbload pgbench

echo
echo "select1-vs-pgbench: select 1, $PROTOCOL, $CLIENTS clients, -j $THREADS, ${DURATION} s, $TRANSPORT;" \
  "$ROUNDS alternating rounds (medians)"
versus dbload pgbench "timeit select 1, $PROTOCOL, $CLIENTS clients, q/s"
cpu_versus dbload pgbench "  client CPU per query, us (the gate)" gate
echo "  load average: $load_start before, $(load_average) after"
