#!/usr/bin/env bash
# dbload http against wrk, the fastest common HTTP load generator, on the
# same server: nginx from the system packages on loopback (one worker
# process, `return 200` for every request, POST included), seed 003's
# notify body, the same connections, duration and threads, alternating the
# two tools round by round. Prints requests/s of each and their ratio, the
# client CPU each spent per 100,000 requests, and dbload's peak RSS.
#
#   bench/http-vs-wrk.sh                          # 30 connections, 15 s, 1 thread, 3 rounds
#   DURATION=60 ROUNDS=1 bench/http-vs-wrk.sh      # memory must stay flat however long
#   CONNECTIONS=100 THREADS=2 bench/http-vs-wrk.sh
#
# One thread each by default: on a 2-core machine nginx needs the other core,
# and a second client thread only competes with it (both tools lose).
#
# Targets (issue 6): dbload >= 0.9 x wrk's requests/s, <= 0.7 CPU-s per
# 100k requests, peak RSS <= 32 MiB whatever the duration.
set -euo pipefail
cd "$(dirname "$0")/.."

DURATION=${DURATION:-15}
CONNECTIONS=${CONNECTIONS:-30}
ROUNDS=${ROUNDS:-3}
PORT=${PORT:-18668}
THREADS=${THREADS:-1}
BODY='{"data":[{"id":"Room:1","type":"Room","temperature":{"value":23.3,"type":"Number"},"pressure":{"value":720,"type":"Integer"}}]}'

# shellcheck source=bench/common.sh
. bench/common.sh
# shellcheck source=bench/nginx.sh
. bench/nginx.sh
# shellcheck source=bench/table.sh
. bench/table.sh
if ! command -v wrk >/dev/null; then
  echo "http-vs-wrk: installing wrk from the system packages" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq wrk >/dev/null
fi
# DBLOAD=path runs that binary; otherwise the release build of this tree.
if [ -z "${DBLOAD:-}" ]; then
  cargo build --release --quiet
  DBLOAD=./target/release/dbload
fi

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
TIMEFORMAT='%U %S'

wrk_rates=() dbload_rates=() wrk_cpu=() dbload_cpu=() rss=()
for round in $(seq "$ROUNDS"); do
  # wrk: requests/s from its summary, CPU from the shell's accounting.
  { time wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" -s "$work/post.lua" "$url" >"$work/wrk.txt" 2>&1; } 2>"$work/wrk.time"
  w_rate=$(sed -n 's/^Requests\/sec: *\([0-9.]*\).*/\1/p' "$work/wrk.txt")
  w_reqs=$(sed -n 's/^ *\([0-9]*\) requests in.*/\1/p' "$work/wrk.txt")
  w_cpu=$(awk '{print $1 + $2}' "$work/wrk.time")
  wrk_rates+=("$w_rate")
  wrk_cpu+=("$(awk -v c="$w_cpu" -v n="$w_reqs" 'BEGIN{printf "%.3f", c / n * 100000}')")

  report=$("$DBLOAD" http POST "$url" --body-file "$work/notify.json" --vus "$CONNECTIONS" --threads "$THREADS" \
    --duration "${DURATION}s" --quiet --output json)
  d_rate=$(echo "$report" | json_field '["http_reqs_per_sec"]')
  d_reqs=$(echo "$report" | json_field '["http_reqs"]')
  d_cpu=$(echo "$report" | json_field '["client_cpu_s"]')
  d_err=$(echo "$report" | json_field '["errors"]')
  dbload_rates+=("$(printf '%.0f' "$d_rate")")
  dbload_cpu+=("$(awk -v c="$d_cpu" -v n="$d_reqs" 'BEGIN{printf "%.3f", c / n * 100000}')")
  rss+=("$(printf '%.1f' "$(echo "$report" | json_field '["client_peak_rss_mib"]')")")
  echo "  round $round: wrk ${w_rate} req/s (${wrk_cpu[-1]} CPU-s/100k), dbload ${dbload_rates[-1]} req/s" \
    "(${dbload_cpu[-1]} CPU-s/100k, ${rss[-1]} MiB, $d_err errors)" >&2
done

w=$(median "${wrk_rates[@]}")
d=$(median "${dbload_rates[@]}")
echo
echo "http-vs-wrk: nginx 1 worker on 127.0.0.1, POST notify body, $CONNECTIONS connections, ${DURATION} s, $ROUNDS rounds (medians)"
printf '  wrk     %10.0f req/s   %6.3f CPU-s per 100k requests (%s threads)\n' "$w" "$(median "${wrk_cpu[@]}")" "$THREADS"
printf '  dbload  %10.0f req/s   %6.3f CPU-s per 100k requests   peak RSS %s MiB (max %s)\n' \
  "$d" "$(median "${dbload_cpu[@]}")" "$(median "${rss[@]}")" "$(printf '%s\n' "${rss[@]}" | sort -g | tail -1)"
ratio=$(awk -v d="$d" -v w="$w" 'BEGIN{printf "%.2f", d / w}')
echo "  ratio   $(printf '%10s' "$ratio") x wrk (target >= 0.90)"
w_cpu=$(median "${wrk_cpu[@]}")
d_cpu=$(median "${dbload_cpu[@]}")
peak=$(printf '%s\n' "${rss[@]}" | sort -g | tail -1)
bench_row "http POST, $CONNECTIONS connections, req/s" "$(printf '%.0f' "$d")" "$(printf '%.0f' "$w") (wrk)" "$ratio" \
  ">= 0.9" "$(met "$ratio" '>=' 0.9)"
bench_row "  client CPU-s per 100k requests" "$d_cpu" "$w_cpu (wrk)" \
  "$(awk -v d="$d_cpu" -v w="$w_cpu" 'BEGIN{printf "%.2f", d / w}')" "<= 0.7 s" "$(met "$d_cpu" '<=' 0.7)"
bench_row "  peak RSS, MiB" "$peak" - - "<= 32" "$(met "$peak" '<=' 32)"
