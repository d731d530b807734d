# shellcheck shell=bash
# Sourced by the bench scripts: a throwaway server from dbload itself, left
# running with --keep and stopped (its directory removed) with `dbload stop`,
# so the benchmarks run against the same server as `dbload ingest` alone.
#
# start_server sets `url` (with the server's password file, and over its
# Unix socket unless TRANSPORT=tcp), `server_dir`, and `work`, a scratch
# directory the server can read files from; all of it goes at exit.

start_server() {
  work=$(mktemp -d /tmp/dbload-bench-XXXXXX)
  chmod 755 "$work"
  trap stop_server EXIT
  local log="$work/server.txt"

  "$DBLOAD" ingest --keep --rows 1 --table warmup --quiet --output json >/dev/null 2>"$log"
  # --keep prints the URL to use (`--url '...?passfile=...'`) and `dbload stop DIR`.
  url=$(sed -n "s/.*--url '\([^']*\)'.*/\1/p" "$log")
  server_dir=$(sed -n 's/^ *dbload stop \(.*\)$/\1/p' "$log")
  if [ -z "$url" ] || [ -z "$server_dir" ]; then
    cat "$log" >&2
    return 1
  fi
  if [ "${TRANSPORT:-socket}" = socket ]; then url="$url&host=$server_dir"; fi
}

stop_server() {
  if [ -n "${server_dir:-}" ]; then "$DBLOAD" stop "$server_dir" >/dev/null || true; fi
  rm -rf "$work"
}
