#!/usr/bin/env bash
# `make bench`: every speed and memory bench, one after the other on this
# machine, then one table: each figure, dbload's value, its peer's or the
# server's own limit, the ratio (the median of the ratios of alternating
# rounds: dbload, peer, dbload, peer ...) and its interquartile range, the
# target (issues 18 and 31) and whether it is met, with the load average
# before and after (this is a 2-core machine shared with the server: a busy
# one lowers every ratio) and the time it all took. Each script's own output
# (its per-round lines included) goes to bench/out/NAME.txt.
#
#   make bench                          # or bench/all.sh: 10 rounds each, about 30 minutes
#   ROUNDS=3 make bench                 # fewer rounds, a quicker and noisier look
#   BENCHES="select1-vs-pgbench http-vs-wrk" bench/all.sh
#
# The knobs of each script (ROUNDS, DURATION, ROWS ...) pass through.
set -euo pipefail
cd "$(dirname "$0")/.."

BENCHES=${BENCHES:-select1-vs-pgbench pipeline-vs-pgbench pgbench-builtin ingest-vs-copy http-vs-wrk k6 memory}
if [ -z "${DBLOAD:-}" ]; then
  cargo build --release --quiet
  export DBLOAD=./target/release/dbload
fi
mkdir -p bench/out
BENCH_TABLE=$(mktemp /tmp/dbload-bench-table-XXXXXX)
export BENCH_TABLE
trap 'rm -f "$BENCH_TABLE"' EXIT

load_start=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date +%s)
failed=()
for bench in $BENCHES; do
  echo "bench/all: $bench (output in bench/out/$bench.txt)" >&2
  if ! "bench/$bench.sh" >"bench/out/$bench.txt" 2>&1; then
    failed+=("$bench")
    echo "bench/all: $bench failed; the end of its output:" >&2
    tail -5 "bench/out/$bench.txt" >&2
  fi
done
load_end=$(cut -d' ' -f1-3 /proc/loadavg)

cpu=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo
echo "dbload $("$DBLOAD" --version | cut -d' ' -f2) ($(git rev-parse --short HEAD 2>/dev/null || echo unknown))," \
  "$(date -u +%Y-%m-%d), $(nproc) x $cpu, $(awk '/MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo)"
took=$(($(date +%s) - started))
echo "load average (1, 5, 15 min): $load_start before, $load_end after;" \
  "$((took / 60)) min $((took % 60)) s for BENCHES=\"$BENCHES\", ROUNDS=${ROUNDS:-10}"
echo
{
  printf 'figure\tdbload\tpeer or limit\tratio\tIQR\ttarget\tmet\n'
  cat "$BENCH_TABLE"
} | column -t -s $'\t'
if [ ${#failed[@]} -gt 0 ]; then
  echo
  echo "bench/all: failed: ${failed[*]}" >&2
  exit 1
fi
