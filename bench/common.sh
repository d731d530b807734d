# Sourced by the bench scripts: small helpers they share.
#
#   json_field '["qps"]' <report.json      a field of a JSON report
#   median 3 1 2                            the median of numbers
#   need_gnu_time NAME                      /usr/bin/time, installed from the system packages if missing
#   need_pgbench NAME                       pgbench on PATH, or exit 2 saying where it comes from

json_field() { python3 -c "import json,sys; print(json.load(sys.stdin)$1)"; }

median() { printf '%s\n' "$@" | sort -g | awk '{a[NR]=$1} END{print (NR%2) ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2}'; }

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
