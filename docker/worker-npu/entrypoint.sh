#!/bin/bash
# Entry point of the opjudge NPU worker image: CANN's environment, a doctor report, the worker.
set -euo pipefail

# set_env.sh exports ASCEND_HOME_PATH / ASCEND_TOOLKIT_HOME, LD_LIBRARY_PATH and ASCEND_OPP_PATH;
# its location changed between CANN releases.
for candidate in /usr/local/Ascend/ascend-toolkit/set_env.sh /usr/local/Ascend/cann/set_env.sh \
                 /usr/local/Ascend/ascend-toolkit/latest/set_env.sh; do
    if [ -f "$candidate" ]; then
        set +u
        # shellcheck source=/dev/null
        source "$candidate"
        set -u
        break
    fi
done
export OPJUDGE_ASCEND_HOME="${OPJUDGE_ASCEND_HOME:-${ASCEND_HOME_PATH:-${ASCEND_TOOLKIT_HOME:-}}}"

# What this container can judge, in the log where an operator looks first.
opjudge doctor || true

if [ "$#" -eq 0 ]; then
    exec opjudge worker --queue "judge.npu.${OPJUDGE_NPU_SOC}"
fi
exec "$@"
