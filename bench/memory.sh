#!/usr/bin/env bash
# dbload's memory at scale: peak RSS (the report's client_peak_rss_mib, the
# process's own high-water mark, its throwaway server not included) as the
# number of units grows, and the slope per unit from the first point to the
# last. Three parts:
#
#   ingest  workers of `dbload ingest` (measurement model, 10 devices per
#           worker), with --dry-run (generation and encoding only) and
#           against its throwaway PostgreSQL (sized for the workers), where
#           every worker has a batch in flight
#   http    VUs of `dbload http POST` on nginx on loopback (as
#           bench/http-vs-wrk.sh starts it), a fixed body and --body-template
#   timeit  distinct statements of `dbload timeit -s ...`, each run --repeat
#           times, against one throwaway server (bench/server.sh)
#   connections  connections of `dbload timeit -s 'select 1' -c N` for
#           CONNECTION_DURATION on that server: the RSS each added one adds
#   bodies  VUs of `dbload http GET` fetching large answers (BODY_BYTES, 20 MB)
#           from nginx with a status check, which reads no body: bodies are
#           read and dropped, so peak RSS must not grow with VUs x body
#           (issue 29, item 4: 50 VUs of 20 MB stay under 64 MiB)
#
#   bench/memory.sh                                  # every part, default points
#   PARTS="ingest timeit" bench/memory.sh
#   PARTS=bodies BODY_VUS="1 50" bench/memory.sh
#   WORKERS="1 16 64 256" VUS="1 100 500 2000" STATEMENTS="1 200 2000" CONNECTIONS="1 16 64" bench/memory.sh
#   MEASURED=/path/to/other/dbload bench/memory.sh   # another build beside this one
#
# Targets (issues 14 and 18): <= 1 MiB per ingest worker, <= 64 KiB per HTTP
# VU. Memory, not speed: the figures hold on a busy machine too.
#
# Ingest, 2026-11-24 (WORKERS="1 64", load average 19-24): 1,672 KiB per
# worker against the throwaway server, 167 KiB with --dry-run (the build
# before, in the same run: 3,122 and 198 KiB). Of it, 898 KiB is
# the batch in flight as values (10,000 rows x 92 bytes, kept until it is
# acknowledged); the rest is accounted for in docs/ingest.md's Memory section.
#
# Bodies, 2026-11-27 (PARTS=bodies, debug builds, load average 6.5): 50 VUs
# fetching 20 MB answers peaked at 27.2 MiB (1 VU: 25.1), against 983.6 MiB
# when every body was kept whole.
set -euo pipefail
cd "$(dirname "$0")/.."

PARTS=${PARTS:-ingest connections http timeit bodies}
WORKERS=${WORKERS:-1 16 64 256}
VUS=${VUS:-1 100 500 2000}
STATEMENTS=${STATEMENTS:-1 200 2000}
# The throwaway server takes 100 connections.
CONNECTIONS=${CONNECTIONS:-1 16 64}
CONNECTION_DURATION=${CONNECTION_DURATION:-2s}
BATCH=${BATCH:-10000}
# Readings per device: 10 devices per worker, so 50,000 rows (5 batches) per worker.
MEASUREMENTS=${MEASUREMENTS:-5000}
HTTP_DURATION=${HTTP_DURATION:-3s}
BODY_VUS=${BODY_VUS:-1 50}
BODY_BYTES=${BODY_BYTES:-20000000}
REPEAT=${REPEAT:-5}
PORT=${PORT:-18669}
# This tree's release build, brought up to date (a stale binary would be measured otherwise).
if [ -z "${DBLOAD:-}" ]; then
  cargo build --release --quiet
  DBLOAD=./target/release/dbload
fi
builds=("$DBLOAD")
[ -z "${MEASURED:-}" ] || builds+=("$MEASURED")

scratch=$(mktemp -d /tmp/dbload-memory-bench-XXXXXX)
chmod 755 "$scratch"
# shellcheck source=bench/nginx.sh
. bench/nginx.sh
# shellcheck source=bench/table.sh
. bench/table.sh
nginx_pid=""
cleanup() {
  stop_nginx
  if declare -F stop_server >/dev/null; then stop_server; fi
  rm -rf "$scratch"
}
trap cleanup EXIT

# The throwaway server of the timeit and connections parts, started once.
need_server() {
  [ -z "${url:-}" ] || return 0
  # shellcheck source=bench/server.sh
  . bench/server.sh
  start_server
  trap cleanup EXIT
}

rss_of() { python3 -c 'import json,sys; print(json.load(sys.stdin)["client_peak_rss_mib"])'; }

# slope "N1 RSS1" "N2 RSS2": KiB per unit from the first point to the last
# (`-` when either failed or they are the same N).
slope() {
  awk -v f="$1" -v l="$2" 'BEGIN {
    split(f, a, " "); split(l, z, " ")
    if (a[2] == "-" || z[2] == "-" || z[1] == a[1]) print "-"
    else printf "%.0f", (z[2] - a[2]) * 1024 / (z[1] - a[1]) }'
}

