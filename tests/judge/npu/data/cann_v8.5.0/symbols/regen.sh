#!/usr/bin/env bash
# Regenerates the fixtures of this folder: the undefined and defined symbols of the two C++ objects
# CANN 8.5.0 puts in every STATIC ascendc_library archive (libascendc_runtime.a's ascendc_runtime.cpp.o
# and aicpu_rt.cpp.o), and the functions the log macros of ascendc_tool_log.h call.
#
# The sources are read at tag v8.5.0 of cannmirror/asc-devkit (a git mirror; no work tree needed) and
# compiled as tools/build/asc_rt/CMakeLists.txt + cmake/intf_pub_linux.cmake compile them. The CANN
# package's headers are replaced by the stand-ins in stubs/ (declarations only, written for opjudge),
# except metadef's ge_api_error_codes.h and what it includes, which carry code (global objects, inline
# std::map/std::string use) and are read at tag v8.5.0 of hicann/metadef. See README.md.
#
# Also the archive's third member, ascendc_elf_tool.c.o (C, tools/build/elf_tool), and the object the
# generated host stub becomes in every ascendc_library (host_stub.cpp.o), once per host_stub.cpp that
# ../generator/out/ holds (../generator/regen.sh writes them with CANN's generator).
#
# Nothing of CANN's is written into this folder; the sources are extracted to a temporary directory.
#
# Environment:
#   ASC_DEVKIT_GIT  git dir of cannmirror/asc-devkit (default /work/.mirror/cannmirror+asc-devkit/repo)
#   METADEF_GIT     git dir of hicann/metadef       (default /work/.mirror/hicann+metadef/repo)
#   RUNTIME_GIT     git dir of hicann/runtime       (default /work/.mirror/hicann+runtime/repo); optional:
#                   when present, the objects are built a second time against its real headers and the
#                   undefined lists must match the stand-ins' (nothing of it is recorded)
#   CXX             the compiler (default g++-12; must be GCC 12)
#   CC              the C compiler, for ascendc_elf_tool.c (default gcc-12; must be GCC 12)
# Also needs python3 (asc-devkit's update_host_stub.py) and binutils (nm, readelf).
set -euo pipefail
export LC_ALL=C

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ASC_DEVKIT_GIT=${ASC_DEVKIT_GIT:-/work/.mirror/cannmirror+asc-devkit/repo}
METADEF_GIT=${METADEF_GIT:-/work/.mirror/hicann+metadef/repo}
RUNTIME_GIT=${RUNTIME_GIT:-/work/.mirror/hicann+runtime/repo}
CXX=${CXX:-g++-12}
CC=${CC:-gcc-12}
TAG=v8.5.0

die() { echo "regen.sh: $*" >&2; exit 1; }

command -v "$CXX" >/dev/null || die "no compiler $CXX (set CXX to a GCC 12 g++)"
case "$("$CXX" -dumpversion)" in 12|12.*) ;; *) die "$CXX is GCC $("$CXX" -dumpversion), not 12" ;; esac
CXX_VERSION=$("$CXX" --version | head -n 1)
command -v "$CC" >/dev/null || die "no compiler $CC (set CC to a GCC 12 gcc)"
case "$("$CC" -dumpversion)" in 12|12.*) ;; *) die "$CC is GCC $("$CC" -dumpversion), not 12" ;; esac
CC_VERSION=$("$CC" --version | head -n 1)

ASC_SHA=$(git --git-dir="$ASC_DEVKIT_GIT" rev-parse "$TAG^{commit}") || die "no tag $TAG in $ASC_DEVKIT_GIT"
MD_SHA=$(git --git-dir="$METADEF_GIT" rev-parse "$TAG^{commit}") || die "no tag $TAG in $METADEF_GIT"

T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT

