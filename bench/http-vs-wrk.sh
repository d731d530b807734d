#!/usr/bin/env bash
# dbload http against wrk, the fastest common HTTP load generator, on the
# same server: nginx from the system packages on loopback (one worker
# process, `return 200` for every request, POST included), seed 003's
# notify body, the same connections, duration and threads, alternating the
# two tools round by round. Prints requests/s of each and their ratio, the
# client CPU each spent per request, and dbload's peak RSS.
#
#   bench/http-vs-wrk.sh                          # 30 connections, 1 thread, 10 rounds of 5 s each
#   DURATION=60 ROUNDS=1 bench/http-vs-wrk.sh      # memory must stay flat however long
#   CONNECTIONS=100 THREADS=2 bench/http-vs-wrk.sh
#
# One thread each by default: on a 2-core machine nginx needs the other core,
# and a second client thread only competes with it (both tools lose).
#
# Targets (issue 6): dbload >= 0.9 x wrk's requests/s (the median of the
# rounds' ratios, with its IQR), <= 7 us of client CPU per request (0.7
# CPU-s per 100k; GNU time's user+sys of each process, as bench/common.sh
# measures every client), peak RSS <= 32 MiB whatever the duration.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-5}
CONNECTIONS=${CONNECTIONS:-30}
PORT=${PORT:-18668}
THREADS=${THREADS:-1}
BODY='{"data":[{"id":"Room:1","type":"Room","temperature":{"value":23.3,"type":"Number"},"pressure":{"value":720,"type":"Integer"}}]}'

# shellcheck source=bench/common.sh
. bench/common.sh
# shellcheck source=bench/nginx.sh
. bench/nginx.sh
# shellcheck source=bench/table.sh
. bench/table.sh
need_gnu_time http-vs-wrk
if ! command -v wrk >/dev/null; then
  echo "http-vs-wrk: installing wrk from the system packages" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq wrk >/dev/null
fi
need_dbload

work=$(mktemp -d /tmp/dbload-http-bench-XXXXXX)
chmod 755 "$work"
printf '%s' "$BODY" >"$work/notify.json"
cat >"$work/post.lua" <<EOF
wrk.method = "POST"
wrk.body = '$BODY'
wrk.headers["Content-Type"] = "application/json"
EOF
cleanup() { stop_nginx; rm -rf "$work"; }
trap cleanup EXIT
start_nginx "$work" "$PORT"

url="http://127.0.0.1:$PORT/v2/notify"

unit=request
side_wrk() {
  /usr/bin/time -o "$work/wrk.time" -f '%U %S' \
    wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" -s "$work/post.lua" "$url" >"$work/wrk.txt" 2>&1
  record_run wrk "$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$work/wrk.txt")" \
    "$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$work/wrk.txt")" "$work/wrk.time" \
    "$(sed -n 's/^ *Non-2xx or 3xx responses: *\([0-9]*\).*/\1/p' "$work/wrk.txt" | grep . || echo 0)"
}
side_dbload() {
  /usr/bin/time -o "$work/dbload.time" -f '%U %S' \
    "$DBLOAD" http POST "$url" --body-file "$work/notify.json" --vus "$CONNECTIONS" --threads "$THREADS" \
    --duration "${DURATION}s" --quiet --output json >"$work/dbload.json"
  record dbload rss "$(json_field '["client_peak_rss_mib"]' <"$work/dbload.json")"
  record_run dbload "$(json_field '["http_reqs"]' <"$work/dbload.json")" \
    "$(json_field '["http_reqs_per_sec"]' <"$work/dbload.json")" "$work/dbload.time" \
    "$(json_field '["errors"]' <"$work/dbload.json")"
}

load_start=$(load_average)
echo "http-vs-wrk: dbload $("$DBLOAD" --version | cut -d' ' -f2) vs wrk; $(nproc) cores; load average $load_start" >&2
alternate dbload wrk

echo
echo "http-vs-wrk: nginx 1 worker on 127.0.0.1, POST notify body, $CONNECTIONS connections, $THREADS thread(s)," \
  "${DURATION} s; $ROUNDS alternating rounds (medians)"
versus dbload wrk "http POST, $CONNECTIONS connections, req/s" 0.9
cpu_versus dbload wrk "  client CPU per request, us" 7
peak=$(printf '%.1f' "$(figures dbload rss | sort -g | tail -1)")
echo "  dbload peak RSS $peak MiB (target <= 32)"
bench_row "  peak RSS, MiB" "$peak" - - - "<= 32" "$(met "$peak" '<=' 32)"
echo "  load average: $load_start before, $(load_average) after"
