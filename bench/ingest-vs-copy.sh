#!/usr/bin/env bash
# dbload against the server's own limit: the same rows loaded, alternating
# round by round on one throwaway server, by
#   dbload          `dbload ingest --method copy`, batches of 10,000, each
#                   committed on its own;
#   server_batches  the server's own COPY of the same rows in the same
#                   batches: one `COPY ... FROM 'file' (FORMAT binary)` per
#                   batch, each its own transaction, from one session per
#                   worker (no client, no network: dbload's peer, issue 31);
#   server_single   the server's own single COPY of all of a worker's rows
#                   (one transaction: the physical limit, reported beside).
# Prints rows/s of each, the median of the rounds' ratios with its IQR,
# dbload's client CPU per row (GNU time, user+sys over the rows) and peak
# RSS, and the --dry-run rate.
#
#   bench/ingest-vs-copy.sh                 # 1 worker, 1,000,000 rows, 10 rounds
#   ROWS=5000000 ROUNDS=3 WORKER_COUNTS="1 2" bench/ingest-vs-copy.sh
#   TRANSPORT=tcp bench/ingest-vs-copy.sh   # loopback TCP instead of the Unix socket
#   MEASURED=/path/to/other/dbload bench/ingest-vs-copy.sh  # another build's ingest too, alternating
#                                                           # with this one's in every round (an A/B)
#
# Knobs: ROUNDS (10), ROWS (1,000,000, split among the workers), BATCH
# (10,000), WORKER_COUNTS (1; "1 2" adds 2 workers, against the server's
# sides running 2 sessions side by side, one per worker's rows), DRY_ROWS
# (50,000,000). A round of 1 worker takes about 15 s on a quiet 2-core
# machine (three loads, each after a TRUNCATE and a CHECKPOINT).
#
# The batches are the rows of dbload's own COPY stream (`--copy-file`), cut
# by the server: loaded once into a scratch table whose identity column
# numbers them in the file's order, then written out 10,000 at a time with
# `COPY (SELECT ... ORDER BY n) TO 'file' (FORMAT binary)`.
set -euo pipefail
cd "$(dirname "$0")/.."

ROWS=${ROWS:-1000000}
BATCH=${BATCH:-10000}
WORKER_COUNTS=${WORKER_COUNTS:-1}
DRY_ROWS=${DRY_ROWS:-50000000}
# Another build whose ingest is measured in the same rounds; DBLOAD runs the server and makes the rows.
MEASURED=${MEASURED:-}
START=2024-01-01T00:00:00Z

# shellcheck source=bench/common.sh
. bench/common.sh
need_gnu_time ingest-vs-copy
need_dbload
# shellcheck source=bench/server.sh
. bench/server.sh
# shellcheck source=bench/table.sh
. bench/table.sh
start_server

sql() { psql -X -q -v ON_ERROR_STOP=1 "$url" "$@"; }