# --- sources (asc-devkit) and the package's include tree (stand-ins + metadef) --------------------------
mkdir -p "$T/src" "$T/md" "$T/cann"
git --git-dir="$ASC_DEVKIT_GIT" archive "$TAG" tools/build/asc_rt tools/build/common include | tar -x -C "$T/src"
git --git-dir="$METADEF_GIT" archive "$TAG" inc/external | tar -x -C "$T/md"
cp -R "$HERE/stubs/." "$T/cann/"
# metadef's cmake/package.cmake installs inc/external/{ge_common,graph,exe_graph/runtime,utils} as
# include/external/ge_common, include/graph, include/exe_graph/runtime and include/utils.
mkdir -p "$T/cann/include/external"
cp -R "$T/md/inc/external/ge_common" "$T/cann/include/external/ge_common"
cp -R "$T/md/inc/external/graph" "$T/cann/include/graph"
cp -R "$T/md/inc/external/exe_graph" "$T/cann/include/exe_graph"
cp -R "$T/md/inc/external/utils" "$T/cann/include/utils"

# --- the compile line -------------------------------------------------------------------------------
# tools/build/asc_rt/CMakeLists.txt (BUILD_OPEN_PROJECT): include dirs in its order with
# ASCEND_CANN_PACKAGE_PATH = cann, then mmpa_headers' (cmake/modules/Findmmpa.cmake; alog_headers' are
# already listed); compile options -Wextra -Wfloat-equal -fvisibility-inlines-hidden -fvisibility=hidden.
# intf_pub (cmake/intf_pub_linux.cmake, Release): -Wall -fPIC -fstack-protector-strong -std=c++14 and
# _GLIBCXX_USE_CXX11_ABI=0 CFG_BUILD_NDEBUG WIN64=1 LINUX=0. alog (Findalog.cmake): LOG_CPP PROCESS_LOG.
# No -O: the top CMakeLists.txt sets CMAKE_CXX_FLAGS_RELEASE to "" (so GCC's default, -O0).
DEFINES="-D_GLIBCXX_USE_CXX11_ABI=0 -DCFG_BUILD_NDEBUG -DWIN64=1 -DLINUX=0 -DLOG_CPP -DPROCESS_LOG"
INCLUDES="-Icann/include/base -Icann/pkg_inc/base -Icann/pkg_inc/runtime -Icann/pkg_inc/runtime/runtime \
-Icann/pkg_inc/profiling -Icann/pkg_inc -Icann/include/ge -Icann/include -Icann/include/acl -Isrc/include \
-Isrc/tools/build/common -Icann/pkg_inc/mmpa -Icann/pkg_inc/mmpa/sub_inc"
FLAGS="-Wextra -Wfloat-equal -fvisibility-inlines-hidden -fvisibility=hidden -Wall -fPIC -fstack-protector-strong -std=c++14"

compile() {  # compile <root> <source relative to root> <object>: in <root>, with the flags above
    (cd "$1" && $CXX $DEFINES $INCLUDES $FLAGS -o "$3" -c "$2")
}
undefined() { nm -u --format=posix "$1" | awk '{print $1}' | sort -u; }
weak_undefined() { nm -u --format=posix "$1" | awk '$2 == "w" {print $1}' | sort -u | tr '\n' ' ' | sed 's/ $//'; }

header() {  # header <source path> <object>
    cat <<EOF
# repo: cannmirror/asc-devkit
# tag: $TAG
# commit: $ASC_SHA
# source: $1
# headers: opjudge's stand-ins (tests/judge/npu/data/cann_v8.5.0/symbols/stubs) for the CANN package's,
#   hicann/metadef $TAG ($MD_SHA) inc/external/{ge_common,graph,exe_graph,utils} as the package's
#   include/{external/ge_common,graph,exe_graph,utils}
# compile (in a temporary dir holding src/ = the tag's files and cann/ = the include tree):
#   $CXX $DEFINES $INCLUDES $FLAGS -o $2 -c $1
# compiler: $CXX_VERSION
# produced by tests/judge/npu/data/cann_v8.5.0/symbols/regen.sh
EOF
}

