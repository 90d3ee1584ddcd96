#!/usr/bin/env bash
# Install the Debian 12 packages stackclock needs to build, test and
# benchmark (see README "Dependencies").  Idempotent; needs root.
set -eu
pkgs="build-essential libelf-dev libdw-dev libzstd-dev zlib1g-dev libiberty-dev
      libdebuginfod-dev liblzma-dev debuginfod xz-utils
      libprotobuf-c-dev protobuf-c-compiler golang-go valgrind
      clang libclang-rt-14-dev gcc-multilib python3 linux-perf uftrace dwz chromium libzydis-dev curl
      lld"
# t108 builds a Rust program with whatever rustc is on PATH (rustup's or
# Debian's); Debian's only when there is none.
command -v rustc >/dev/null || pkgs="$pkgs rustc"
# npm fetches speedscope (below); Debian's only when there is none (a
# nodejs from elsewhere may bring its own).
command -v npm >/dev/null || pkgs="$pkgs npm"
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
# Lua 5.4's source, from Debian's archive (t705's exactness oracle,
# bench/accuracy.sh), checked against its known digest.
LUA_TGZ=${HOME:-/root}/.cache/stackclock-bench/lua5.4_5.4.4.orig.tar.gz
LUA_SHA256=164c7849653b80ae67bec4b7473b884bf5cc8d2dca05653475ec2ed27b9ebf61
if [ ! -s "$LUA_TGZ" ]; then
	mkdir -p "$(dirname "$LUA_TGZ")"
	if curl -sfL -o "$LUA_TGZ.tmp" http://deb.debian.org/debian/pool/main/l/lua5.4/lua5.4_5.4.4.orig.tar.gz &&
		echo "$LUA_SHA256  $LUA_TGZ.tmp" | sha256sum -c --quiet; then
		mv "$LUA_TGZ.tmp" "$LUA_TGZ"
	else
		rm -f "$LUA_TGZ.tmp"
		echo "could not fetch Lua's source from deb.debian.org (t705 will fail)" >&2
	fi
fi
# speedscope, from the npm registry (t511 loads the Chrome trace export in
# it, in headless Chromium): its release files, unpacked once.
SPEEDSCOPE_DIR=${HOME:-/root}/.cache/stackclock-bench/speedscope
SPEEDSCOPE_VERSION=1.25.0
if [ ! -s "$SPEEDSCOPE_DIR/dist/release/index.html" ]; then
	tmp=$(mktemp -d)
	if command -v npm >/dev/null &&
		(cd "$tmp" && npm pack --silent "speedscope@$SPEEDSCOPE_VERSION" >/dev/null 2>&1) &&
		mkdir -p "$SPEEDSCOPE_DIR" &&
		tar -xzf "$tmp/speedscope-$SPEEDSCOPE_VERSION.tgz" -C "$SPEEDSCOPE_DIR" --strip-components=1 &&
		[ -s "$SPEEDSCOPE_DIR/dist/release/index.html" ]; then
		:
	else
		echo "could not fetch speedscope $SPEEDSCOPE_VERSION with 'npm pack' (t511 skips its check in speedscope)" >&2
	fi
	rm -rf "$tmp"
fi
