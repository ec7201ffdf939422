#!/bin/bash
# How far the CUDA and NPU worker images build on this host (docs/operations.md, "The CUDA and NPU images"): each image is built
# from its vendor's base; where that stops, the script probes the other sources the Dockerfile
# needs, so the report says every step that would stop it. docs/operations.md records the answer.
#
#   bench/deploy/device_images.sh cuda|npu
#
# The build log goes to ${DEVICE_IMAGES_LOGS:-/tmp/opjudge-device-images}/<image>.log.
set -uo pipefail
cd "$(dirname "$0")/../.."
logs="${DEVICE_IMAGES_LOGS:-/tmp/opjudge-device-images}"
mkdir -p "$logs"

attempt() {  # name, docker build arguments...: build, then say where it stopped
    local name="$1"; shift
    local started=$SECONDS
    if docker build --network host "$@" . >"$logs/$name.log" 2>&1; then
        echo "$name: built in $((SECONDS - started)) s"
        return 0
    fi
    echo "$name: stopped after $((SECONDS - started)) s at: $(grep -E '^Step [0-9]+/[0-9]+ :' "$logs/$name.log" | tail -n1)"
    grep -v '^ ---> \|^Removing intermediate\|DEPRECATED\|buildx\|BuildKit' "$logs/$name.log" | tail -n 1 | sed 's/^/    /'
    return 1
}

probe() {  # what, URL: can this host reach it?
    local code
    code=$(curl -sS -m 20 -o /dev/null -w '%{http_code}' "$2" 2>/dev/null)
    case "$code" in
        2??|3??|401) echo "    reachable:     $1 ($2)" ;;
        *) echo "    NOT reachable: $1 ($2)" ;;
    esac
}

case "${1:-}" in
    cuda)
        attempt worker-cuda -f docker/worker-cuda/Dockerfile -t opjudge-worker-cuda:check
        echo "  what the later steps need:"
        probe "the CUDA base image (nvcc, libcudart): Docker Hub" https://registry-1.docker.io/v2/
        probe "NVIDIA's apt repository (a CUDA toolkit without the image)" \
            https://developer.download.nvidia.com/compute/cuda/repos/ubuntu2404/x86_64/
        probe "Python 3.11 on Ubuntu 24.04: the deadsnakes PPA" \
            https://ppa.launchpadcontent.net/deadsnakes/ppa/ubuntu/dists/noble/Release
        probe "torch for CUDA 13: PyTorch's cu130 index" https://download.pytorch.org/whl/cu130/torch/
        probe "the other Python dependencies: PyPI" https://pypi.org/simple/fastapi/
        ;;
    npu)
        attempt worker-npu -f docker/worker-npu/Dockerfile -t opjudge-worker-npu:check
        echo "  what the later steps need:"
        probe "the CANN base image (toolkit, set_env.sh): Huawei's SWR" https://swr.cn-south-1.myhuaweicloud.com/v2/
        probe "its Docker Hub mirror (ascendai/cann)" https://registry-1.docker.io/v2/
        probe "CANN packages otherwise: Huawei's repository" https://repo.huaweicloud.com/
        probe "torch and torch_npu: PyPI" https://pypi.org/simple/torch-npu/
        ;;
    *) echo "usage: $0 cuda|npu" >&2; exit 2 ;;
esac