# measure LABEL UNIT "N1 N2 ..." ARGS...: runs `dbload ARGS` for each N (the
# word UNITS in ARGS, and in $STDIN, a file to read stdin from, becomes N)
# with every build; prints each build's peak RSS per N, then its slope per
# unit from the first N to the last (a row of `make bench`'s table for the
# first build, against $TARGET_KIB when set).
measure() {
  local label=$1 unit=$2 list=$3
  shift 3
  local n b a line
  local -a first=() last=() args
  echo "$label"
  printf '  %-18s' "${unit}s"
  for b in "${builds[@]}"; do printf ' %14s' "$(basename "$b")"; done
  echo
  for n in $list; do
    line=$(printf '  %-18s' "$n")
    local i=0
    for b in "${builds[@]}"; do
      args=()
      for a in "$@"; do args+=("${a//UNITS/$n}"); done
      local rss=-
      local input=${STDIN:-/dev/null}
      if report=$("$b" "${args[@]}" --quiet --output json <"${input//UNITS/$n}" 2>"$scratch/err.txt"); then
        rss=$(echo "$report" | rss_of)
      else
        echo "  $(basename "$b") failed at $n $unit: $(tail -1 "$scratch/err.txt")" >&2
      fi
      line+=$(printf ' %10s MiB' "$(printf '%.1f' "$rss" 2>/dev/null || echo -)")
      [ -n "${first[i]:-}" ] || first[i]="$n $rss"
      last[i]="$n $rss"
      i=$((i + 1))
    done
    echo "$line"
  done
  line=$(printf '  %-18s' "per $unit")
  for i in "${!builds[@]}"; do
    local kib
    kib=$(slope "${first[i]}" "${last[i]}")
    if [ "$kib" = - ]; then line+=$(printf ' %14s' -); else line+=$(printf ' %10s KiB' "$kib"); fi
  done
  echo "$line"
  kib=$(slope "${first[0]}" "${last[0]}")
  if [ -n "${TARGET_KIB:-}" ] && [ "$kib" != - ]; then
    bench_row "memory per $unit, ${label%% (*}" "$kib KiB" - - - "<= $TARGET_KIB KiB" "$(met "$kib" '<=' "$TARGET_KIB")"
  else
    bench_row "memory per $unit, ${label%% (*}" "$kib KiB" - - - - -
  fi
  echo
}

# Every connection is a file descriptor: 2,000 VUs need more than the usual 1,024.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
echo "dbload memory: peak RSS by scale; $(nproc) cores; load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo

for part in $PARTS; do
  case $part in
  ingest)
    TARGET_KIB=1024 measure "ingest --dry-run (batch $BATCH, 10 devices x $MEASUREMENTS readings per worker)" worker "$WORKERS" \
      ingest --dry-run --workers UNITS --devices 10 --measurements "$MEASUREMENTS" --batch-size "$BATCH"
    TARGET_KIB=1024 measure "ingest into its throwaway PostgreSQL (same rows)" worker "$WORKERS" \
      ingest --workers UNITS --devices 10 --measurements "$MEASUREMENTS" --batch-size "$BATCH"
    ;;
  http)
    [ -n "$nginx_pid" ] || start_nginx "$scratch" "$PORT"
    printf '%s' '{"data":[{"id":"Room:1","type":"Room","temperature":{"value":23.3,"type":"Number"}}]}' \
      >"$scratch/body.json"
    cat >"$scratch/body.j2" <<'EOF'
{"data":[{"id":"{{ entity('Room:', 1000) }}","type":"Room",
  "temperature":{"value":{{ walk('t', 23.3, 0.2) | round(2) }},"type":"Number"},
  "dateObserved":{"value":"{{ now() }}","type":"DateTime"}}]}
EOF
    TARGET_KIB=64 measure "http POST, fixed body, $HTTP_DURATION" VU "$VUS" \
      http POST "http://127.0.0.1:$PORT/v2/notify" --body-file "$scratch/body.json" --vus UNITS \
      --duration "$HTTP_DURATION"
    TARGET_KIB=64 measure "http POST, --body-template, $HTTP_DURATION" VU "$VUS" \
      http POST "http://127.0.0.1:$PORT/v2/notify" --body-template "$scratch/body.j2" --vus UNITS \
      --duration "$HTTP_DURATION"
    ;;
  connections)
    need_server
    measure "timeit -s 'select 1', $CONNECTION_DURATION" connection "$CONNECTIONS" \
      timeit --url "$url" -s 'select 1' --concurrency UNITS --duration "$CONNECTION_DURATION"
    ;;
  timeit)
    need_server
    for n in $STATEMENTS; do
      seq "$n" | sed 's/.*/select & as n;/' >"$scratch/statements-$n.sql"
    done
    STDIN="$scratch/statements-UNITS.sql" measure "timeit, distinct statements, --repeat $REPEAT each" \
      statement "$STATEMENTS" timeit --url "$url" --repeat "$REPEAT"
    ;;
  bodies)
    mkdir -p "$scratch/files"
    head -c "$BODY_BYTES" /dev/urandom >"$scratch/files/body"
    [ -n "$nginx_pid" ] || start_nginx "$scratch" "$PORT"
    # The slope is what each VU adds: the target is a VU's 64 KiB, no part of a body.
    TARGET_KIB=64 measure "http GET of $BODY_BYTES-byte answers, --check status=200, $HTTP_DURATION" VU "$BODY_VUS" \
      http "http://127.0.0.1:$PORT/files/body" --vus UNITS --duration "$HTTP_DURATION" --check status=200
    ;;
  *)
    echo "memory: unknown part $part (ingest, connections, http, timeit, bodies)" >&2
    exit 2
    ;;
  esac
done
