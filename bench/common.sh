# shellcheck shell=bash
# shellcheck disable=SC2154 # work and url are the sourcing script's (bench/server.sh sets them)
# Sourced by the bench scripts: small helpers they share.
#
#   json_field '["qps"]' <report.json      a field of a JSON report
#   quartiles <numbers                      "Q1 MEDIAN Q3" of numbers, one a line
#   median 3 1 2                            the median of numbers
#   need_gnu_time NAME                      /usr/bin/time, installed from the system packages if missing
#   need_pgbench NAME                       pgbench on PATH, or exit 2 saying where it comes from
#   need_dbload                             $DBLOAD, this tree's release build unless set
#   against_pgbench NAME                    all of the above and a throwaway server
#   load_average                            the 1, 5 and 15 minute load averages
#
# Alternating rounds: on a 2-core machine shared with the server a single
# round's ratio swings from 0.67 to 1.84 (issue 31), so every comparison runs
# its sides in turn, round after round, and reports the median of the ratios
# of the same round with their interquartile range.
#
#   alternate SIDE...            ROUNDS rounds (default 10); each runs the function side_SIDE of every
#                                SIDE in the order given (dbload first, then its peers). A side that
#                                returns 2 is "not available in this build" and skipped from then on
#   timed_dbload SIDE N ARGS...  one run of `dbload ARGS`, N queries per operation it counts, under GNU time
#   timed_pgbench SIDE N ARGS... one run of `pgbench ARGS URL`, N queries per transaction, the same way
#   record_run SIDE OPS RATE TIMEFILE ERRORS   a side's rate and client CPU per op in this round
#   versus A B WHAT              A's rate against B's: medians, ratio and IQR, a row of the table
#   cpu_versus A B WHAT [LIMIT]  the same for client CPU per op; LIMIT `gate`: met when A's median <= B's;
#                                `ratio:R`: met when the median ratio is at most R
#
# Client CPU per operation is the whole client process's user+sys from GNU
# `/usr/bin/time -f '%U %S'` (pgbench's threads, dbload's runtime, connecting
# and preparing included, the same way for every client) divided by the
# operations it counted in that run. Sides keep their figures in
# $work/figures (the scratch directory of bench/server.sh or the script).

json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

# Linear interpolation between the closest ranks (R's type 7, numpy's default).
quartiles() {
  sort -g | awk '
    function q(p,   h, l) { h = (NR - 1) * p + 1; l = int(h); return l >= NR ? a[NR] : a[l] + (h - l) * (a[l + 1] - a[l]) }
    { a[NR] = $1 }
    END { if (NR == 0) print "- - -"; else print q(0.25), q(0.5), q(0.75) }'
}

median() { printf '%s\n' "$@" | quartiles | cut -d' ' -f2; }

load_average() { cut -d' ' -f1-3 /proc/loadavg; }

need_gnu_time() {
  [ -x /usr/bin/time ] && return 0
  echo "$1: installing GNU time from the system packages" >&2
  local sudo=()
  if [ "$(id -u)" -ne 0 ]; then sudo=(sudo); fi
  "${sudo[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq time >/dev/null
}

need_pgbench() {
  command -v pgbench >/dev/null && return 0
  echo "$1: pgbench not found (it comes with the PostgreSQL client packages)" >&2
  exit 2
}

# need_dbload: DBLOAD=path runs that binary; otherwise this tree's release
# build, brought up to date (a stale binary would be measured otherwise).
need_dbload() {
  [ -z "${DBLOAD:-}" ] || return 0
  cargo build --release --quiet
  DBLOAD=./target/release/dbload
}

# against_pgbench NAME: what a comparison with pgbench needs: GNU time,
# pgbench, dbload, the table, and a throwaway server (bench/server.sh sets
# url and work).
against_pgbench() {
  need_gnu_time "$1"
  need_pgbench "$1"
  need_dbload
  # shellcheck source=bench/server.sh
  . bench/server.sh
  # shellcheck source=bench/table.sh
  . bench/table.sh
  start_server
}

ROUNDS=${ROUNDS:-10}

# The round under way, for the lines a side prints.
round=0
available() { [ ! -e "$work/figures/$1.unavailable" ]; }

# alternate SIDE...: a comparison's rounds, its figures afresh. A side's
# function exits 0 with its figures recorded, 2 when this build cannot run it
# (from then on it is skipped, and versus says so), anything else to stop.
alternate() {
  rm -rf "${work:?}/figures"
  mkdir -p "$work/figures"
  local side status
  for round in $(seq "$ROUNDS"); do
    for side in "$@"; do
      available "$side" || continue
      status=0
      "side_$side" || status=$?
      case $status in
      0) ;;
      2) touch "$work/figures/$side.unavailable" ;;
      *) return "$status" ;;
      esac
    done
  done
}

record() { echo "$3" >>"$work/figures/$1.$2"; }
figures() { cat "$work/figures/$1.$2"; }
median_of() { figures "$1" "$2" | quartiles | cut -d' ' -f2; }

# ratios A B FIGURE: A's figure over B's in the same round, one a line.
ratios() { paste "$work/figures/$1.$3" "$work/figures/$2.$3" | awk '{ printf "%.4f\n", $1 / $2 }'; }

