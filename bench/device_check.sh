#!/usr/bin/env bash
# The CUDA track's device check on a lent H200 (docs/benchmarks.md, "CUDA track (H200)"): one prepared script, under 8 minutes.
#
#   bash bench/device_check.sh            # from the repository root on the GPU machine
#
# Steps, each under its own timeout (seconds in brackets); a failed step is reported and the
# script goes on, so one run yields every figure it can:
#   1. the machine: nvidia-smi, python, torch, nvcc; the carried sandbox packages         [30]
#   2. the runtime tests that need a GPU (tests/judge/cuda/test_runtime.py)          [120]
#   3. opjudge judge: the CUDA baseline on the `tests` cases           -> AC         [180]
#   4. opjudge judge under the `strict` sandbox (bubblewrap, seccomp, Landlock): the baseline on
#      the `tests` cases -> AC with isolation strict; shows the GPU nodes bound in and libcuda
#      working under the seccomp filter (needs .devcarry, see below)                 [120]
#   5. opjudge judge: wrong_cut_short_block.cu on the `tests` cases    -> WA         [120]
#   6. opjudge judge: a result-caching kernel (add_mul_relu, all cases) -> WA or SV  [100],
#      then a kernel writing to an illegal address (add_mul_relu, tests)  -> RE         [60]
#   7. bench/cuda_device_bench.py: the baseline on the benchmark cases, 5 separate runs:
#      per case median, CV over the 5 runs, TFLOP/s against the H200's peak, oracle on the GPU [270]
#   8. when time is left (or DEVICE_CHECK_FULL=1): the sparse FA result-caching kernel
#      on the benchmark cases -> WA or SV                                            [150]
# No step runs past DEVICE_CHECK_DEADLINE_S (465 s): the whole check stays under 8 minutes.
# Everything is logged to $OUT/device_check.log (or /tmp when OUT is unset), with the JSON of
# each judging and the benchmark beside it.
#
# The machine has no network: the script uses the image's python3 (with torch) and the repository
# on PYTHONPATH. Steps other than 4 run with the sandbox `off`; step 4 needs bubblewrap, libseccomp
# and pyseccomp, which the image lacks: run `bash bench/device_carry.sh` here first and name
# `.devcarry` in the device tool's `carry`; the script installs them on that (disposable) machine.
# A device call, from the repository root:
#   bash bench/device_check.sh          with carry [".devcarry"] and timeout_s 540
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
# Sandboxed processes start with `python -I` in a cleared environment, where PYTHONPATH is not
# seen: the checkout goes on the interpreter's own path, where `pip install -e .` would put it.
if ! "$PY" -I -c "import judge" 2>/dev/null; then
  SITE=$("$PY" -c "import sysconfig; print(sysconfig.get_paths()['purelib'])")
  echo "$REPO" >"$SITE/opjudge-checkout.pth" && echo "judge: $REPO on $PY's own path ($SITE/opjudge-checkout.pth)"
fi
export OPJUDGE_SANDBOX=${OPJUDGE_SANDBOX:-off}
export OPJUDGE_JUDGE_SECRET=${OPJUDGE_JUDGE_SECRET:-device-check}  # same seeds each step: the oracle cache hits
export OPJUDGE_CACHE_DIR=${OPJUDGE_CACHE_DIR:-/tmp/opjudge-device-cache}
SFAG=sparse_flash_attention_grad
FAILED=()

# DEVICE_CHECK_ONLY="runtime-tests baseline_strict": run only the steps named (a rerun of what
# failed, in less device time); empty runs every step.
ONLY=" ${DEVICE_CHECK_ONLY:-} "
wanted() { [ "$ONLY" = "  " ] || [[ "$ONLY" == *" $1 "* ]]; }

elapsed() { echo $(($(date +%s) - START)); }
section() { printf '\n=== %s (t=%ss) ===\n' "$1" "$(elapsed)"; }

