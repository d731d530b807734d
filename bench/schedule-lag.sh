#!/usr/bin/env bash
# How much the open-loop clock itself adds: `dbload timeit -s 'select 1'` at a
# few rates against an idle throwaway server, printing the schedule lag (how
# late each query started against its intended start), the service time and
# the client's CPU per second of run, with the load average beside them (the
# lag is only as good as the machine is quiet).
#
#   bench/schedule-lag.sh                        # 200, 1000 and 5000 queries/s, 5 s each
#   RATES="500 2000" DURATION=10s bench/schedule-lag.sh
#   DBLOAD=./target/debug/dbload bench/schedule-lag.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RATES=${RATES:-200 1000 5000}
DURATION=${DURATION:-5s}
# This tree's release build, brought up to date (a stale binary would be measured otherwise).
if [ -z "${DBLOAD:-}" ]; then
  cargo build --release --quiet
  DBLOAD=./target/release/dbload
fi

# shellcheck source=bench/server.sh
. bench/server.sh
start_server

printf '%8s %10s %10s %10s %10s %12s %8s  %s\n' \
  rate/s achieved lag_p50_ms lag_p99_ms svc_p50_ms cpu_ms_per_s late load_1m
for rate in $RATES; do
  "$DBLOAD" timeit --url "$url" -s 'select 1' --rate "$rate" --duration "$DURATION" \
    --concurrency 1 --quiet --output json >"$work/r.json" || true
  load=$(cut -d' ' -f1 /proc/loadavg)
  python3 - "$work/r.json" "$rate" "$load" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
lag, svc = r["schedule_lag_ms"], r["service_time_ms"]
cpu_per_s = r["client_cpu_s"] / r["wall_s"] * 1000
print(f'{sys.argv[2]:>8} {r["qps"]:10.1f} {lag["p50"]:10.3f} {lag["p99"]:10.3f} '
      f'{svc["p50"]:10.3f} {cpu_per_s:12.1f} {str(r.get("late", "-")):>8}  {sys.argv[3]}')
EOF
done
