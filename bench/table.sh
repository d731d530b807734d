# shellcheck shell=bash
# Sourced by the bench scripts: `bench_row` adds one figure to the table
# that `make bench` (bench/all.sh) prints, when BENCH_TABLE names the file
# it collects them in; run alone, a script prints only its own output.
#
#   bench_row FIGURE DBLOAD PEER RATIO IQR TARGET MET
#
# FIGURE what was measured; DBLOAD dbload's figure; PEER the peer's or the
# limit's (`-` when there is none); RATIO dbload's to the peer's (`-`), the
# median of the rounds' ratios; IQR its interquartile range over the rounds
# (`-`); TARGET what the issue asks (`>= 1.0 x`, `<= 1 MiB`); MET yes, no,
# or n/a (the figure could not be measured with this build).
bench_row() {
  [ -n "${BENCH_TABLE:-}" ] || return 0
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >>"$BENCH_TABLE"
}

# met VALUE OP LIMIT: yes when `VALUE OP LIMIT` holds (OP is >= or <=).
met() {
  awk -v v="$1" -v l="$3" -v op="$2" 'BEGIN { ok = (op == ">=") ? v >= l : v <= l; print ok ? "yes" : "no" }'
}