for name in ascendc_runtime aicpu_rt; do
    src="tools/build/asc_rt/$name.cpp"
    compile "$T" "src/$src" "$name.o" 2>"$T/$name.log" || { cat "$T/$name.log" >&2; die "compile of $src failed"; }
    {
        header "$src" "$name.o"
        echo "# nm -u --format=posix $name.o, names only, sorted (LC_ALL=C), one a line"
        echo "# weak (nm type w): $(weak_undefined "$T/$name.o")"
        undefined "$T/$name.o"
    } >"$HERE/$name.undefined.txt"
    {
        header "$src" "$name.o"
        echo "# nm -g --defined-only --format=posix $name.o: 'name type', sorted (LC_ALL=C), one a line"
        nm -g --defined-only --format=posix "$T/$name.o" | awk '{print $1, $2}' | sort -u
    } >"$HERE/$name.defined.txt"
done

# --- ascendc_tool_log.h: what each log macro calls --------------------------------------------------
# A probe per macro, compiled like the sources; its imports minus those of a probe that uses no macro
# (the header's own includes bring std::string and std::map code) are what the macro calls.
LOG_H=tools/build/common/ascendc_tool_log.h
MACROS=$(sed -n 's/^#define \(ASCENDLOG[A-Z]\)(format, \.\.\.).*/\1/p' "$T/src/$LOG_H")
[ -n "$MACROS" ] || die "no ASCENDLOG*(format, ...) macros in $LOG_H"
printf '#include "ascendc_tool_log.h"\nvoid OpjudgeLogProbe() {}\n' >"$T/probe_none.cpp"
compile "$T" probe_none.cpp probe_none.o
undefined "$T/probe_none.o" >"$T/probe_none.txt"
{
    cat <<EOF
# repo: cannmirror/asc-devkit
# tag: $TAG
# commit: $ASC_SHA
# source: $LOG_H (its macros outside UT_TEST/ST_TEST)
# method: per macro M, a probe 'void OpjudgeLogProbe(int v) { M("probe %d", v); }' including the header,
#   compiled like the sources (see ascendc_runtime.undefined.txt); recorded: nm -u of the probe minus nm -u
#   of the same probe calling no macro; '(w)' marks a weak undefined symbol
# compiler: $CXX_VERSION
# produced by tests/judge/npu/data/cann_v8.5.0/symbols/regen.sh
# macro: functions it calls
EOF
    for m in $MACROS; do
        printf '#include "ascendc_tool_log.h"\nvoid OpjudgeLogProbe(int v) { %s("probe %%d", v); }\n' "$m" \
            >"$T/probe_$m.cpp"
        compile "$T" "probe_$m.cpp" "probe_$m.o"
        calls=$(nm -u --format=posix "$T/probe_$m.o" | awk '{print $1 ($2 == "w" ? "(w)" : "")}' | sort -u \
            | while read -r s; do grep -qxF "${s%(w)}" "$T/probe_none.txt" || echo "$s"; done | tr '\n' ' ')
        echo "$m: ${calls% }"
    done
} >"$HERE/tool_log_calls.txt"

