#!/usr/bin/env bash
# Installs what `make demo` and `make test` need and a fresh Debian/Ubuntu
# machine with Rust may lack: PostgreSQL server binaries (for the throwaway
# target and the tests), the CA certificates and the rustfmt/clippy components.
set -euo pipefail

have_pg_server() {
  command -v initdb >/dev/null && command -v postgres >/dev/null && return 0
  if command -v pg_config >/dev/null; then
    local bindir; bindir=$(pg_config --bindir)
    [ -x "$bindir/initdb" ] && [ -x "$bindir/postgres" ] && return 0
  fi
  compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null
}

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

if ! have_pg_server; then
  echo "ensure-deps: installing PostgreSQL server binaries (apt-get install postgresql)" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq postgresql >/dev/null
fi

# The CA bundle the container image holds (scripts/image-root.sh, and the
# test that runs dbload from its files).
if [ ! -f /etc/ssl/certs/ca-certificates.crt ]; then
  echo "ensure-deps: installing the CA certificates (apt-get install ca-certificates)" >&2
  as_root apt-get update -qq
  DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq ca-certificates >/dev/null
fi

if command -v rustup >/dev/null; then
  for c in rustfmt clippy; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
  done
fi
