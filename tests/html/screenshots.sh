#!/usr/bin/env bash
# Renders the HTML page of a small run of each dbload command, then takes a
# headless Chromium screenshot of each page at desktop width (1400 px) and at
# phone width (390 px), so that a change to the page can be looked at before
# it is shared. Not part of `make test`: it needs Chromium and eyes.
#
#   tests/html/screenshots.sh [OUT_DIR]     (default: target/html-screenshots)
#
# Needs: a built dbload (DBLOAD, default target/debug/dbload), PostgreSQL's
# binaries and psql (as for the throwaway target), python3 (a loopback HTTP server for
# `dbload http`) and Chromium (CHROMIUM, default chromium; on Debian
# `apt-get install chromium`). Everything it starts listens on 127.0.0.1 and
# is stopped at exit. Open OUT_DIR/*.html in a browser, or look at the PNGs.
set -euo pipefail

here=$(cd "$(dirname "$0")/../.." && pwd)
dbload=${DBLOAD:-$here/target/debug/dbload}
chromium=${CHROMIUM:-chromium}
out=${1:-$here/target/html-screenshots}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d)
server_dir=""
http_pid=""

cleanup() {
    [ -n "$http_pid" ] && kill "$http_pid" 2>/dev/null || true
    [ -n "$server_dir" ] && "$dbload" stop "$server_dir" >/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

q=(--quiet --no-results)

# One throwaway PostgreSQL for every page, kept between the commands.
echo "starting a throwaway PostgreSQL and ingesting into it (its page: ingest.html)"
"$dbload" ingest --rows 50000 --workers 2 --batch-size 2000 --rate 25000 --keep \
    --html "$out/ingest.html" "${q[@]}" >"$work/ingest.txt" 2>&1
url=$(sed -n "s/^  dbload \.\.\. --url '\(.*\)'$/\1/p" "$work/ingest.txt")
server_dir=$(sed -n 's/^  dbload stop \(.*\)$/\1/p' "$work/ingest.txt")
[ -n "$url" ] && [ -n "$server_dir" ] || { cat "$work/ingest.txt"; exit 1; }

cat >"$work/queries.yml" <<'EOF'
- name: device_max
  query: select max(m1) from measurement where device_id = $1
  ratio: 0.7
  params: [{int: [0, 19]}]
- name: count
  query: select count(*) from measurement
  ratio: 0.3
EOF
cat >"$work/mixed.yml" <<EOF
duration: 6s
ingest:
  rate: 2000
  batch_size: 200
  table: mixed
workloads:
  - name: dashboards
    file: $work/queries.yml
    concurrency: 2
EOF

# The server's part (issue 34) on the ingest's charts: a requested
# checkpoint 2 s in, and the table locked by another session from 4 s to
# 6 s, so the throughput dips, the band shows the Lock waits and the dip's
# sentence names them.
echo "ingest with a checkpoint and a lock (its page: server.html)"
"$dbload" ingest --url "$url" --table explained --drop-table --duration 10s --rate 20000 --batch-size 1000 \
    --html "$out/server.html" "${q[@]}" >"$work/server.txt" 2>&1 &
ingesting=$!
sleep 2 && psql "$url" -qc 'CHECKPOINT'
sleep 2 && psql "$url" -qc 'BEGIN; LOCK TABLE explained IN ACCESS EXCLUSIVE MODE; SELECT pg_sleep(2); COMMIT' >/dev/null
wait "$ingesting" || { cat "$work/server.txt"; exit 1; }

echo "timeit, workload, run, insert-fake-data, export, insert-json, compare, sweep"
# Stages: the VUs chart under the throughput.
"$dbload" timeit --url "$url" -s "select max(m1) from measurement" --stages 2s:1,0s:4,3s:4 \
    --html "$out/timeit.html" "${q[@]}" >/dev/null
"$dbload" workload "$work/queries.yml" --url "$url" --duration 3s --rate 200 --explain \
    --html "$out/workload.html" "${q[@]}" >/dev/null
"$dbload" run "$work/mixed.yml" --url "$url" --baseline --html "$out/run.html" "${q[@]}" >/dev/null
psql "$url" -qc 'CREATE TABLE fake (id bigserial PRIMARY KEY, name text, email text, score float8, seen timestamptz)'
"$dbload" insert-fake-data --url "$url" --table fake --num-records 20000 \
    --html "$out/insert-fake-data.html" "${q[@]}" >/dev/null
"$dbload" export --url "$url" --table measurement --out "$work/export" --workers 2 \
    --html "$out/export.html" "${q[@]}" >/dev/null
psql "$url" -qc 'CREATE TABLE json_copy (LIKE measurement)'
"$dbload" insert-json --url "$url" --table json_copy "$work"/export/*.json \
    --html "$out/insert-json.html" "${q[@]}" >/dev/null
# Four runs a side: enough for the compare's verdicts, coloured.
for b in 1000 5000; do
    "$dbload" ingest --url "$url" --rows 40000 --batch-size $b --table cmp --drop-table --runs 4 \
        --report "$work/batch-$b.json" "${q[@]}" >/dev/null
done
"$dbload" compare "$work/batch-1000.json" "$work/batch-5000.json" --html "$out/compare.html" >/dev/null
"$dbload" sweep --vary batch-size=100,1000,10000 --html "$out/sweep.html" --no-results -- \
    ingest --url "$url" --rows 20000 --table sweep >/dev/null 2>&1
# The search for the most a setup sustains, its SLO a line on the chart.
"$dbload" sweep --find-max-rate --slo 'p99_ms < 50' --start-rate 400 --max-rate 25600 \
    --html "$out/find-max-rate.html" --no-results -- \
    timeit --url "$url" -s "select 1" --duration 2s >/dev/null 2>&1

# A loopback HTTP server for `dbload http`: python's, on a port the OS picks.
echo "http"
python3 -c '
import http.server, socketserver, sys
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
with socketserver.ThreadingTCPServer(("127.0.0.1", 0), Quiet) as s:
    print(s.server_address[1], flush=True)
    s.serve_forever()
' >"$work/http.port" &
http_pid=$!
for _ in $(seq 50); do [ -s "$work/http.port" ] && break; sleep 0.1; done
"$dbload" http GET "http://127.0.0.1:$(cat "$work/http.port")/" --vus 2 --duration 3s \
    --check status=200 --html "$out/http.html" "${q[@]}" >/dev/null

echo "screenshots in $out"
for page in "$out"/*.html; do
    name=$(basename "$page" .html)
    for size in 1400,7000 390,12000; do
        "$chromium" --headless --no-sandbox --disable-gpu --hide-scrollbars \
            --screenshot="$out/$name-${size%%,*}.png" --window-size=$size "file://$page" >/dev/null 2>&1
    done
    echo "  $name: $name-1400.png $name-390.png"
done
