#!/usr/bin/env bash
# dbload against the server's own limit: the same rows loaded by a
# server-side `COPY ... FROM 'file' (FORMAT binary)` (no client, no network)
# and by `dbload ingest --method copy`, alternating, on one throwaway server.
# Prints rows/s of each, their ratio, dbload's peak RSS and the --dry-run rate.
#
#   bench/ingest-vs-copy.sh                 # 1 and 2 workers, 5,000,000 rows, 3 rounds
#   ROWS=10000000 ROUNDS=5 bench/ingest-vs-copy.sh
#   TRANSPORT=tcp bench/ingest-vs-copy.sh   # loopback TCP instead of the Unix socket
#   MEASURED=/path/to/other/dbload bench/ingest-vs-copy.sh  # another build's ingest too, alternating
#                                                           # with this one's in every round (an A/B)
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-5000000}
ROUNDS=${ROUNDS:-3}
BATCH=${BATCH:-10000}
DRY_ROWS=${DRY_ROWS:-50000000}
# This tree's release build, brought up to date (a stale binary would be measured otherwise).
if [ -z "${DBLOAD:-}" ]; then
  cargo build --release --quiet
  DBLOAD=./target/release/dbload
fi
# Another build whose ingest is measured in the same rounds; DBLOAD runs the server and makes the rows.
MEASURED=${MEASURED:-}
START=2024-01-01T00:00:00Z

# shellcheck source=bench/common.sh
. bench/common.sh
# shellcheck source=bench/server.sh
. bench/server.sh
# shellcheck source=bench/table.sh
. bench/table.sh
start_server

sql() { psql -X -q -v ON_ERROR_STOP=1 "$url" "$@"; }

# psql's \timing of one statement, in seconds.
timed_sql() {
  sql -c '\timing on' -c "$1" | sed -n 's/^Time: \([0-9.]*\) ms.*/\1/p' | tail -1 | awk '{print $1/1000}'
}

# ingest_rate BUILD WORKERS TABLE: BUILD's `ingest --method copy` of the
# rows into TABLE, emptied first; sets rate (rows/s) and peak (RSS, MiB).
ingest_rate() {
  sql -c "TRUNCATE $3" -c "CHECKPOINT"
  local report
  report=$("$1" ingest --url "$url" --table "$3" --append --rows "$ROWS" --workers "$2" \
    --batch-size "$BATCH" --start "$START" --method copy --quiet --output json)
  rate=$(awk -v n="$ROWS" -v s="$(echo "$report" | json_field '["wall_s"]')" 'BEGIN{printf "%.0f", n/s}')
  peak=$(printf '%.1f' "$(echo "$report" | json_field '["client_peak_rss_mib"]')")
}

run_pair() {
  local workers=$1 table="bench_w$1"
  local file="$work/rows-{worker}.bin"
  [ "$workers" -eq 1 ] && file="$work/rows.bin"
  "$DBLOAD" ingest --copy-file "$file" --rows "$ROWS" --workers "$workers" --batch-size "$BATCH" \
    --start "$START" --quiet --output json >/dev/null
  chmod 644 "$work"/rows*.bin
  "$DBLOAD" ingest --url "$url" --table "$table" --drop-table --rows 1 --quiet --output json >/dev/null

  local copy_rates=() dbload_rates=() other_rates=() rss=()
  for round in $(seq "$ROUNDS"); do
    sql -c "TRUNCATE $table" -c "CHECKPOINT"
    local t0 t1
    t0=$(date +%s.%N)
    if [ "$workers" -eq 1 ]; then
      sql -c "COPY $table FROM '$work/rows.bin' (FORMAT binary)" >/dev/null
    else
      for w in $(seq 0 $((workers - 1))); do
        sql -c "COPY $table FROM '$work/rows-$w.bin' (FORMAT binary)" >/dev/null &
      done
      wait
    fi
    t1=$(date +%s.%N)
    copy_rates+=("$(awk -v n="$ROWS" -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", n/(b-a)}')")

    ingest_rate "$DBLOAD" "$workers" "$table"
    dbload_rates+=("$rate")
    rss+=("$peak")
    local other=""
    if [ -n "$MEASURED" ]; then
      ingest_rate "$MEASURED" "$workers" "$table"
      other_rates+=("$rate")
      other=", $(basename "$MEASURED") $rate rows/s"
    fi
    echo "  round $round: server COPY ${copy_rates[-1]} rows/s, dbload ${dbload_rates[-1]} rows/s$other" >&2
  done
  local copy_med dbload_med
  copy_med=$(printf '%s\n' "${copy_rates[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  dbload_med=$(printf '%s\n' "${dbload_rates[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  local ratio
  ratio=$(awk -v a="$dbload_med" -v b="$copy_med" 'BEGIN{printf "%.3f", a/b}')
  printf '%d worker(s), %s rows: server-side COPY %s rows/s, dbload %s rows/s, ratio %s; dbload peak RSS %s MiB\n' \
    "$workers" "$ROWS" "$copy_med" "$dbload_med" "$ratio" "$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)"
  if [ -n "$MEASURED" ]; then
    local other_med
    other_med=$(printf '%s\n' "${other_rates[@]}" | sort -n | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
    printf '%d worker(s): %s %s rows/s, ratio %s to server-side COPY, %s to this build\n' "$workers" \
      "$(basename "$MEASURED")" "$other_med" "$(awk -v a="$other_med" -v b="$copy_med" 'BEGIN{printf "%.3f", a/b}')" \
      "$(awk -v a="$other_med" -v b="$dbload_med" 'BEGIN{printf "%.3f", a/b}')"
  fi
  bench_row "ingest --method copy, $workers worker(s), rows/s" "$dbload_med" "$copy_med (server COPY)" "$ratio" \
    ">= 1.0" "$(met "$ratio" '>=' 1.0)"
  rm -f "$work"/rows*.bin
}

echo "dbload $("$DBLOAD" --version | cut -d' ' -f2) vs server-side COPY; $(nproc) cores; medians of $ROUNDS rounds" >&2
run_pair 1
run_pair 2
dry=$("$DBLOAD" ingest --dry-run --rows "$DRY_ROWS" --quiet --output json)
dry_workers=$(echo "$dry" | json_field '["setup"]["workers"]')
dry_rate=$(printf '%.0f' "$(echo "$dry" | json_field '["rows_per_sec"]')")
printf 'dry run (generation + binary COPY encoding, %s workers): %s rows/s\n' "$dry_workers" "$dry_rate"
bench_row "ingest --dry-run, $dry_workers workers, rows/s" "$dry_rate" - - - -
