#!/usr/bin/env bash
# Fill .devcarry/ (git-ignored) with what the lent GPU machine lacks for the sandboxed step of
# bench/device_check.sh: bubblewrap, libseccomp and the pyseccomp wheel. That machine reaches no
# registry, so they travel with the working tree: name `.devcarry` in the device tool's `carry`.
#
#   bash bench/device_carry.sh        # here, once per session (about 150 KB)
#
# Debian 12's packages run on the GPU image (x86-64, a newer glibc); pyseccomp is pure Python.
set -euo pipefail
cd "$(dirname "$0")/.."
CARRY=.devcarry
rm -rf "$CARRY"
mkdir -p "$CARRY"
(cd "$CARRY" && apt-get download bubblewrap libseccomp2 2>&1 | grep -v "^W: Download is performed unsandboxed" || true)
python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
  --platform manylinux2014_x86_64 -d "$CARRY" pyseccomp==0.1.2
for wanted in 'bubblewrap_*.deb' 'libseccomp2_*.deb' 'pyseccomp-*.whl'; do
  compgen -G "$CARRY/$wanted" >/dev/null || { echo "missing $wanted in $CARRY" >&2; exit 1; }
done
ls -l "$CARRY"
