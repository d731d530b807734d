# shellcheck shell=bash
# Sourced by the HTTP benchmarks: nginx from the system packages (installed
# if missing) on loopback, one worker process, `return 200` for every
# request (POST included) but GET /files/NAME, which serves DIR/files/NAME,
# with limits that make no client reconnect.
#
#   start_nginx DIR PORT   # sets nginx_pid; its config and logs go in DIR
#   stop_nginx

as_root() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

start_nginx() {
  local dir=$1 port=$2 nginx
  if ! command -v nginx >/dev/null && [ ! -x /usr/sbin/nginx ]; then
    echo "bench: installing nginx from the system packages" >&2
    as_root apt-get update -qq
    DEBIAN_FRONTEND=noninteractive as_root apt-get install -y -qq nginx >/dev/null
  fi
  nginx=$(command -v nginx || echo /usr/sbin/nginx)
  cat >"$dir/nginx.conf" <<CONF
worker_processes 1;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 8192; }
http {
  access_log off;
  keepalive_requests 100000000;
  keepalive_timeout 300s;
  client_body_temp_path $dir/body;
  server {
    listen 127.0.0.1:$port reuseport backlog=4096;
    location / { return 200; }
    location /files/ { root $dir; }
  }
}
CONF
  "$nginx" -c "$dir/nginx.conf" -p "$dir" -g 'daemon off;' &
  nginx_pid=$!
  for _ in $(seq 50); do
    curl -fsS -o /dev/null "http://127.0.0.1:$port/" 2>/dev/null && return
    sleep 0.1
  done
  echo "bench: nginx did not start (see $dir/error.log)" >&2
  return 1
}

stop_nginx() {
  if [ -n "${nginx_pid:-}" ]; then
    kill "$nginx_pid" 2>/dev/null || true
    wait "$nginx_pid" 2>/dev/null || true
    nginx_pid=""
  fi
}
