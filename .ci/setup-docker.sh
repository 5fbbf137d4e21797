#!/usr/bin/env bash
# Makes a Docker engine answer and builds berth's local base image from Debian
# packages (no image can be pulled here). The image is cached by tag: a second
# run skips the build.
set -euo pipefail
BASE_IMAGE="${BERTH_BASE_IMAGE:-berth-base:bookworm}"

if ! command -v dockerd >/dev/null; then
  apt-get update -qq
  apt-get install -y -qq docker.io
fi
if ! docker info >/dev/null 2>&1; then
  (dockerd >/var/log/dockerd.log 2>&1 &)
  for _ in $(seq 1 60); do docker info >/dev/null 2>&1 && break; sleep 1; done
fi
docker info >/dev/null 2>&1 || { echo "dockerd did not start; see /var/log/dockerd.log"; exit 1; }

if ! docker image inspect "$BASE_IMAGE" >/dev/null 2>&1; then
  command -v debootstrap >/dev/null || { apt-get update -qq; apt-get install -y -qq debootstrap; }
  root=$(mktemp -d)
  debootstrap --variant=minbase --include=passwd,python3,git,patch,ca-certificates bookworm "$root" >/tmp/debootstrap.log 2>&1 \
    || { echo "debootstrap failed; see /tmp/debootstrap.log"; exit 1; }
  tar -C "$root" -c . | docker import - "$BASE_IMAGE"
  rm -rf "$root"
fi
echo "docker ready; base image $BASE_IMAGE"