# --- ascendc_elf_tool.c.o: the archive's third member, C ----------------------------------------------
# tools/build/elf_tool/CMakeLists.txt (BUILD_OPEN_PROJECT): OBJECT library elf_tool_obj from
# ascendc_elf_tool.c; options -Wextra -Wfloat-equal; include dir ${CMAKE_CURRENT_SOURCE_DIR}/tools/build/elf_tool
# (CMAKE_CURRENT_SOURCE_DIR is already tools/build/elf_tool, so the folder does not exist: passed as is,
# the header is found beside the source); links intf_pub (its C part: -Wall -fPIC -fstack-protector-strong,
# the same four defines; -std=c++14 is CXX-only) and c_sec_static, an IMPORTED target whose include dir
# (cmake/modules/Findsecurec.cmake: the package's include/, holding securec.h) CMake passes as -isystem.
# No -O: the top CMakeLists.txt sets CMAKE_C_FLAGS_RELEASE to "" too.
LC_SEC_STUB="$HERE/stubs/libc_sec/securec.h"
ELF_SRC=tools/build/elf_tool/ascendc_elf_tool.c
git --git-dir="$ASC_DEVKIT_GIT" archive "$TAG" tools/build/elf_tool | tar -x -C "$T/src"
mkdir -p "$T/csec/include"
cp "$LC_SEC_STUB" "$T/csec/include/securec.h"
C_DEFINES="-D_GLIBCXX_USE_CXX11_ABI=0 -DCFG_BUILD_NDEBUG -DWIN64=1 -DLINUX=0"
C_INCLUDES="-Isrc/tools/build/elf_tool/tools/build/elf_tool -isystem csec/include"
C_FLAGS="-Wextra -Wfloat-equal -Wall -fPIC -fstack-protector-strong"
ELF_CMD="$CC $C_DEFINES $C_INCLUDES $C_FLAGS -o ascendc_elf_tool.c.o -c src/$ELF_SRC"
(cd "$T" && $ELF_CMD) 2>"$T/elf_tool.log" || { cat "$T/elf_tool.log" >&2; die "compile of $ELF_SRC failed"; }
header_elf() {
    cat <<EOF2
# repo: cannmirror/asc-devkit
# tag: $TAG
# commit: $ASC_SHA
# source: $ELF_SRC (with tools/build/elf_tool/ascendc_elf_tool.h beside it)
# headers: securec.h is opjudge's stand-in tests/judge/npu/data/cann_v8.5.0/symbols/stubs/libc_sec/securec.h
#   as the package's include/securec.h (csec/include here); no other CANN header is included
# compile (in a temporary dir holding src/ = the tag's files and csec/include):
#   $ELF_CMD
# compiler: $CC_VERSION
# produced by tests/judge/npu/data/cann_v8.5.0/symbols/regen.sh
EOF2
}
{
    header_elf
    echo "# nm -u --format=posix ascendc_elf_tool.c.o, names only, sorted (LC_ALL=C), one a line"
    echo "# weak (nm type w): $(weak_undefined "$T/ascendc_elf_tool.c.o")"
    undefined "$T/ascendc_elf_tool.c.o"
} >"$HERE/ascendc_elf_tool.undefined.txt"
{
    header_elf
    echo "# nm -g --defined-only --format=posix ascendc_elf_tool.c.o: 'name type', sorted (LC_ALL=C), one a line"
    nm -g --defined-only --format=posix "$T/ascendc_elf_tool.c.o" | awk '{print $1, $2}' | sort -u
} >"$HERE/ascendc_elf_tool.defined.txt"

