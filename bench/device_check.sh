#!/usr/bin/env bash
# The CUDA track's device check on a lent H200 (issue 7): one prepared script, under 8 minutes.
#
#   bash bench/device_check.sh            # from the repository root on the GPU machine
#
# Steps, each under its own timeout (seconds in brackets); a failed step is reported and the
# script goes on, so one run yields every figure it can:
#   1. the machine: nvidia-smi, python, torch, nvcc                                  [30]
#   2. the runtime tests that need a GPU (tests/judge/cuda/test_runtime.py)          [120]
#   3. opjudge judge: the CUDA baseline on the `tests` cases           -> AC         [180]
#   4. opjudge judge: wrong_cut_short_block.cu on the `tests` cases    -> WA         [120]
#   5. opjudge judge: a result-caching kernel on timed cases           -> WA or SV   [100]
#      (add_mul_relu: its timed cases are cheap to generate; the sparse FA one runs as
#      step 7 when time is left, since the engine makes sparse FA inputs on the CPU)
#   6. bench/cuda_device_bench.py: the baseline on the benchmark cases, 5 separate runs:
#      per case median, CV over the 5 runs, TFLOP/s against the H200's peak, oracle on the GPU [270]
#   7. optional (DEVICE_CHECK_FULL=1, or time left): the sparse FA exploit on benchmarks [150]
# No step runs past DEVICE_CHECK_DEADLINE_S (465 s): the whole check stays under 8 minutes.
# Everything is logged to $OUT/device_check.log (or /tmp when OUT is unset), with the JSON of
# each judging and the benchmark beside it.
#
# The machine has no network: the script uses the image's python3 (with torch) and the repository
# on PYTHONPATH; it installs nothing. The sandbox defaults to `off` (no bubblewrap or pyseccomp
# there); set OPJUDGE_SANDBOX=auto to try isolation too.
set -euo pipefail

cd "$(dirname "$0")/.."
REPO=$(pwd)
OUT_DIR=${OUT:-/tmp/opjudge-device-check}
mkdir -p "$OUT_DIR"
LOG="$OUT_DIR/device_check.log"
: >"$LOG"
exec > >(tee -a "$LOG") 2>&1

START=$(date +%s)
DEADLINE_S=${DEVICE_CHECK_DEADLINE_S:-465}  # every step ends by then: 8 minutes minus a margin
PY=${PYTHON:-python3}
if [ -x "$REPO/.venv/bin/python" ] && "$REPO/.venv/bin/python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" 2>/dev/null; then
  PY="$REPO/.venv/bin/python"
fi
export PYTHONPATH="$REPO${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONUNBUFFERED=1
export OPJUDGE_SANDBOX=${OPJUDGE_SANDBOX:-off}
export OPJUDGE_JUDGE_SECRET=${OPJUDGE_JUDGE_SECRET:-device-check}  # same seeds each step: the oracle cache hits
export OPJUDGE_CACHE_DIR=${OPJUDGE_CACHE_DIR:-/tmp/opjudge-device-cache}
SFAG=sparse_flash_attention_grad
FAILED=()

elapsed() { echo $(($(date +%s) - START)); }
section() { printf '\n=== %s (t=%ss) ===\n' "$1" "$(elapsed)"; }

# run_step NAME TIMEOUT CMD...: run with a timeout (cut to what is left of the whole budget),
# record a failure, never stop the script.
run_step() {
  local name=$1 limit=$2
  shift 2
  local rc=0 left=$((DEADLINE_S - $(elapsed)))
  if [ "$left" -lt 20 ]; then
    echo "!! $name: skipped, the ${DEADLINE_S}s budget is spent"
    FAILED+=("$name")
    return 0
  fi
  [ "$limit" -gt "$left" ] && limit=$left
  timeout --kill-after=5 "$limit" "$@" || rc=$?
  if [ "$rc" -ne 0 ]; then
    [ "$rc" -eq 124 ] && echo "!! $name: timed out after ${limit}s" || echo "!! $name: exit status $rc"
    FAILED+=("$name")
  fi
  return 0
}

