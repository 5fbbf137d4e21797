#!/bin/bash
# Harbor-compatible verifier. berth grades natively (docs/multilingual-tasks.md);
# this script repeats its steps for `harbor run` with a coarser reward (the exit status).
set -uo pipefail
mkdir -p /logs/verifier
echo 0 > /logs/verifier/reward.txt
cd /testbed || exit 0
BASE=6bc701d68f4e24b2643ac8935a2e7bd8e0cd8d67
git add -A
git diff --cached --binary --no-renames "$BASE" > /logs/verifier/agent.diff
{
  git diff --cached --name-only --no-renames "$BASE" | grep -iE '(^|/)(test|tests|testing|__tests__|__mocks__|__snapshots__|spec|specs|testdata|e2e)/'
  git diff --cached --name-only --no-renames "$BASE" | grep -E '(^|/)(test_[^/]*\.py|[^/]*_test\.py|conftest\.py|[^/]*_test\.go|[^/]*\.(test|spec)\.(js|jsx|mjs|cjs|ts|tsx|mts|cts)|[^/]*(Test|Tests|IT|Spec)\.(java|kt|kts|scala|groovy|php|cs|swift)|[^/]*_spec\.rb|[^/]*_test\.rb|test_[^/]*\.rb|(test_[^/]*|[^/]*_test|[^/]*_unittest)\.(c|cc|cpp|cxx)|tests\.rs)$'
  sed -n -e 's|^--- a/||p' -e 's|^+++ b/||p' /tests/test_patch.diff
} | sort -u > /logs/verifier/discarded.txt
git reset -q
while IFS= read -r path; do
  if git cat-file -e "$BASE:$path" 2>/dev/null; then git checkout -q "$BASE" -- "$path"; else rm -rf -- "$path"; fi
done < /logs/verifier/discarded.txt
git apply --whitespace=nowarn /tests/test_patch.diff || exit 0
( go test -v ./... ) > /logs/verifier/test-stdout.txt 2>&1 && echo 1 > /logs/verifier/reward.txt
exit 0
