#!/bin/bash
# Base images made from Debian's archive, for hosts that cannot pull from a registry
# (docs/operations.md, "The CUDA and NPU images on a host without their registries").
#
#   bench/deploy/base_images.sh            # builds the three tags below unless they exist
#
# opjudge-base/python:3.11-bookworm  Debian bookworm's python3 (3.11) in a venv on PATH, standing in
#                                    for python:3.11-slim-bookworm (build argument PYTHON_IMAGE)
# opjudge-base/postgres:15-bookworm  Debian's postgresql-15 with an entrypoint that honours
#                                    POSTGRES_USER/PASSWORD/DB like the official image (OPJUDGE_POSTGRES_IMAGE)
# opjudge-base/redis:7-bookworm      Debian's redis-server 7.0 (OPJUDGE_REDIS_IMAGE)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
python_tag=opjudge-base/python:3.11-bookworm
postgres_tag=opjudge-base/postgres:15-bookworm
redis_tag=opjudge-base/redis:7-bookworm
# The CA bundle pip and apt in the builds trust: this host's, which knows its TLS-inspecting proxy.
ca_bundle="${HOST_CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}"
ca=/usr/local/share/opjudge-host-ca.pem
path=/opt/python/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin

have() { docker image inspect "$1" >/dev/null 2>&1; }

if ! have "$python_tag"; then
    # --variant=apt: essential packages plus apt; the venv gives `python` and `pip` as the official image does;
    # tzdata as there (kombu reads the UTC zone at import).
    mmdebstrap --quiet --variant=apt --include=python3,python3-venv,ca-certificates,tzdata \
        --customize-hook='chroot "$1" python3 -m venv /opt/python' \
        --customize-hook="upload $ca_bundle /usr/local/share/opjudge-host-ca.pem" \
        --customize-hook='rm -rf "$1"/var/lib/apt/lists/* "$1"/var/cache/apt/*' \
        bookworm - "$mirror" \
      | docker import --change "ENV PATH=$path" --change 'ENV LANG=C.UTF-8' \
            --change "ENV PIP_CERT=$ca" --change "ENV SSL_CERT_FILE=$ca" --change "ENV REQUESTS_CA_BUNDLE=$ca" \
            --change 'CMD ["python3"]' \
            - "$python_tag"
fi
if ! have "$postgres_tag"; then
    docker build --network host -q -t "$postgres_tag" --build-arg BASE="$python_tag" -f "$here/postgres.Dockerfile" "$here"
fi
if ! have "$redis_tag"; then
    docker build --network host -q -t "$redis_tag" --build-arg BASE="$python_tag" -f "$here/redis.Dockerfile" "$here"
fi
docker image ls --format '{{.Repository}}:{{.Tag}} {{.Size}}' | grep '^opjudge-base/'
