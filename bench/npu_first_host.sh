#!/usr/bin/env bash
# The NPU track's first run on a real Ascend 910B host with CANN 8.5.0 (docs/npu-worker.md, "First host").
#
# Run once, from the repository root, on the host (or inside the worker image), with CANN's environment:
#   source /usr/local/Ascend/ascend-toolkit/set_env.sh
#   bench/npu_first_host.sh [OUT_DIR]          # default var/npu-first-host
# It builds the starter, runs every timed case's baseline once (vendor operator and starter), judges the
# starter and two corpus kernels on every case once, runs the `npu`-marked tests, and prints what differs
# from the fixtures this repository holds (recorded from CANN's sources, not from a device). Send OUT_DIR
# back: everything it printed is also in OUT_DIR/summary.txt.
set -uo pipefail

OUT=${1:-var/npu-first-host}
PROBLEM=sparse_flash_attention_grad
STARTER=reference_kernels/$PROBLEM/npu
CORPUS=tests/submissions/$PROBLEM/npu
FIXTURES=tests/judge/npu/data/cann_v8.5.0
OPJUDGE=${OPJUDGE:-.venv/bin/opjudge}
PYTEST=${PYTEST:-.venv/bin/python -m pytest}
mkdir -p "$OUT"
exec > >(tee "$OUT/summary.txt") 2>&1

section() { printf '\n== %s ==\n' "$*"; }
differs=0
note_diff() { differs=$((differs + 1)); echo "DIFFERS: $*"; }

section "host"
date -u
uname -a
command -v npu-smi >/dev/null && npu-smi info | head -20
echo "ASCEND_HOME_PATH=${ASCEND_HOME_PATH:-unset}"
version=$(sed -n 's/^[Vv]ersion=\(.*\)/\1/p' "${ASCEND_HOME_PATH:-/nonexistent}/compiler/version.info" 2>/dev/null | head -1)
echo "CANN version: ${version:-unknown}"
[[ "$version" == 8.5.0* ]] || note_diff "CANN is ${version:-unknown}, the track is pinned to 8.5.0 (the vendor contract, the symbol lists)"
msprof op --help > "$OUT/msprof_op_help.txt" 2>&1 || true
echo "msprof op --help: $OUT/msprof_op_help.txt (the kernel-name rule, launch-count range, device selection)"
grep -iE "kernel-name|launch-count|VISIBLE|device" "$OUT/msprof_op_help.txt" | head -20

section "doctor, and every timed case's baseline once"
"$OPJUDGE" doctor --baselines "$PROBLEM" --backend npu | tee "$OUT/doctor_baselines.txt"
[[ ${PIPESTATUS[0]} -eq 0 ]] || note_diff "a baseline failed on a case it was given (doctor_baselines.txt)"

section "the starter, built by CANN's ascendc_library directly"
build="$OUT/starter-build"
cmake -S "$STARTER" -B "$build" -DSOC_VERSION="${OPJUDGE_NPU_SOC:-Ascend910B3}" \
      -DPROBLEM_INCLUDE="$PWD/problems/$PROBLEM" > "$OUT/starter_cmake.log" 2>&1 &&
  cmake --build "$build" -j >> "$OUT/starter_cmake.log" 2>&1 || note_diff "the starter did not build: $OUT/starter_cmake.log"
# The generated launchers and host stub against what CANN's generator wrote here from the same files.
for header in "$FIXTURES"/generator/out/sfag_library/include/aclrtlaunch_*.h; do
  real=$(find "$build" -name "$(basename "$header")" -print -quit)
  if [[ -z "$real" ]]; then note_diff "no $(basename "$header") in the build"; continue; fi
  diff -u "$header" "$real" > "$OUT/diff_$(basename "$header").txt" || note_diff "$(basename "$header") (diff in $OUT)"
done
stub=$(find "$build" -name host_stub.cpp -print -quit)
if [[ -n "$stub" ]]; then
  sed 's/sfag_kernels/opjudge_kernels/g' "$stub" | diff -u "$FIXTURES/generator/out/sfag_library/auto_gen/host_stub.cpp" - \
    > "$OUT/diff_host_stub.txt" || echo "host_stub.cpp differs from the fixture (sizes are filled in on a real build): $OUT/diff_host_stub.txt"
fi