# judge NAME EXPECTED TIMEOUT PROBLEM SETS FILE: opjudge judge --json, then the verdict against EXPECTED
# (a |-separated list).
judge() {
  local name=$1 expected=$2 limit=$3 problem=$4 sets=$5 file=$6
  local json="$OUT_DIR/$name.json"
  section "$name: $file ($problem, $sets), expected $expected"
  run_step "$name" "$limit" bash -c "'$PY' -m judge judge --problem '$problem' --backend cuda --cases '$sets' \
    --json '$file' >'$json'"
  [ -s "$json" ] || { echo "!! $name: no JSON written"; FAILED+=("$name"); return 0; }
  "$PY" - "$json" "$expected" "$name" <<'PYEOF' || FAILED+=("$name")
import json, sys
path, expected, name = sys.argv[1], sys.argv[2].split("|"), sys.argv[3]
r = json.load(open(path))
print(f"verdict {r['verdict']} (expected {'|'.join(expected)}): {r['message']}")
print(f"isolation {r.get('isolation')}; host {r.get('host')}; stages {r.get('stage_times_s')}")
for c in r.get("cases", []):
    med = f"{c['median_ns'] / 1e6:.3f} ms" if c.get("median_ns") else "-"
    ratio = f"{c['ratio']:.3f}" if c.get("ratio") else "-"
    worst = max((o.get("max_abs_err", 0) for o in c.get("outputs", {}).values()), default=0)
    print(f"  {c['name']:32} {c['set']:10} {c['verdict']:3} median {med:>12} ratio {ratio:>6} "
          f"max|X-G| {worst:.3g} {c.get('message', '')[:100]}")
if r["compile_log"].strip():
    print("compile log:", r["compile_log"][:1500])
sys.exit(0 if r["verdict"] in expected else 1)
PYEOF
}

section "1. machine"
run_step machine 30 bash -c "nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv; \
  '$PY' -c 'import sys, torch; print(sys.version.split()[0], \"torch\", torch.__version__, \"cuda\", torch.version.cuda, torch.cuda.get_device_name(0))'; \
  (command -v nvcc || ls /usr/local/cuda/bin/nvcc) && (nvcc --version || /usr/local/cuda/bin/nvcc --version) | tail -2"
run_step python-packages 30 "$PY" -c "
import importlib, sys
missing = [m for m in ('torch', 'typer', 'rich', 'pytest') if importlib.util.find_spec(m) is None]
print('python', sys.executable, 'missing:', missing or 'none')
sys.exit(1 if missing else 0)"

section "2. runtime tests on the GPU"
run_step runtime-tests 120 "$PY" -m pytest -q -p no:cacheprovider tests/judge/cuda/test_runtime.py -rs

judge baseline_tests AC 180 "$SFAG" tests "reference_kernels/$SFAG/cuda/baseline.cu"
judge wrong_tests WA 120 "$SFAG" tests "tests/submissions/$SFAG/cuda/wrong_cut_short_block.cu"
judge exploit_amr "WA|SV" 100 add_mul_relu all "tests/submissions/add_mul_relu/cuda/exploit_pointer_cache.cu"

section "6. baseline timing: 5 runs of bench/cuda_device_bench.py"
run_step bench 270 "$PY" bench/cuda_device_bench.py --runs 5 --warmup 2 --min-calls 5 --budget-s 2 \
  --out "$OUT_DIR/bench.json"

if [ "${DEVICE_CHECK_FULL:-0}" = 1 ] || [ "$(elapsed)" -lt $((DEADLINE_S - 150)) ]; then
  judge exploit_sfag "WA|SV" 150 "$SFAG" benchmarks "tests/submissions/$SFAG/cuda/exploit_pointer_cache.cu"
else
  section "7. skipped: the sparse FA exploit on benchmarks (budget ${DEADLINE_S}s)"
fi

section "summary"
echo "date $(date -u +%Y-%m-%dT%H:%MZ), total $(elapsed)s, log $LOG"
if [ "${#FAILED[@]}" -eq 0 ]; then
  echo "every step gave what was expected"
else
  echo "steps that failed or gave another verdict: $(printf '%s\n' "${FAILED[@]}" | sort -u | tr '\n' ' ')"
  exit 1
fi
