#!/bin/bash
# How far the CUDA and NPU worker images build on a host without their vendors' registries (issue 19
# item 2). Each attempt prints the step it stopped at; docs/operations.md records what this host gave.
#
#   bench/deploy/device_images.sh cuda      # the CUDA image, then again on an Ubuntu 24.04 made here
#   bench/deploy/device_images.sh npu       # the NPU image, then again on the Debian-made Python base
#
# Logs go to ${DEVICE_IMAGES_LOGS:-/tmp/opjudge-device-images}/<attempt>.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
logs="${DEVICE_IMAGES_LOGS:-/tmp/opjudge-device-images}"
mkdir -p "$logs"
ubuntu_tag=opjudge-base/ubuntu:24.04

attempt() {  # name, docker build arguments...: build, then say where it stopped
    local name="$1"; shift
    local started=$SECONDS
    if docker build --network host "$@" . >"$logs/$name.log" 2>&1; then
        echo "$name: built in $((SECONDS - started)) s"
        return 0
    fi
    local last_step
    last_step=$(grep -E '^Step [0-9]+/[0-9]+ :' "$logs/$name.log" | tail -n1)
    echo "$name: stopped after $((SECONDS - started)) s at: ${last_step:-before the first step}"
    grep -v '^ ---> \|^Removing intermediate' "$logs/$name.log" | tail -n 4 | sed 's/^/    /'
    return 1
}

ubuntu_base() {
    docker image inspect "$ubuntu_tag" >/dev/null 2>&1 && return 0
    mmdebstrap --quiet --variant=apt --components=main,universe --include=ca-certificates noble - \
        http://archive.ubuntu.com/ubuntu | docker import - "$ubuntu_tag"
}

case "${1:-}" in
    cuda)
        attempt cuda-registry -f docker/worker-cuda/Dockerfile -t opjudge-worker-cuda:check
        ubuntu_base && attempt cuda-on-ubuntu -f docker/worker-cuda/Dockerfile -t opjudge-worker-cuda:check \
            --build-arg CUDA_IMAGE="$ubuntu_tag"
        ;;
    npu)
        attempt npu-registry -f docker/worker-npu/Dockerfile -t opjudge-worker-npu:check
        bench/deploy/base_images.sh >/dev/null
        attempt npu-on-debian -f docker/worker-npu/Dockerfile -t opjudge-worker-npu:check \
            --build-arg CANN_IMAGE=opjudge-base/python:3.11-bookworm
        ;;
    *) echo "usage: $0 cuda|npu" >&2; exit 2 ;;
esac
