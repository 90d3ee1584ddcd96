#!/usr/bin/env bash
# Quick start: install what is missing, build, profile the bundled demo
# with the instrumentation method and print its report.
set -eu
cd "$(dirname "$0")/.."
scripts/install-deps.sh
make -j"$(nproc)" >/dev/null
cc -O2 -g -finstrument-functions -pthread demo/demo.c -o build/demo
build/stackclock record -m instrument -o build/demo.data -- build/demo
build/stackclock report -i build/demo.data
