#!/usr/bin/env bash
# The fault matrix: ingests into a throwaway PostgreSQL that is stopped
# as `pg_ctl -m immediate stop` does (SIGQUIT: no shutdown checkpoint,
# crash recovery at the next start) two seconds into the run, for each
# method, without --reconnect (a --rows run: its workers end at the lost
# connection, the server comes back after dbload ended) and with it (a
# --duration run: the server comes back two seconds later), RUNS times
# each, with synchronous_commit = on for dbload's sessions.
#
# A miscount is a table whose row count lies outside [written, written +
# in doubt] of dbload's report. Prints one line per run and the totals;
# exits 1 if any run miscounted or left no report.
#
#   scripts/fault-matrix.sh                 # 4 methods x 2 modes x 5 runs
#   RUNS=1 METHODS=copy scripts/fault-matrix.sh
#   DBLOAD=target/release/dbload scripts/fault-matrix.sh
set -euo pipefail
cd "$(dirname "$0")/.."
DBLOAD=${DBLOAD:-target/debug/dbload}
RUNS=${RUNS:-5}
METHODS=${METHODS:-insert unnest copy copy-csv}
[ -x "$DBLOAD" ] || cargo build --quiet
TRANSPORT=tcp
. bench/server.sh
start_server

data="$server_dir/data"
# Commits acknowledged only once their WAL is flushed: a crash of the
# server process loses none of them (fsync=off loses nothing to a process
# crash, only to the machine's).
run_url="$url&options=-c%20synchronous_commit%3Don"

postmaster_pid() { head -n 1 "$data/postmaster.pid" 2>/dev/null || true; }

stop_immediately() {
  local pid
  pid=$(postmaster_pid)
  [ -n "$pid" ] && kill -QUIT "$pid"
  while [ -e "$data/postmaster.pid" ]; do sleep 0.05; done
}

# Starts the server again with its own command line, as the account that
# owns its data directory, and waits until it answers.
start_again() {
  local owner
  owner=$(stat -c %U "$data")
  if [ "$(id -un)" = "$owner" ]; then
    (eval "exec $(cat "$data/postmaster.opts")" >/dev/null 2>&1 &)
  else
    (runuser -u "$owner" -- sh -c "exec $(cat "$data/postmaster.opts")" >/dev/null 2>&1 &)
  fi
  for _ in $(seq 1 300); do
    psql "$url" -Atc 'select 1' >/dev/null 2>&1 && return 0
    sleep 0.1
  done
  echo "fault-matrix: the server did not come back" >&2
  return 1
}

count() { psql "$url" -Atc 'select count(*) from fault_matrix'; }

runs=0 miscounts=0 lost_reports=0
for method in $METHODS; do
  for mode in without-reconnect with-reconnect; do
    for i in $(seq 1 "$RUNS"); do
      case $mode in
        without-reconnect) args=(--rows 100000000) ;;
        with-reconnect) args=(--duration 8s --reconnect) ;;
      esac
      report="$work/report.json"
      "$DBLOAD" ingest --url "$run_url" --method "$method" --workers 2 --batch-size 1000 --table fault_matrix \
        --drop-table --seed "$i" --output json --quiet "${args[@]}" >"$report" 2>"$work/stderr.txt" &
      dbload_pid=$!
      sleep 2
      stop_immediately
      if [ "$mode" = with-reconnect ]; then
        sleep 2
        start_again
        wait "$dbload_pid" && code=0 || code=$?
      else
        wait "$dbload_pid" && code=0 || code=$?
        start_again
      fi
      runs=$((runs + 1))
      written=$(sed -n 's/^  "rows_total": \([0-9]*\),$/\1/p' "$report")
      in_doubt=$(sed -n 's/^  "in_doubt_rows": \([0-9]*\),$/\1/p' "$report")
      table=$(count)
      if [ -z "$written" ] || [ -z "$in_doubt" ]; then
        lost_reports=$((lost_reports + 1))
        echo "$method $mode #$i: exit $code, NO REPORT: $(head -c 300 "$work/stderr.txt")"
        continue
      fi
      verdict=ok
      if [ "$table" -lt "$written" ] || [ "$table" -gt $((written + in_doubt)) ]; then
        verdict=MISCOUNT
        miscounts=$((miscounts + 1))
      fi
      echo "$method $mode #$i: exit $code, table $table, written $written, in doubt $in_doubt: $verdict"
    done
  done
done
echo "fault matrix: $runs runs, $miscounts miscounts, $lost_reports without a report"
[ "$miscounts" = 0 ] && [ "$lost_reports" = 0 ]
