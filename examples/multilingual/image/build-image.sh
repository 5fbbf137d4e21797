#!/usr/bin/env bash
# Builds the image the multilingual examples run in under Docker (no image can be pulled):
# berth-base:bookworm + Debian's python3-pytest and golang-go (fetched with `apt-get download`
# on this machine, installed with dpkg) + this machine's `node` binary (Node 20; the base
# image already has the libstdc++ it links against). Cached by tag; --rebuild forces.
set -euo pipefail
IMAGE="${BERTH_MULTILINGUAL_IMAGE:-berth-multilingual:bookworm}"
BASE="${BERTH_BASE_IMAGE:-berth-base:bookworm}"
if [ "${1:-}" != "--rebuild" ] && docker image inspect "$IMAGE" >/dev/null 2>&1; then
  echo "image $IMAGE exists"; exit 0
fi
docker image inspect "$BASE" >/dev/null 2>&1 || { echo "no $BASE: run .ci/setup-docker.sh first"; exit 1; }
command -v node >/dev/null || { echo "node not found"; exit 1; }
ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
mkdir -p "$ctx/debs"
# Packages the base lacks: the recursive dependencies of the toolchains minus what it has.
docker run --rm --network none --label dev.berth.managed=1 "$BASE" dpkg-query -W -f '${Package}\n' | sort -u > "$ctx/base.txt"
apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances \
  python3-pytest golang-go | grep -v '^[ <]' | sort -u > "$ctx/all.txt"
# Alternatives of debconf-2.0 that apt-cache lists though the base has debconf.
comm -23 "$ctx/all.txt" "$ctx/base.txt" \
  | grep -vE '^(cdebconf|libdebian-installer4|libnewt0\.52|libslang2|libtextwrap1)$' > "$ctx/need.txt"
(cd "$ctx/debs" && xargs apt-get download -qq < ../need.txt)
cp "$(command -v node)" "$ctx/node"
cat > "$ctx/Dockerfile" <<DOCKERFILE
FROM $BASE
COPY debs /tmp/debs
RUN dpkg -i /tmp/debs/*.deb && rm -rf /tmp/debs
COPY node /usr/local/bin/node
ENV GOFLAGS=-mod=mod GOCACHE=/tmp/go-cache GOPATH=/tmp/go GOTOOLCHAIN=local
DOCKERFILE
docker build -q -t "$IMAGE" --label dev.berth.managed=1 "$ctx"
docker run --rm --network none "$IMAGE" sh -c 'python3 -m pytest --version && go version && node --version'
