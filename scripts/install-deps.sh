#!/usr/bin/env bash
# Install the Debian 12 packages stackclock needs to build, test and
# benchmark (see README "Dependencies").  Idempotent; needs root.
set -eu
pkgs="build-essential libelf-dev libdw-dev libzstd-dev zlib1g-dev
      libdebuginfod-dev liblzma-dev debuginfod xz-utils
      libprotobuf-c-dev protobuf-c-compiler golang-go valgrind
      clang libclang-rt-14-dev python3 linux-perf uftrace dwz chromium libzydis-dev"
missing=
for p in $pkgs; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing="$missing $p"
done
if [ -n "$missing" ]; then
	echo "installing:$missing"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq $missing >/dev/null
fi
# Syscall tracepoints live in tracefs; Debian does not always mount it.
if [ ! -d /sys/kernel/tracing/events ] && [ "$(id -u)" = 0 ]; then
	mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null || true
fi
