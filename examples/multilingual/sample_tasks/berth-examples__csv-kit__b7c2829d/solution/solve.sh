#!/bin/bash
# The oracle: applies the gold patch.
set -euo pipefail
cd "${BERTH_WORKDIR:-/testbed}"
git apply --whitespace=nowarn "$(dirname "$0")/fix.patch"
