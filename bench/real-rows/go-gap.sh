#!/bin/bash
# How much of a Go row's later/raw is compiling the patched code (issue 18, docs/speed.md).
# After `npx tsx bench/real-rows.ts --scratch DIR ...` ran the Go rows, for each: the raw
# folder's test command with its own build cache (warm for the patched code, as the bench's raw
# side runs it), against the same patched folder seen at /tmp/berth-trial/repo (as berth's
# sandbox shows a trial's repository) on a fresh copy of berth's verifier Go build cache
# (go-verify/: the base commit plus what the go tool compiled for each trial's content; the older
# go-build/ where there is none), three rounds each, in milliseconds.
#   bash bench/real-rows/go-gap.sh [DIR]   (DIR default node_modules/.cache/berth-bench-rows)
set -u
S=${1:-node_modules/.cache/berth-bench-rows}
S=$(cd "$S" && pwd)
rows=$(dirname "$0")/rows.json
W=$(mktemp -d /tmp/berth-go-gap-XXXXXX)
trap 'rm -rf "$W"' EXIT
for raw in "$S"/raw/*/repo; do
  [ -f "$raw/go.mod" ] || continue
  row=$(basename "$(dirname "$raw")")
  entry=
  for e in "$S"/berth-cache/installs/*/entry.json; do
    d=$(dirname "$e")
    if grep -q '"goCache": true' "$e" && [ "$(git -C "$d/repo" rev-parse HEAD)" = "$(git -C "$raw" rev-parse HEAD~0 2>/dev/null)" ]; then entry=$d; fi
  done
  if [ -z "$entry" ]; then echo "$row: no warm cache of this row in $S/berth-cache (run the bench on it first)"; continue; fi
  pkgs=$(python3 -c "import json,os,sys; r=[r for r in json.load(open(sys.argv[1]))['rows'] if r['instance_id']==sys.argv[2]][0]; print(' '.join(sorted({'./'+os.path.dirname(t) for t in r['test_files']})))" "$rows" "$row")
  cmd="go test -count=1 -v $pkgs"
  rm -rf "$W/repo" && cp -a "$raw" "$W/repo"
  warm=() cold=()
  for _ in 1 2 3; do
    cached=$entry/go-build; [ -d "$entry/go-verify" ] && cached=$entry/go-verify
    rm -rf "$W/cache" && cp -a "$cached" "$W/cache"
    s=$(date +%s%N)
    (cd "$W/repo" && bwrap --ro-bind / / --dev /dev --proc /proc --tmpfs /tmp --dir "$W" --bind "$W" "$W" \
      --symlink "$W" /tmp/berth-trial --chdir /tmp/berth-trial/repo --setenv PWD /tmp/berth-trial/repo \
      --setenv GOCACHE "$W/cache" --unshare-pid -- bash -c "$cmd" >/dev/null 2>&1)
    cold+=($((($(date +%s%N) - s) / 1000000)))
    s=$(date +%s%N)
    (cd "$raw" && bash -c "$cmd" >/dev/null 2>&1)
    warm+=($((($(date +%s%N) - s) / 1000000)))
  done
  echo "$row: raw (cache warm for the patched code) ${warm[*]} ms; patched code on $(basename "$cached") ${cold[*]} ms"
done