# record_run SIDE OPS RATE TIMEFILE ERRORS: TIMEFILE holds GNU time's `%U %S`
# on its last line (above it, "Command exited with non-zero status 1" when
# some operations failed); `-` for a side with no client of its own.
record_run() {
  local side=$1 ops=$2 rate=$3 timefile=$4 errors=$5 cpu=""
  record "$side" rate "$rate"
  if [ "$timefile" != - ]; then
    cpu=$(tail -1 "$timefile" | awk -v n="$ops" '{ printf "%.3f", ($1 + $2) / n * 1e6 }')
    record "$side" cpu "$cpu"
    # The kernel's share grows with the machine's load for every client alike; user time is the client's own.
    record "$side" user "$(tail -1 "$timefile" | awk -v n="$ops" '{ printf "%.3f", $1 / n * 1e6 }')"
    cpu=$(printf '%8s us client CPU per %s' "$cpu" "$unit")
  fi
  printf '  round %s %-16s %12.0f %s/s, %s errors  %s\n' "$round" "$side:" "$rate" "${unit:?}" "$errors" "$cpu" >&2
}

# timed_dbload SIDE N ARGS...: N is the queries in one operation of dbload's
# count (a script run of N statements; 1 for statements). Exit 2 is a flag
# or a script this build does not take: the side is not available.
timed_dbload() {
  local side=$1 per=$2 status=0
  shift 2
  /usr/bin/time -o "$work/$side.time" -f '%U %S' "$DBLOAD" "$@" --output json --no-results --quiet \
    >"$work/$side.json" 2>"$work/$side.err" || status=$?
  case $status in
  0 | 1) ;;
  2)
    echo "  round $round $side: not available in this build: $(head -1 "$work/$side.err")" >&2
    return 2
    ;;
  *)
    cat "$work/$side.err" >&2
    return "$status"
    ;;
  esac
  local count qps
  count=$(json_field '["count"]' <"$work/$side.json")
  qps=$(json_field '["qps"]' <"$work/$side.json")
  record_run "$side" "$((count * per))" "$(awk -v r="$qps" -v n="$per" 'BEGIN { print r * n }')" \
    "$work/$side.time" "$(json_field '["errors"]' <"$work/$side.json")"
}

# timed_pgbench SIDE N ARGS...: pgbench's rate is its "tps (without initial
# connection time)", N queries per transaction (pgbench counts a script run).
timed_pgbench() {
  local side=$1 per=$2
  shift 2
  /usr/bin/time -o "$work/$side.time" -f '%U %S' pgbench "$@" "$url" >"$work/$side.txt" 2>&1 ||
    { cat "$work/$side.txt" >&2; return 1; }
  local tps count failed
  tps=$(sed -n 's/^tps = \([0-9.]*\) (without initial connection time)/\1/p' "$work/$side.txt")
  count=$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$work/$side.txt")
  failed=$(sed -n 's/^number of failed transactions: \([0-9]*\).*/\1/p' "$work/$side.txt")
  record_run "$side" "$((count * per))" "$(awk -v r="$tps" -v n="$per" 'BEGIN { print r * n }')" \
    "$work/$side.time" "${failed:-0}"
}

# versus A B WHAT [TARGET]: A's median rate against B's; the ratio is the
# median of A's rate over B's round by round, with its IQR (target: the ratio
# at least TARGET, 1.0 unless given).
versus() {
  local a=$1 b=$2 what=$3 target=${4:-1.0} peer
  peer=$(printf '%.0f' "$(median_of "$b" rate)")
  if ! available "$a"; then
    printf '  %-44s %s: not available in this build; %s %s %s/s\n' "$what" "$a" "$b" "$peer" "$unit"
    bench_row "$what" "not available in this build" "$peer ($b)" - - ">= $target x" n/a
    return
  fi
  local mine q1 ratio q3
  mine=$(printf '%.0f' "$(median_of "$a" rate)")
  read -r q1 ratio q3 < <(ratios "$a" "$b" rate | quartiles)
  printf '  %-44s %s %s %s/s, %s %s; ratio %.2f x, IQR %.2f-%.2f (target >= %s)\n' \
    "$what" "$a" "$mine" "$unit" "$b" "$peer" "$ratio" "$q1" "$q3" "$target"
  bench_row "$what" "$mine" "$peer ($b)" "$(printf '%.2f' "$ratio")" "$(printf '%.2f-%.2f' "$q1" "$q3")" \
    ">= $target x" "$(met "$ratio" '>=' "$target")"
}

# cpu_versus A B WHAT [LIMIT]: A's median client CPU per op against B's (and
# the user part of each), and the median of their ratio round by round with
# its IQR. LIMIT `gate` (issue 31's gate for `select 1`): met when A's median
# is at or below B's; `ratio:R` (issue 33's k6 limit): met when the median of
# the ratios is at most R; a number: met when A's median is at most that many us.
cpu_versus() {
  local a=$1 b=$2 what=$3 limit=${4:-} mine peer q1 ratio q3 target=- ok=-
  available "$a" || return 0
  mine=$(printf '%.2f' "$(median_of "$a" cpu)")
  peer=$(printf '%.2f' "$(median_of "$b" cpu)")
  read -r q1 ratio q3 < <(ratios "$a" "$b" cpu | quartiles)
  case $limit in
  '') ;;
  gate) target="<= $b's" ok=$(met "$mine" '<=' "$peer") ;;
  ratio:*) target="<= ${limit#ratio:} x" ok=$(met "$ratio" '<=' "${limit#ratio:}") ;;
  *) target="<= $limit us" ok=$(met "$mine" '<=' "$limit") ;;
  esac
  printf '  %-44s %s %s us (user %.2f), %s %s us (user %.2f); ratio %.2f x, IQR %.2f-%.2f%s\n' \
    "$what" "$a" "$mine" "$(median_of "$a" user)" "$b" "$peer" "$(median_of "$b" user)" \
    "$ratio" "$q1" "$q3" "${limit:+; target $target, met: $ok}"
  bench_row "$what" "$mine" "$peer ($b)" "$(printf '%.2f' "$ratio")" "$(printf '%.2f-%.2f' "$q1" "$q3")" \
    "$target" "$ok"
}
