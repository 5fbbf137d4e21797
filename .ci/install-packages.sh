#!/usr/bin/env bash
# Debian packages the tests use. Installs only what is missing (fast on a warm machine).
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import pytest' 2>/dev/null || need+=(python3-pytest)
# bench/real-rows.ts: hukkin/tomli's tests import dateutil (without it both tomli rows are refused).
python3 -c 'import dateutil' 2>/dev/null || need+=(python3-dateutil)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v patch >/dev/null || need+=(patch)
# Function-level benchmarks (berth eval): the languages mxeval runs that Debian packages.
command -v go >/dev/null || need+=(golang-go) # also the multilingual examples' Go tasks
command -v ruby >/dev/null || need+=(ruby)
command -v php >/dev/null || need+=(php-cli)
command -v g++ >/dev/null || need+=(g++)
command -v prlimit >/dev/null || need+=(util-linux)
command -v scalac >/dev/null || need+=(scala) # Scala 2.11: MBSCP
perl -MData::Compare -e 1 2>/dev/null || need+=(libdata-compare-perl)
# Kotlin and Java problems (the Kotlin compiler itself comes from npm: kotlin-compiler).
command -v javac >/dev/null || need+=(default-jdk-headless)
# The HTML report and viewer tests drive Debian's Chromium with playwright-core.
command -v chromium >/dev/null || need+=(chromium)
# The queue tests (berth worker, berth run --queue) start their own redis-server on a free port.
command -v redis-server >/dev/null || need+=(redis-server)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq "${need[@]}"
fi
