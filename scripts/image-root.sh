#!/bin/sh
# Lays out the files the dbload container image holds, under ROOT: the
# binary, the shared libraries it loads (as ldd lists them), the CA
# certificates (TLS to a server or an API), and a non-root user with a home
# for the results store. The Containerfile's run stage is exactly this
# directory; the integration test `image::` runs dbload from it under chroot,
# so a missing file shows here rather than in a cluster.
#
# Usage: scripts/image-root.sh BINARY ROOT
set -eu

binary=$1
root=$2
uid=10001
ca=/etc/ssl/certs/ca-certificates.crt

mkdir -p "$root/usr/local/bin" "$root/etc/ssl/certs" "$root/tmp" "$root/home/dbload"
cp "$binary" "$root/usr/local/bin/dbload"

# "libc.so.6 => /lib/x86_64-linux-gnu/libc.so.6 (0x...)" and the loader's
# own line, "/lib64/ld-linux-x86-64.so.2 (0x...)"; linux-vdso has no file.
ldd "$binary" | awk '$2 == "=>" && $3 ~ /^\// { print $3 } $1 ~ /^\// { print $1 }' |
  while read -r lib; do
    mkdir -p "$root$(dirname "$lib")"
    cp -L "$lib" "$root$lib"
  done

if [ ! -f "$ca" ]; then
  echo "image-root.sh: no CA bundle at $ca (apt-get install ca-certificates)" >&2
  exit 1
fi
cp -L "$ca" "$root$ca"

echo "root:x:0:0:root:/root:/sbin/nologin" > "$root/etc/passwd"
echo "dbload:x:$uid:$uid:dbload:/home/dbload:/sbin/nologin" >> "$root/etc/passwd"
printf 'root:x:0:\ndbload:x:%s:\n' "$uid" > "$root/etc/group"
# Host names: /etc/hosts first, then DNS (the container runtime provides
# /etc/hosts and /etc/resolv.conf).
echo "hosts: files dns" > "$root/etc/nsswitch.conf"
chmod 1777 "$root/tmp"
chown "$uid:$uid" "$root/home/dbload"