# run_step NAME TIMEOUT CMD...: run with a timeout (cut to what is left of the whole budget),
# record a failure, never stop the script.
run_step() {
  local name=$1 limit=$2
  shift 2
  wanted "$name" || return 0
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

# judge NAME EXPECTED TIMEOUT PROBLEM SETS FILE [SANDBOX]: opjudge judge --json, then the verdict
# against EXPECTED (a |-separated list); with SANDBOX, the judging must also report that isolation.
judge() {
  local name=$1 expected=$2 limit=$3 problem=$4 sets=$5 file=$6 sandbox=${7:-$OPJUDGE_SANDBOX}
  local json="$OUT_DIR/$name.json"
  wanted "$name" || return 0
  section "$name: $file ($problem, $sets, sandbox $sandbox), expected $expected"
  run_step "$name" "$limit" env OPJUDGE_SANDBOX="$sandbox" bash -c "'$PY' -m judge judge --problem '$problem' \
    --backend cuda --cases '$sets' --json '$file' >'$json'"
  [ -s "$json" ] || { echo "!! $name: no JSON written"; FAILED+=("$name"); return 0; }
  "$PY" - "$json" "$expected" "$name" "$sandbox" <<'PYEOF' || FAILED+=("$name")
import json, sys
path, expected, name, sandbox = sys.argv[1], sys.argv[2].split("|"), sys.argv[3], sys.argv[4]
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
isolated_as_asked = sandbox in ("off", "auto") or r.get("isolation") == sandbox
if not isolated_as_asked:
    print(f"isolation {r.get('isolation')!r}, not {sandbox!r}")
sys.exit(0 if r["verdict"] in expected and isolated_as_asked else 1)
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

# install_carried: what bench/device_carry.sh put in .devcarry, where this machine lacks it. The
# library goes under /usr/local/lib (bound into the sandbox, found by pyseccomp through ldconfig);
# bwrap only needs to be on the worker's PATH.
install_carried() {
  local carry="$REPO/.devcarry" root=/tmp/opjudge-carried
  [ -d "$carry" ] || { echo "no .devcarry here: run bench/device_carry.sh and carry it"; return 1; }
  mkdir -p "$root"
  if ! ldconfig -p 2>/dev/null | grep 'libseccomp\.so\.2' >/dev/null; then  # no -q: no SIGPIPE
    dpkg -x "$carry"/libseccomp2_*.deb "$root" && cp -a "$root"/usr/lib/x86_64-linux-gnu/libseccomp.so.2* /usr/local/lib/ \
      && ldconfig || return 1
  fi
  "$PY" -c "import pyseccomp" 2>/dev/null \
    || "$PY" -m pip install -q --no-index --no-deps --no-compile "$carry"/pyseccomp-*.whl || return 1
  if ! command -v bwrap >/dev/null; then
    dpkg -x "$carry"/bubblewrap_*.deb "$root" && export PATH="$root/usr/bin:$PATH" || return 1
  fi
  echo "bwrap $(command -v bwrap): $(bwrap --version)"
  "$PY" -c "import pyseccomp; print('pyseccomp', pyseccomp.__file__)"
}
install_carried || { echo "!! carried: the sandbox packages are not installed; step 4 will say why"; FAILED+=(carried); }

section "2. runtime tests on the GPU"
run_step runtime-tests 120 "$PY" -m pytest -q -p no:cacheprovider tests/judge/cuda/test_runtime.py -rs

judge baseline_tests AC 180 "$SFAG" tests "reference_kernels/$SFAG/cuda/baseline.cu"

section "4. the strict sandbox with the GPU inside"
run_step doctor 60 env OPJUDGE_SANDBOX=strict "$PY" -m judge doctor
judge baseline_strict AC 120 "$SFAG" tests "reference_kernels/$SFAG/cuda/baseline.cu" strict
# Timed, so both runner children (the submission's, and the baseline's of its own) hold a CUDA
# context on the GPU under bubblewrap; the baseline against itself should give ratios near 1.
judge amr_timed_strict AC 90 add_mul_relu benchmarks "reference_kernels/add_mul_relu/cuda/baseline.cu" strict

judge wrong_tests WA 120 "$SFAG" tests "tests/submissions/$SFAG/cuda/wrong_cut_short_block.cu"
judge exploit_amr "WA|SV" 100 add_mul_relu all "tests/submissions/add_mul_relu/cuda/exploit_pointer_cache.cu"
judge fault_amr RE 60 add_mul_relu tests "tests/submissions/add_mul_relu/cuda/re_illegal_address.cu"

section "7. baseline timing: 5 runs of bench/cuda_device_bench.py"
run_step bench 270 "$PY" bench/cuda_device_bench.py --runs 5 --warmup 2 --min-calls 5 --budget-s 2 \
  --out "$OUT_DIR/bench.json"

if [ "${DEVICE_CHECK_FULL:-0}" = 1 ] || [ "$(elapsed)" -lt $((DEADLINE_S - 150)) ]; then
  judge exploit_sfag "WA|SV" 150 "$SFAG" benchmarks "tests/submissions/$SFAG/cuda/exploit_pointer_cache.cu"
else
  section "8. skipped: the sparse FA exploit on benchmarks (budget ${DEADLINE_S}s)"
fi

section "summary"
echo "date $(date -u +%Y-%m-%dT%H:%MZ), total $(elapsed)s, log $LOG"
if [ "${#FAILED[@]}" -eq 0 ]; then
  echo "every step gave what was expected"
else
  echo "steps that failed or gave another verdict: $(printf '%s\n' "${FAILED[@]}" | sort -u | tr '\n' ' ')"
  exit 1
fi