# --- host_stub.cpp.o: the generated host stub, one per generator run ----------------------------------
# Inputs: every ../generator/out/<input>/auto_gen/host_stub.cpp present (written by ../generator/regen.sh,
# which runs asc-devkit v8.5.0's extract_host_stub.py), copied to the temporary dir first.
# 1. function.cmake (${device_target}_merge_obj) runs update_host_stub.py on it after the device build:
#    it fills the __replaced_* placeholders (kernel array and section names from the SoC and the target,
#    the device objects' sizes). Run here at the tag with the judge's target (opjudge_kernels), the
#    generator run's SoC (ascend910b3) and 1000-byte stand-ins for the device objects.
# 2. function.cmake's ${device_target}_host_stub_obj compiles it with host_intf_pub
#    (cmake/asc/legacy_modules/host_intf.cmake, Release: -fPIC -O2 -std=c++17 -fvisibility-inlines-hidden
#    -fstack-protector-strong, _GLIBCXX_USE_CXX11_ABI=0 _FORTIFY_SOURCE=2, -I<package>/include) and
#    ASCENDC_DUMP=0 iff the ascendc_library target's definitions hold it (the judge's always do; the
#    generator run's defines in GENERATED_BY.txt tell). The target belongs to the user's project (the
#    judge's, CMAKE_BUILD_TYPE Release), which leaves CMAKE_CXX_FLAGS_RELEASE at CMake's "-O3 -DNDEBUG";
#    CMake puts it before the target's options, so -O2 is the one that applies.
# The file declares RegisterAscendBinary, LaunchAscendKernel, ..., Adx::AdumpPrintWorkSpace itself and
# includes no CANN header but securec.h (stubs/libc_sec/securec.h, as pkg/include/securec.h here).
GEN_OUT="$HERE/../generator/out"
REPO_ROOT=$(git -C "$HERE" rev-parse --show-toplevel)
UPD=cmake/asc/legacy_modules/util/update_host_stub.py
UPD_BLOB=$(git --git-dir="$ASC_DEVKIT_GIT" rev-parse "$TAG:$UPD")
HS_SOC=ascend910b3
HS_TARGET=opjudge_kernels
command -v python3 >/dev/null || die "no python3 (update_host_stub.py needs it)"
git --git-dir="$ASC_DEVKIT_GIT" archive "$TAG" "$UPD" | tar -x -C "$T/src"
mkdir -p "$T/pkg/include" "$T/host_stub"
cp "$LC_SEC_STUB" "$T/pkg/include/securec.h"
HS_DEFINES="-D_FORTIFY_SOURCE=2 -D_GLIBCXX_USE_CXX11_ABI=0"
HS_INCLUDES="-Ipkg/include"
HS_FLAGS="-O3 -DNDEBUG -fPIC -O2 -std=c++17 -fvisibility-inlines-hidden -fstack-protector-strong"
init_array_bytes() {  # the summed size of the object's .init_array sections, in bytes
    local total=0 size
    for size in $(readelf -SW "$1" | sed -n 's/^ *\[ *[0-9]*\] *//p' \
            | awk '$1 == ".init_array" || $1 ~ /^\.init_array\./ {print $5}'); do
        total=$((total + 16#$size))
    done
    echo "$total"
}
shopt -s nullglob
HS_INPUTS=()
for stub in "$GEN_OUT"/*/auto_gen/host_stub.cpp; do
    input=$(basename "$(dirname "$(dirname "$stub")")")
    case "$input" in *[!A-Za-z0-9._-]*) die "odd generator case name: $input" ;; esac
    gb="$GEN_OUT/$input/GENERATED_BY.txt"
    [ -f "$gb" ] || die "no $gb beside $stub"
    mkdir -p "$T/host_stub/$input/merge_obj"
    cp "$stub" "$T/host_stub/$input/host_stub.cpp"
    cp "$gb" "$T/host_stub/$input/GENERATED_BY.txt"
    HS_INPUTS+=("$input")
done
shopt -u nullglob
rm -f "$HERE"/host_stub.*.undefined.txt "$HERE"/host_stub.*.defined.txt "$HERE"/host_stub.*.compile_failed.txt
HS_FAILED=()
header_hs() {  # uses the loop's variables below
    cat <<EOF2
# generator: repo $gen_repo, tag $gen_tag, commit $gen_commit, $gen_path
#   (run by tests/judge/npu/data/cann_v8.5.0/generator/regen.sh; see GENERATED_BY.txt beside the fixture)
# fixture: $fixture (git hash-object $fixture_hash)
# generator defines: $gen_defs
#   so ASCENDC_DUMP=0 is $([ -n "$dump" ] && echo "passed" || echo "not passed") (function.cmake: iff the target's definitions hold it)
# placeholders: $upd_cmd
#   ($UPD at $TAG, blob $UPD_BLOB;
#   merge_obj holds {aic,aiv,mix}_build.flag and 1000-byte zero-filled stand-ins device_aic.o, device_aiv.o, device.o)
# headers: securec.h is opjudge's stand-in tests/judge/npu/data/cann_v8.5.0/symbols/stubs/libc_sec/securec.h
#   as the package's include/securec.h (pkg/include here); the file includes no other CANN header
# compile (in a temporary dir holding $d/ = the updated copy, pkg/include):
#   $hs_cmd
# compiler: $CXX_VERSION
# .init_array: $((ia_bytes / 8)) entries ($ia_bytes bytes; 8 a pointer, x86-64)
# produced by tests/judge/npu/data/cann_v8.5.0/symbols/regen.sh
EOF2
}
for input in "${HS_INPUTS[@]}"; do
    d="host_stub/$input"
    gb="$T/$d/GENERATED_BY.txt"
    gen_repo=$(sed -n 's/^generator: *repo \([^,]*\),.*/\1/p' "$gb")
    gen_tag=$(sed -n 's/^generator:.* tag \([^,]*\),.*/\1/p' "$gb")
    gen_commit=$(sed -n 's/^generator:.* commit \([0-9a-f]\{40\}\).*/\1/p' "$gb")
    gen_path=$(sed -n '/^generator:/{n;s/^ *path \([^ ]*\).*/\1/p;}' "$gb")
    gen_defs=$(sed -n 's/^defines: *//p' "$gb")
    [ "$gen_repo/$gen_tag/$gen_commit" = "cannmirror/asc-devkit/$TAG/$ASC_SHA" ] \
        || die "$input: GENERATED_BY.txt names generator '$gen_repo $gen_tag $gen_commit', not asc-devkit $TAG"
    gen_defs_list=${gen_defs%%(*}  # the flags, without regen.sh's '(...)' note after them
    case " $gen_defs_list " in *" -DASCENDC_DUMP=0 "*) dump="-DASCENDC_DUMP=0 " ;; *) dump="" ;; esac
    fixture=$(realpath --relative-to="$REPO_ROOT" "$GEN_OUT/$input/auto_gen/host_stub.cpp")
    fixture_hash=$(git hash-object "$T/$d/host_stub.cpp")
    for t in aic aiv mix; do : >"$T/$d/merge_obj/${t}_build.flag"; done
    for o in device_aic.o device_aiv.o device.o; do head -c 1000 /dev/zero >"$T/$d/merge_obj/$o"; done
    upd_cmd="python3 src/$UPD $d $d/merge_obj $HS_SOC $HS_TARGET"
    (cd "$T" && $upd_cmd) >"$T/$d.upd.log" 2>&1 || { cat "$T/$d.upd.log" >&2; die "$input: update_host_stub.py failed"; }
    ! grep -q '__replaced_' "$T/$d/host_stub.cpp" || die "$input: placeholders left after update_host_stub.py"
    obj="$d/host_stub.cpp.o"
    hs_cmd="$CXX ${dump}$HS_DEFINES $HS_INCLUDES $HS_FLAGS -o $obj -c $d/host_stub.cpp"
    if (cd "$T" && $hs_cmd) 2>"$T/$d.log"; then hs_rc=0; else hs_rc=$?; fi
    if [ "$hs_rc" != 0 ]; then
        # CANN's build stops here too (same file, same defines): recorded, not fatal
        ia_bytes=0
        {
            header_hs | grep -v '^# \.init_array:'
            echo "# the compile fails (exit status $hs_rc): no object, so no symbol lists; its error lines:"
            grep 'error:' "$T/$d.log" | sed 's/^/#   /'
        } >"$HERE/host_stub.$input.compile_failed.txt"
        echo "regen.sh: $input: host_stub.cpp does not compile as CANN compiles it (host_stub.$input.compile_failed.txt)" >&2
        HS_FAILED+=("$input")
        continue
    fi
    ia_bytes=$(init_array_bytes "$T/$obj")
    {
        header_hs
        echo "# nm -u --format=posix host_stub.cpp.o, names only, sorted (LC_ALL=C), one a line"
        echo "# weak (nm type w): $(weak_undefined "$T/$obj")"
        undefined "$T/$obj"
    } >"$HERE/host_stub.$input.undefined.txt"
    {
        header_hs
        echo "# nm -g --defined-only --format=posix host_stub.cpp.o: 'name type', sorted (LC_ALL=C), one a line"
        nm -g --defined-only --format=posix "$T/$obj" | awk '{print $1, $2}' | sort -u
    } >"$HERE/host_stub.$input.defined.txt"
done
[ ${#HS_INPUTS[@]} -gt 0 ] || echo "regen.sh: no $GEN_OUT/*/auto_gen/host_stub.cpp: no host_stub.*.txt written" >&2

# --- optional cross-check against hicann/runtime's real headers -------------------------------------
if git --git-dir="$RUNTIME_GIT" rev-parse -q --verify "$TAG^{commit}" >/dev/null 2>&1; then
    RT_SHA=$(git --git-dir="$RUNTIME_GIT" rev-parse "$TAG^{commit}")
    X="$T/xcheck"
    mkdir -p "$X/rt" "$X/cann/include/external" "$X/cann/pkg_inc"
    git --git-dir="$RUNTIME_GIT" archive "$TAG" include pkg_inc | tar -x -C "$X/rt"
    ln -s "$T/src" "$X/src"
    cp -R "$X/rt/pkg_inc/." "$X/cann/pkg_inc/"
    cp -R "$X/rt/include/external/." "$X/cann/include/"
    cp "$X/rt/include/dfx/base/alog_pub.h" "$X/rt/include/dfx/base/log_types.h" "$X/cann/pkg_inc/base/"
    cp "$HERE/stubs/include/securec.h" "$X/cann/include/"  # libc_sec is not in hicann/runtime
    cp -R "$T/cann/include/external/ge_common" "$X/cann/include/external/"
    for d in graph exe_graph utils; do cp -R "$T/cann/include/$d" "$X/cann/include/"; done
    for name in ascendc_runtime aicpu_rt; do
        compile "$X" "src/tools/build/asc_rt/$name.cpp" "$name.o" 2>"$X/$name.log" \
            || { cat "$X/$name.log" >&2; die "cross-check compile of $name.cpp against hicann/runtime failed"; }
        if ! diff <(nm -u --format=posix "$T/$name.o" | awk '{print $1, $2}') \
                  <(nm -u --format=posix "$X/$name.o" | awk '{print $1, $2}') >&2; then
            die "$name.o: the stand-ins' imports differ from those with hicann/runtime $TAG's headers (above)"
        fi
        if ! diff <(nm -g --defined-only --format=posix "$T/$name.o" | awk '{print $1, $2}') \
                  <(nm -g --defined-only --format=posix "$X/$name.o" | awk '{print $1, $2}') >&2; then
            die "$name.o: the stand-ins' definitions differ from those with hicann/runtime $TAG's headers (above)"
        fi
    done
    echo "regen.sh: cross-check with hicann/runtime $TAG ($RT_SHA) headers: same symbols" >&2
else
    echo "regen.sh: no hicann/runtime mirror at $RUNTIME_GIT: cross-check skipped" >&2
fi
echo "regen.sh: wrote $HERE/{ascendc_runtime,aicpu_rt,ascendc_elf_tool}.{undefined,defined}.txt, tool_log_calls.txt" \
    "and host_stub.<input>.{undefined,defined}.txt for ${#HS_INPUTS[@]} inputs: ${HS_INPUTS[*]}" \
    "(${#HS_FAILED[@]} do not compile: ${HS_FAILED[*]:-none})" >&2
