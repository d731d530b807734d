#!/usr/bin/env bash
# Runs each "never a panic, never a hang" property of src/fuzz.rs for a time
# budget (default 600 s each), in rounds of PROPTEST_CASES cases with a fresh
# seed per round, and prints a line per property: seconds, cases, findings.
#
#   bench/fuzz.sh                      # every property, 10 minutes each
#   SECONDS_EACH=60 bench/fuzz.sh urls # one property, one minute
#
# It uses the debug build on purpose: overflow checks are on there, so an
# arithmetic overflow is a finding rather than a silent wrap. A failing case
# is shrunk by proptest, printed in bench/out/fuzz-NAME.log and saved in
# proptest-regressions/fuzz.txt (commit that file with the fix).
set -euo pipefail
cd "$(dirname "$0")/.."

budget=${SECONDS_EACH:-600}
cases=${PROPTEST_CASES:-2000}
mkdir -p bench/out

bin=$(cargo test --lib --no-run --message-format=json 2>/dev/null |
  python3 -c 'import json,sys
for l in sys.stdin:
    m = json.loads(l)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["lib"]:
        print(m["executable"])')
[ -x "$bin" ] || { echo "fuzz.sh: could not build the unit tests" >&2; exit 2; }
# A copy of its own: a build while it fuzzes replaces cargo's file under it.
cp "$bin" "bench/out/fuzz-$$" && bin="bench/out/fuzz-$$"
trap 'rm -f "$bin"' EXIT

mapfile -t all < <("$bin" --list fuzz::laws:: 2>/dev/null | sed -n 's/^fuzz::laws::\(.*\): test$/\1/p')
wanted=("${@:-${all[@]}}")
# A name that matches no property would "pass" every round with no case run.
for name in "${wanted[@]}"; do
  [[ " ${all[*]} " == *" $name "* ]] || { echo "fuzz.sh: no property $name; there are: ${all[*]}" >&2; exit 2; }
done

status=0
printf '%-28s %8s %10s %s\n' property seconds cases findings
for name in "${wanted[@]}"; do
  log=bench/out/fuzz-$name.log
  : >"$log"
  start=$(date +%s)
  rounds=0
  found=0
  while [ $(($(date +%s) - start)) -lt "$budget" ]; do
    if ! PROPTEST_CASES=$cases "$bin" --exact "fuzz::laws::$name" --test-threads 1 >>"$log" 2>&1; then
      found=$((found + 1))
      status=1
      break # the case is saved; fix it before fuzzing on
    fi
    rounds=$((rounds + 1))
  done
  printf '%-28s %8d %10d %s\n' "$name" $(($(date +%s) - start)) $((rounds * cases)) \
    "$([ $found -eq 0 ] && echo none || echo "FAILED: see $log")"
done
exit $status