section "what CANN's shipped runtime objects import, against the recorded lists"
archive="${ASCEND_HOME_PATH:-/nonexistent}/lib64/libascendc_runtime.a"
if [[ -f "$archive" ]]; then
  work=$(mktemp -d) && (cd "$work" && ar x "$archive")
  for member in "$work"/*.o; do
    name=$(basename "$member" .o); name=${name%.cpp}; name=${name%.c}
    nm -u --format=posix "$member" | awk '{print $1}' | LC_ALL=C sort -u > "$OUT/shipped_$name.undefined.txt"
    recorded="$FIXTURES/symbols/$name.undefined.txt"
    [[ -f "$recorded" ]] || { note_diff "no recorded list for member $name"; continue; }
    grep -v '^#' "$recorded" | comm -13 - "$OUT/shipped_$name.undefined.txt" > "$OUT/new_imports_$name.txt"
    [[ -s "$OUT/new_imports_$name.txt" ]] && note_diff "$name imports names the recording lacks: $OUT/new_imports_$name.txt"
  done
  rm -rf "$work"
  .venv/bin/python - "$OUT" <<'PY'
import sys
from pathlib import Path
from judge.tracks.npu.policy import RULES
refused = sorted({n for p in Path(sys.argv[1]).glob("shipped_*.undefined.txt") for n in p.read_text().split()
                  if not RULES.import_allowed(n)})
print("shipped imports the library check refuses:", refused or "none")
PY
else
  note_diff "no $archive"
fi

section "judging: the starter on every case once, two corpus kernels on the tests"
"$OPJUDGE" judge "$STARTER"/*.cpp "$STARTER"/*.h --problem "$PROBLEM" --backend npu --cases all --json \
  > "$OUT/starter.json"; echo "starter exit $?"
.venv/bin/python - "$OUT/starter.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
print("verdict:", r["verdict"], r.get("message", "")[:300])
host = r.get("host", {})
for case in r.get("cases", []):
    print(f"  {case['name']:28} {case['verdict']:4} ratio {case.get('ratio')}  baseline {case.get('baseline')}")
# The events window's own cost per call (docs/npu-worker.md, "How a call is judged and timed"): the empty call's overhead on each side.
print("event overhead ns, submission / baseline:", host.get("event_overhead_ns"), "/",
      host.get("baseline_event_overhead_ns"))
PY
section "what the events window holds beyond the device's work, per side"
# The same judging under the device clock (profiler task time, no host work): the per-call difference from
# the events clock is the host work inside the window (kernel_run's tiling, the generated launchers'
# rtMalloc/aclrtFree per launch; aclnn's tiling and Python dispatch on the vendor's side).
OPJUDGE_NPU_TIMING=device "$OPJUDGE" judge "$STARTER"/*.cpp "$STARTER"/*.h --problem "$PROBLEM" --backend npu \
  --cases benchmarks --json > "$OUT/starter_device_clock.json"; echo "device-clock judging exit $?"
.venv/bin/python - "$OUT/starter.json" "$OUT/starter_device_clock.json" <<'PY'
import json, sys
events, device = (json.load(open(p)) for p in sys.argv[1:3])
def medians(run, side):
    out = {}
    for case in run.get("cases", []):
        timing = case.get("timing" if side == "team" else "baseline_timing") or {}
        if timing.get("median_ns"):
            out[case["name"]] = (timing["median_ns"], case.get("baseline"))
    return out
for side in ("team", "baseline"):
    e, d = medians(events, side), medians(device, side)
    for name in sorted(set(e) & set(d)):
        extra = e[name][0] - d[name][0]
        print(f"  {side:8} {name:28} events {e[name][0] / 1e3:10.1f} us  device {d[name][0] / 1e3:10.1f} us  "
              f"window holds {extra / 1e3:+9.1f} us more ({e[name][1] if side == 'baseline' else 'starter'})")
PY

for entry in exploit_host_work_after_launch_kernel exploit_stream_fault_kernel; do
  expected=$(sed -n 's/^verdict = "\(.*\)"/\1/p' "$CORPUS/$entry.toml")
  got=$("$OPJUDGE" judge "$CORPUS/$entry.cpp" --problem "$PROBLEM" --backend npu --cases tests --json |
        .venv/bin/python -c 'import json,sys; print(json.load(sys.stdin)["verdict"])')
  echo "$entry: $got (expected $expected)"
  [[ "$got" == "$expected" ]] || note_diff "$entry gave $got, its corpus entry says $expected"
done

section "npu-marked tests"
$PYTEST -m npu tests/judge/npu -rs -q 2>&1 | tail -40
[[ ${PIPESTATUS[0]} -eq 0 ]] || note_diff "npu-marked tests failed"

section "result"
echo "$differs difference(s) from the fixtures; details in $OUT"
