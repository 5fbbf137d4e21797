#!/usr/bin/env bash
# Debian packages the tests use. Installs only what is missing (fast on a warm machine).
set -euo pipefail
need=()
command -v git >/dev/null || need+=(git)
command -v python3 >/dev/null || need+=(python3)
python3 -c 'import pytest' 2>/dev/null || need+=(python3-pytest)
command -v bwrap >/dev/null || need+=(bubblewrap)
command -v patch >/dev/null || need+=(patch)
command -v javac >/dev/null || need+=(default-jdk-headless)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq
  apt-get install -y -qq "${need[@]}"
fi
