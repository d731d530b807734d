#!/usr/bin/env bash
# `dbload k6 run` against the same load given as `dbload http` flags, on
# nginx on loopback (bench/nginx.sh, as bench/http-vs-wrk.sh starts it):
# issue 33's two limits for running k6 scripts unchanged.
#
#   cpu     a minimal script (`http.post` of a fixed body with its
#           Content-Type, nothing else) against `dbload http POST` with that
#           body and header, the same VUs, threads and duration, in
#           alternating rounds: client CPU per request of each (GNU time's
#           user+sys of the process over the requests its report counts) and
#           their ratio. Limit: k6 <= 1.5 x http.
#   memory  the notify-shaped script tests/fixtures/k6/notify.js (five checked
#           JSON posts built in JavaScript, then sleep(0.01)) at 100 and at
#           2,000 VUs: peak RSS (the report's client_peak_rss_mib) and
#           (RSS at 2,000 - RSS at 100) / 1,900 per VU. Limit: <= 1 MiB.
#
#   bench/k6.sh                                   # both parts: 30 VUs, 1 thread, 10 rounds of 5 s
#   PARTS=cpu ROUNDS=3 bench/k6.sh
#   PARTS=memory MEMORY_VUS="100 1000 2000" bench/k6.sh
#
# One thread by default, as bench/http-vs-wrk.sh: on 2 cores nginx needs the other.
set -euo pipefail
cd "$(dirname "$0")/.."

PARTS=${PARTS:-cpu memory}
DURATION=${DURATION:-5}
VUS=${VUS:-30}
THREADS=${THREADS:-1}
MEMORY_VUS=${MEMORY_VUS:-100 2000}
MEMORY_DURATION=${MEMORY_DURATION:-5}
PORT=${PORT:-18670}
# The notify-shaped script: one copy, which tests/integration/k6.rs runs too.
NOTIFY=tests/fixtures/k6/notify.js
BODY='{"data":[{"id":"Room:1","type":"Room","temperature":{"value":23.3,"type":"Number"},"pressure":{"value":720,"type":"Integer"}}]}'

# shellcheck source=bench/common.sh
. bench/common.sh
# shellcheck source=bench/nginx.sh
. bench/nginx.sh
# shellcheck source=bench/table.sh
. bench/table.sh
need_gnu_time k6
need_dbload

work=$(mktemp -d /tmp/dbload-k6-bench-XXXXXX)
chmod 755 "$work"
printf '%s' "$BODY" >"$work/body.json"
cat >"$work/minimal.js" <<EOF
import http from 'k6/http';

const body = '$BODY';
const params = { headers: { 'Content-Type': 'application/json' } };

export default function () {
  http.post(__ENV.URL, body, params);
}
EOF
cleanup() { stop_nginx; rm -rf "$work"; }
trap cleanup EXIT
start_nginx "$work" "$PORT"
# Every connection is a file descriptor: 2,000 VUs need more than the usual 1,024.
ulimit -n "$(ulimit -Hn)" 2>/dev/null || true

url="http://127.0.0.1:$PORT/v2/notify"
load_start=$(load_average)
echo "k6: dbload $("$DBLOAD" --version | cut -d' ' -f2); $(nproc) cores; load average $load_start" >&2

# run_side SIDE FAILED ARGS...: one run of `dbload ARGS` under GNU time, its
# requests and rate from the report, FAILED the report's field of failures
# (exit 1, some failed, still counts).
run_side() {
  local side=$1 failed=$2 status=0
  shift 2
  /usr/bin/time -o "$work/$side.time" -f '%U %S' "$DBLOAD" "$@" --quiet --output json --no-results \
    >"$work/$side.json" 2>"$work/$side.err" || status=$?
  if [ "$status" -gt 1 ]; then
    cat "$work/$side.err" >&2
    return 1
  fi
  record_run "$side" "$(json_field '["http_reqs"]' <"$work/$side.json")" \
    "$(json_field '["http_reqs_per_sec"]' <"$work/$side.json")" "$work/$side.time" \
    "$(json_field "[\"$failed\"]" <"$work/$side.json")"
}

unit=request
side_k6() { run_side k6 iterations_failed k6 run -u "$VUS" -d "${DURATION}s" --threads "$THREADS" -e "URL=$url" "$work/minimal.js"; }
side_http() {
  run_side http errors http POST "$url" --body-file "$work/body.json" -H 'Content-Type: application/json' \
    --vus "$VUS" --threads "$THREADS" --duration "${DURATION}s"
}

for part in $PARTS; do
  case $part in
  cpu)
    alternate k6 http
    echo
    echo "k6 cpu: nginx 1 worker on 127.0.0.1, minimal http.post script against dbload http, $VUS VUs," \
      "$THREADS thread(s), ${DURATION} s; $ROUNDS alternating rounds (medians)"
    echo "  requests/s: k6 run $(printf '%.0f' "$(median_of k6 rate)"), http $(printf '%.0f' "$(median_of http rate)")"
    cpu_versus k6 http "k6 run minimal script, client CPU per request, us" ratio:1.5
    ;;
  memory)
    echo
    echo "k6 memory: notify-shaped script, ${MEMORY_DURATION} s, peak RSS by VUs"
    first="" last=""
    for n in $MEMORY_VUS; do
      "$DBLOAD" k6 run -u "$n" -d "${MEMORY_DURATION}s" -e "QL_URL=http://127.0.0.1:$PORT" "$NOTIFY" \
        --quiet --output json --no-results >"$work/memory.json" 2>"$work/memory.err" ||
        { [ $? -eq 1 ] || { cat "$work/memory.err" >&2; exit 1; }; }
      rss=$(json_field '["client_peak_rss_mib"]' <"$work/memory.json")
      printf '  %6s VUs  %8.1f MiB peak RSS, %s requests\n' "$n" "$rss" "$(json_field '["http_reqs"]' <"$work/memory.json")"
      [ -n "$first" ] || first="$n $rss"
      last="$n $rss"
    done
    per=$(awk -v f="$first" -v l="$last" 'BEGIN { split(f, a, " "); split(l, z, " ")
      if (z[1] == a[1]) print "-"; else printf "%.3f", (z[2] - a[2]) / (z[1] - a[1]) }')
    echo "  memory per VU: $per MiB (limit <= 1 MiB, met: $(met "$per" '<=' 1))"
    bench_row "memory per VU, k6 run notify script" "$per MiB" - - - "<= 1 MiB" "$(met "$per" '<=' 1)"
    ;;
  *)
    echo "k6: unknown part $part (cpu, memory)" >&2
    exit 2
    ;;
  esac
done
echo "  load average: $load_start before, $(load_average) after"