# cut_batches WORKERS TABLE: writes the rows each worker sends
# ($work/rows-W.bin), and for each worker the scripts the server's sides
# run: single-W.sql (one COPY of all its rows) and batches-W.sql (one COPY
# per batch of its stream, in order).
cut_batches() {
  local workers=$1 table=$2 w columns count
  "$DBLOAD" ingest --copy-file "$work/rows-{worker}.bin" --rows "$ROWS" --workers "$workers" --batch-size "$BATCH" \
    --start "$START" --quiet --output json >/dev/null
  chmod 644 "$work"/rows-*.bin
  columns=$(sql -At -c "SELECT string_agg(quote_ident(attname), ', ' ORDER BY attnum) FROM pg_attribute
    WHERE attrelid = '$table'::regclass AND attnum > 0 AND NOT attisdropped")
  # The server writes the batches: into a directory of theirs it may write to.
  mkdir -p "$work/batches"
  chmod 777 "$work/batches"
  sql -c "CREATE UNLOGGED TABLE bench_cut (LIKE $table, n bigint GENERATED ALWAYS AS IDENTITY)"
  for w in $(seq 0 $((workers - 1))); do
    echo "COPY $table FROM '$work/rows-$w.bin' (FORMAT binary);" >"$work/single-$w.sql"
    sql -c "TRUNCATE bench_cut RESTART IDENTITY" -c "COPY bench_cut ($columns) FROM '$work/rows-$w.bin' (FORMAT binary)"
    count=$(sql -At -c "SELECT count(*) FROM bench_cut")
    : >"$work/batches-$w.sql"
    for k in $(seq 0 $(((count - 1) / BATCH))); do
      echo "COPY (SELECT $columns FROM bench_cut WHERE n > $((k * BATCH)) AND n <= $(((k + 1) * BATCH)) ORDER BY n)
        TO '$work/batches/$w-$k.bin' (FORMAT binary);"
      echo "COPY $table FROM '$work/batches/$w-$k.bin' (FORMAT binary);" >>"$work/batches-$w.sql"
    done | sql >/dev/null
  done
  sql -c "DROP TABLE bench_cut"
}

# Each load starts from an empty table and a checkpoint, outside its time.
empty() { sql -c "TRUNCATE $table" -c "CHECKPOINT"; }

# server_copy SIDE KIND: one session per worker running its KIND-W.sql, side by side; wall time.
server_copy() {
  local side=$1 kind=$2 w t0 t1
  empty
  t0=$(date +%s.%N)
  for w in $(seq 0 $((workers - 1))); do sql -f "$work/$kind-$w.sql" >/dev/null & done
  wait
  t1=$(date +%s.%N)
  record_run "$side" "$ROWS" "$(awk -v n="$ROWS" -v a="$t0" -v b="$t1" 'BEGIN { printf "%.0f", n / (b - a) }')" - 0
}
side_server_batches() { server_copy server_batches batches; }
side_server_single() { server_copy server_single single; }

# ingest_with BUILD SIDE: BUILD's `ingest --method copy` of the rows.
ingest_with() {
  local side=$2
  empty
  /usr/bin/time -o "$work/$side.time" -f '%U %S' "$1" ingest --url "$url" --table "$table" --append --rows "$ROWS" \
    --workers "$workers" --batch-size "$BATCH" --start "$START" --method copy --quiet --output json >"$work/$side.json"
  local rows wall
  rows=$(json_field '["rows_total"]' <"$work/$side.json")
  wall=$(json_field '["wall_s"]' <"$work/$side.json")
  record "$side" rss "$(json_field '["client_peak_rss_mib"]' <"$work/$side.json")"
  record_run "$side" "$rows" "$(awk -v n="$rows" -v s="$wall" 'BEGIN { printf "%.0f", n / s }')" "$work/$side.time" \
    "$(json_field '["accounting"]["failed"]' <"$work/$side.json")"
}
side_dbload() { ingest_with "$DBLOAD" dbload; }
side_measured() { ingest_with "$MEASURED" measured; }

unit=row
load_start=$(load_average)
echo "ingest-vs-copy: dbload $("$DBLOAD" --version | cut -d' ' -f2) vs the server's own COPY; $(nproc) cores;" \
  "$ROWS rows, batches of $BATCH; load average $load_start" >&2
for workers in $WORKER_COUNTS; do
  table="bench_w$workers"
  "$DBLOAD" ingest --url "$url" --table "$table" --drop-table --rows 1 --quiet --output json >/dev/null
  cut_batches "$workers" "$table"
  sides=(dbload)
  [ -z "$MEASURED" ] || sides+=(measured)
  alternate "${sides[@]}" server_batches server_single

  echo
  echo "ingest-vs-copy: $workers worker(s), $ROWS rows, batches of $BATCH; $ROUNDS alternating rounds (medians)"
  versus dbload server_batches "ingest --method copy, $workers worker(s), rows/s, vs per-batch COPY"
  versus dbload server_single "  the same, vs one COPY of all rows (stretch)"
  read -r q1 cpu q3 < <(figures dbload cpu | quartiles)
  peak=$(figures dbload rss | sort -g | tail -1)
  printf '  dbload client CPU per row %.3f us (IQR %.3f-%.3f), peak RSS %.1f MiB\n' "$cpu" "$q1" "$q3" "$peak"
  bench_row "  dbload client CPU per row, us" "$(printf '%.3f' "$cpu")" - - "$(printf '%.3f-%.3f' "$q1" "$q3")" - -
  if [ -n "$MEASURED" ]; then
    versus measured server_batches "  $(basename "$MEASURED"), vs per-batch COPY"
    versus measured dbload "  $(basename "$MEASURED"), vs this build"
  fi
  rm -rf "$work"/rows-*.bin "$work/batches"
done
dry=$("$DBLOAD" ingest --dry-run --rows "$DRY_ROWS" --quiet --output json)
dry_workers=$(echo "$dry" | json_field '["setup"]["workers"]')
dry_rate=$(printf '%.0f' "$(echo "$dry" | json_field '["rows_per_sec"]')")
printf 'dry run (generation + binary COPY encoding, %s workers): %s rows/s\n' "$dry_workers" "$dry_rate"
bench_row "ingest --dry-run, $dry_workers workers, rows/s" "$dry_rate" - - - - -
echo "  load average: $load_start before, $(load_average) after"
