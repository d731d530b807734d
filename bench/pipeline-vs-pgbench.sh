#!/usr/bin/env bash
# Pipelined `select 1`, 16 queries in flight per connection, against
# pgbench's own pipelines: pgbench runs a script of `\startpipeline`, 16 ×
# `select 1;` and `\endpipeline` (-M prepared; a transaction is one run of
# the script, so its queries are 16 × its transactions), and dbload runs
# the same script file (`timeit -f`) and `timeit -s 'select 1' --pipeline
# 16`, alternating round by round on one throwaway PostgreSQL over loopback
# TCP. Prints each dbload side's median rate ratio to pgbench with its IQR
# (issue 31's aim: >= 1.0) and the client CPU per query of each.
#
# A build that refuses either dbload side (exit 2: `\startpipeline` or
# `--pipeline` not there yet) gets "not available in this build" for it,
# with dbload's own message, and no figure.
#
#   bench/pipeline-vs-pgbench.sh                 # 16 in flight, 8 clients, 10 rounds of 5 s
#   DEPTH=64 ROUNDS=3 bench/pipeline-vs-pgbench.sh
#
# Knobs: ROUNDS (10), DURATION (5), DEPTH (16; queries per pipeline), CLIENTS
# (8), THREADS (2; -j of both), TRANSPORT (tcp), DBLOAD as in
# bench/select1-vs-pgbench.sh. The protocol is prepared: pgbench refuses
# pipelines with -M simple.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5}
DEPTH=${DEPTH:-16}
CLIENTS=${CLIENTS:-8}
THREADS=${THREADS:-2}
export TRANSPORT=${TRANSPORT:-tcp}

# shellcheck source=bench/common.sh
. bench/common.sh
against_pgbench pipeline-vs-pgbench
script="$work/pipeline.sql"
{
  printf '%s\n' '\startpipeline'
  for _ in $(seq "$DEPTH"); do printf '%s\n' 'select 1;'; done
  printf '%s\n' '\endpipeline'
} >"$script"

unit=query
run=(-M prepared -c "$CLIENTS" -j "$THREADS")
side_dbload_script() { timed_dbload dbload_script "$DEPTH" timeit --url "$url" -f "$script" "${run[@]}" --duration "${DURATION}s"; }
side_dbload_pipeline() {
  timed_dbload dbload_pipeline 1 timeit --url "$url" -s 'select 1' --pipeline "$DEPTH" "${run[@]}" --duration "${DURATION}s"
}
side_pgbench() { timed_pgbench pgbench "$DEPTH" -n "${run[@]}" -T "$DURATION" -f "$script"; }

load_start=$(load_average)
echo "pipeline-vs-pgbench: dbload $("$DBLOAD" --version | cut -d' ' -f2) vs $(pgbench --version | cut -d' ' -f3);" \
  "$(nproc) cores; $DEPTH in flight, $CLIENTS clients, -j $THREADS, ${DURATION} s, $TRANSPORT; load average $load_start" >&2
alternate dbload_script dbload_pipeline pgbench

echo
echo "pipeline-vs-pgbench: select 1, $DEPTH per pipeline, prepared, $CLIENTS clients, ${DURATION} s, $TRANSPORT;" \
  "$ROUNDS alternating rounds (medians)"
versus dbload_script pgbench "timeit -f pipeline script ($DEPTH), q/s"
cpu_versus dbload_script pgbench "  client CPU per query, us"
versus dbload_pipeline pgbench "timeit --pipeline $DEPTH, q/s"
cpu_versus dbload_pipeline pgbench "  client CPU per query, us"
echo "  load average: $load_start before, $(load_average) after"
