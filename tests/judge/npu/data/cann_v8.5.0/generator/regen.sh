#!/usr/bin/env bash
# regen.sh: run CANN 8.5.0's host-stub generator (cannmirror/asc-devkit v8.5.0,
# cmake/asc/legacy_modules/util/extract_host_stub.py) on Ascend C kernel files, the way
# ascendc_library runs it for SOC_VERSION Ascend910B3, and keep what it writes under out/<case>/.
#
# usage:
#   regen.sh                                  the default set (README.md); out/ is rebuilt whole
#   regen.sh [-I DIR]... [--name CASE] [--dump-unset] FILE...
#       FILE: a path, or <opjudge-commit>:<repo-path> (read with git from this repository; the
#       file's folder at that commit is extracted so its quoted includes resolve)
#       -I DIR        extra include folder (the file's own folder is always searched)
#       --name CASE   all FILEs in one generator run (one ascendc_library with several sources);
#                     without it, one run per FILE, named after it
#       --dump-unset  leave ASCENDC_DUMP=0 out of the defines (CANN's default then applies)
#   Only the named out/<case>/ folders are replaced.
#
# environment:
#   ASC_DEVKIT_GIT  git directory of cannmirror/asc-devkit (default /work/.mirror/cannmirror+asc-devkit/repo)
#   REGEN_WORK      scratch folder; its paths appear in the generated files, so it is fixed
#                   (default /tmp/opjudge-cann-v8.5.0-regen); removed and rebuilt per case
#   CROSSCHECK=0    skip preprocessing with the real v8.5.0 headers and comparing outputs
#   HOSTCHECK=0     skip compiling the generated host side with g++
#
# Needs: git, python3, g++ (nm). No bisheng, no CANN install: preprocessing is g++ -E -P with
# standins.h (see README.md for every approximation).
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(git -C "$HERE" rev-parse --show-toplevel)
ASC_DEVKIT_GIT=${ASC_DEVKIT_GIT:-/work/.mirror/cannmirror+asc-devkit/repo}
TAG=v8.5.0
WORK_ROOT=${REGEN_WORK:-/tmp/opjudge-cann-v8.5.0-regen}
CROSSCHECK=${CROSSCHECK:-1}
HOSTCHECK=${HOSTCHECK:-1}
OUT=$HERE/out
TARGET=opjudge_kernels            # the judge's ascendc_library target (judge/tracks/npu/templates)
SOC_LOWER=ascend910b3             # update_host_stub.py's soc argument (function.cmake: _LOWER_SOC_VERSION)
PRESPLIT_REV=8b6f925f41249c5cb03a6d00631d33ebe9512dd9   # last opjudge commit with the 3-kernel sfag_kernel.cpp
export PYTHONDONTWRITEBYTECODE=1 LC_ALL=C

q() { printf '%q ' "$@"; }        # a command line, shell-quoted, for the records

COMMIT=$(git -C "$ASC_DEVKIT_GIT" rev-parse "$TAG^{commit}")
CANN=$WORK_ROOT/_asc-devkit-$TAG
UTIL=$CANN/cmake/asc/legacy_modules/util
STUBS=$WORK_ROOT/_real_header_stubs

# 1. the generator (and, for the cross-check, the headers) at the tag, from the mirror
rm -rf "$CANN" "$STUBS"
mkdir -p "$CANN" "$STUBS/kernel_tiling"
git -C "$ASC_DEVKIT_GIT" archive "$TAG" cmake/asc/legacy_modules/util | tar -x -C "$CANN"
if [[ $CROSSCHECK == 1 ]]; then
    git -C "$ASC_DEVKIT_GIT" archive "$TAG" include impl | tar -x -C "$CANN"
    # kernel_tiling/kernel_tiling.h is generated into a CANN install, not in asc-devkit's tree
    echo '/* empty: regen.sh stand-in for the generated kernel_tiling/kernel_tiling.h */' \
        > "$STUBS/kernel_tiling/kernel_tiling.h"
fi
blob() { git -C "$ASC_DEVKIT_GIT" rev-parse "$TAG:$1"; }

# The defines: device_intf_pub's TILING_KEY_VAR=0 (bisheng_intf.cmake), the target's
# ascendc_compile_definitions as the judge passes them, then the preprocess step's own
# __CHECK_FEATURE_AT_PRECOMPILE (device_preprocess_project/CMakeLists.txt).
defines_for() {
    if [[ $1 == cann ]]; then
        echo "-DTILING_KEY_VAR=0 -DASCENDC_DUMP=0 -DHAVE_WORKSPACE -DHAVE_TILING -D__CHECK_FEATURE_AT_PRECOMPILE"
    else
        echo "-DTILING_KEY_VAR=0 -DHAVE_WORKSPACE -DHAVE_TILING -D__CHECK_FEATURE_AT_PRECOMPILE"
    fi
}

# Preprocess one source as bisheng -E would (mode standins|real) into $2; prints the command.
preprocess_cmd() {  # mode src out incflags...
    local mode=$1 src=$2 out=$3; shift 3
    local -a cmd=(g++ -E -P -x c++ -std=c++17 -O3 -include stdio.h)
    if [[ $mode == standins ]]; then
        cmd+=(-include "$HERE/standins.h" -I"$HERE/standin_include")
    else
        # bisheng's predefines (standins.h section 1) on the command line, then the real headers,
        # the include folders of bisheng_intf.cmake mapped onto asc-devkit's source tree
        cmd+=('-D__global__=__attribute__((cce_kernel))' '-D__gm__=__attribute__((cce_global))'
              -D__CCE__=1 -D__CCE_IS_AICORE__=1 -D__CCE_AICORE__=220 -D__NPU_ARCH__=2201 -D__DAV_C220_VEC__=1
              -I"$CANN" -I"$CANN/impl" -I"$CANN/impl/adv_api" -I"$CANN/impl/basic_api" -I"$CANN/impl/utils"
              -I"$CANN/include" -I"$CANN/include/adv_api" -I"$CANN/include/basic_api"
              -I"$CANN/include/aicpu_api" -I"$CANN/include/utils" -I"$STUBS")
    fi
    cmd+=("$@")
    # shellcheck disable=SC2206
    cmd+=($DEFINES "$src" -o "$out")
    q "${cmd[@]}"
}

# One generator run: preprocess every source into the layout CMake gives the preprocess_obj
# target, write its compile_commands.json, run extract_host_stub.py as the custom command
# ${device_target}_host_cpp does (DYNAMIC_MODE branch: Ascend910B3 -> BUILD_MODE c220, DYNAMIC_MODE ON,
# host_config.cmake), from the util folder.
generate() {  # mode  (uses SRCS INCFLAGS DEFINES BUILD)
    local mode=$1 src ppobj
    local ppbuild=$BUILD/${TARGET}_preprocess-prefix/src/${TARGET}_preprocess-build
    rm -rf "$BUILD"
    mkdir -p "$ppbuild" "$BUILD/auto_gen/$TARGET" "$BUILD/include/$TARGET"
    PPOBJS=() AIVOBJS=() AICOBJS=() PPCMDS=()
    local entries=()
    for src in "${SRCS[@]}"; do
        ppobj=CMakeFiles/preprocess_obj.dir$src.o
        mkdir -p "$ppbuild/$(dirname "$ppobj")"
        local cmd
        cmd=$(preprocess_cmd "$mode" "$src" "$ppbuild/$ppobj" "${INCFLAGS[@]}")
        (cd "$ppbuild" && eval "$cmd")
        PPCMDS+=("$cmd")
        PPOBJS+=("$ppbuild/$ppobj")
        AIVOBJS+=("$ppbuild/CMakeFiles/aiv_obj.dir$src.o")
        AICOBJS+=("$ppbuild/CMakeFiles/aic_obj.dir$src.o")
        # compile_commands.json: extract_host_stub.py maps <directory>/<-o> back to <file> and looks
        # for -DASCENDC_TIME_STAMP_ON in <command> (load_compile_commands)
        entries+=("$(python3 -c 'import json,sys; print(json.dumps({"directory": sys.argv[1], "command": sys.argv[2], "file": sys.argv[3], "output": sys.argv[4]}))' \
            "$ppbuild" "${cmd/ -o $ppbuild\/$ppobj/ -o $ppobj}" "$src" "$ppobj")")
    done
    (IFS=,; echo "[${entries[*]}]") | python3 -m json.tool > "$ppbuild/compile_commands.json"
    GENCMD=$(q python3 extract_host_stub.py "${PPOBJS[@]}" --dynamic-mode -d "$BUILD/auto_gen/$TARGET" \
        -hd "$BUILD/include/$TARGET" --aiv-o "${AIVOBJS[@]}" --aic-o "${AICOBJS[@]}" --build-mode c220 \
        --compile-commands "$ppbuild/compile_commands.json" --generate-definition --run-mode npu)
    PPBUILD=$ppbuild
    if (cd "$UTIL" && eval "$GENCMD") > "$BUILD/generator_stdout.txt" 2>&1; then GENRC=0; else GENRC=$?; fi
}

host_checks() {  # dst file  (uses OUTC DEFMODE)
    local report=$1 hc=$WORK/hostcheck inc=$OUTC/include
    rm -rf "$hc"; mkdir -p "$hc/merge_obj"
    {
        echo "# Host-side checks of the generated files (regen.sh, HOSTCHECK=1). g++ $(g++ -dumpfullversion)."
        echo "# Stand-in headers: $(realpath --relative-to="$REPO" "$HERE/standin_host_include") (securec.h: memcpy_s;"
        echo "# acl/acl_base.h: aclrtStream only). Compile flags: CANN's host_intf_pub (host_intf.cmake), Release."
        echo
        if [[ ! -f $OUTC/auto_gen/host_stub.cpp ]]; then echo "no host_stub.cpp"; return; fi
        # update_host_stub.py is the step after the device build (function.cmake, ${device_target}_merge_obj):
        # it fills the __replaced_* placeholders from the device objects' sizes. Run here on a copy,
        # with 1000-byte dummy objects, so that host_stub.cpp can be compiled at all.
        cp "$OUTC/auto_gen/host_stub.cpp" "$hc/"
        local t
        for t in aic aiv mix; do : > "$hc/merge_obj/${t}_build.flag"; done
        head -c 1000 /dev/zero > "$hc/merge_obj/device_aic.o"
        head -c 1000 /dev/zero > "$hc/merge_obj/device_aiv.o"
        head -c 1000 /dev/zero > "$hc/merge_obj/device.o"
        local upd
        upd=$(q python3 update_host_stub.py "$hc" "$hc/merge_obj" "$SOC_LOWER" "$TARGET")
        echo "## update_host_stub.py (cwd $UTIL): $upd"
        (cd "$UTIL" && eval "$upd") 2>&1 | sed 's/^/    /'
        echo
        local dumpflag variant rc
        for variant in as-built other; do
            # function.cmake gives ${device_target}_host_stub_obj ASCENDC_DUMP=0 iff the target has it
            if [[ ($variant == as-built && $DEFMODE == cann) || ($variant == other && $DEFMODE != cann) ]]; then
                dumpflag=-DASCENDC_DUMP=0
            else
                dumpflag=
            fi
            local cc=(g++ -fPIC -O2 -std=c++17 -fvisibility-inlines-hidden -fstack-protector-strong
                      -D_GLIBCXX_USE_CXX11_ABI=0 -D_FORTIFY_SOURCE=2 ${dumpflag:+"$dumpflag"}
                      -I"$HERE/standin_host_include" -c "$hc/host_stub.cpp" -o "$hc/host_stub.o")
            echo "## host_stub.cpp, ${dumpflag:-no ASCENDC_DUMP define} ($variant: $([[ $variant == as-built ]] && echo 'what CANN compiles for this case' || echo 'for comparison'))"
            echo "\$ $(q "${cc[@]}")"
            if "${cc[@]}" > "$hc/cc.log" 2>&1; then rc=0; else rc=$?; fi
            echo "rc=$rc"
            grep -E 'error|warning' "$hc/cc.log" | sed "s#$hc/##" | head -20 | sed 's/^/    /' || true
            if [[ $rc == 0 ]]; then
                echo "undefined symbols (nm -C --undefined-only), i.e. what the link must supply:"
                nm -C --undefined-only "$hc/host_stub.o" | awk '{$1=""; print "   "$0}' | grep -v '^ *$' || true
            fi
            echo
        done
        local h pre
        for h in "$inc"/*.h; do
            for pre in none stdint; do
                local tu
                if [[ $pre == stdint ]]; then tu="#include <stdint.h>"$'\n'; else tu=""; fi
                tu+="#include \"$(basename "$h")\""$'\n'
                echo "## $(basename "$h") compiled alone$([[ $pre == stdint ]] && echo ', after #include <stdint.h>')"
                if printf '%s' "$tu" | g++ -std=c++17 -fsyntax-only -x c++ - -I"$inc" -I"$HERE/standin_host_include" \
                        > "$hc/h.log" 2>&1; then rc=0; else rc=$?; fi
                echo "rc=$rc"
                grep -E 'error' "$hc/h.log" | sed "s#$inc/##" | head -8 | sed 's/^/    /' || true
            done
        done
    } > "$report"
}

run_case() {  # name defmode incdirs(colon-separated, may be empty) spec...
    local name=$1; DEFMODE=$2; local incdirs=$3; shift 3
    WORK=$WORK_ROOT/$name
    BUILD=$WORK/build
    OUTC=$OUT/$name
    DEFINES=$(defines_for "$DEFMODE")
    rm -rf "$WORK" "$OUTC"
    mkdir -p "$WORK/src" "$OUTC/_inputs"
    SRCS=() INCFLAGS=()
    local spec origin=() d
    for spec in "$@"; do
        local file dir
        if [[ ! -e $spec && $spec =~ ^([0-9a-f]{7,40}):(.+)$ ]]; then
            local rev=${BASH_REMATCH[1]} path=${BASH_REMATCH[2]}
            dir=$WORK/git/$rev
            mkdir -p "$dir"
            git -C "$REPO" archive "$rev" "$(dirname "$path")" | tar -x -C "$dir"
            file=$dir/$path
            origin+=("$spec (opjudge commit $(git -C "$REPO" rev-parse "$rev"), blob $(git -C "$REPO" rev-parse "$rev:$path"))")
        else
            file=$(realpath "$spec")
            origin+=("$(realpath --relative-to="$REPO" "$file") (work tree; git hash-object $(git hash-object "$file"))")
        fi
        cp "$file" "$WORK/src/"
        SRCS+=("$WORK/src/$(basename "$file")")
        INCFLAGS+=(-I"$(dirname "$file")")
    done
    IFS=: read -ra extra <<< "$incdirs"
    for d in "${extra[@]}"; do [[ -n $d ]] && INCFLAGS+=(-I"$d"); done

    local crossnote="CROSSCHECK=0: not run"
    if [[ $CROSSCHECK == 1 ]]; then
        generate real
        local realrc=$GENRC
        rm -rf "$WORK/real"; mkdir -p "$WORK/real"
        cp -r "$BUILD/auto_gen/$TARGET" "$WORK/real/auto_gen"
        cp -r "$BUILD/include/$TARGET" "$WORK/real/include"
        cp "$BUILD/generator_stdout.txt" "$WORK/real/"
        for s in "${PPOBJS[@]}"; do cp "$s" "$WORK/real/"; done
    fi
    generate standins
    [[ $GENRC == 0 ]] || FAILED+=("$name (generator rc=$GENRC)")

    cp -r "$BUILD/auto_gen/$TARGET" "$OUTC/auto_gen"
    cp -r "$BUILD/include/$TARGET" "$OUTC/include"
    cp "$BUILD/generator_stdout.txt" "$OUTC/generator_stdout.txt"
    cp "$PPBUILD/compile_commands.json" "$OUTC/_inputs/"
    local i
    for i in "${!SRCS[@]}"; do cp "${PPOBJS[$i]}" "$OUTC/_inputs/$(basename "${SRCS[$i]}").preprocessed.ii"; done

    if [[ $CROSSCHECK == 1 ]]; then
        {
            echo "# Cross-check: the same generator run, preprocessed with asc-devkit $TAG's real headers"
            echo "# (include/, impl/ at $COMMIT; kernel_tiling/kernel_tiling.h empty) instead of standins.h."
            echo "# Preprocessing command (real headers), per source:"
            echo "#   $(preprocess_cmd real '<src>' '<out>' "${INCFLAGS[@]}")"
            echo "# generator rc: real headers $realrc, stand-ins $GENRC"
            echo "# markers in the preprocessed text (real headers | stand-ins):"
            for i in "${!SRCS[@]}"; do
                local rf=$WORK/real/$(basename "${PPOBJS[$i]}") sf=${PPOBJS[$i]}
                echo "#   $(basename "${SRCS[$i]}"): $(grep -oE '__enable_feature_for_compile_[A-Za-z]+ = [A-Za-z0-9_]+' "$rf" | sort | uniq -c | tr -s ' ' | paste -sd, -) | $(grep -oE '__enable_feature_for_compile_[A-Za-z]+ = [A-Za-z0-9_]+' "$sf" | sort | uniq -c | tr -s ' ' | paste -sd, -)"
            done
            echo "# diff -r <real headers> <stand-ins> of everything the generator wrote:"
            if diff -r "$WORK/real/auto_gen" "$OUTC/auto_gen" && diff -r "$WORK/real/include" "$OUTC/include" \
                && diff "$WORK/real/generator_stdout.txt" "$OUTC/generator_stdout.txt"; then
                echo "IDENTICAL"
            else
                echo "DIFFERENT (diff above)"
                FAILED+=("$name (cross-check differs)")
            fi
        } > "$OUTC/CROSSCHECK.txt" 2>&1
        crossnote="see CROSSCHECK.txt"
    fi

    [[ $HOSTCHECK == 1 ]] && host_checks "$OUTC/host_checks.txt"

    {
        echo "Generated by tests/judge/npu/data/cann_v8.5.0/generator/regen.sh (opjudge); do not edit."
        echo
        echo "generator:  repo cannmirror/asc-devkit, tag $TAG, commit $COMMIT"
        echo "            path cmake/asc/legacy_modules/util/extract_host_stub.py (blob $(blob cmake/asc/legacy_modules/util/extract_host_stub.py))"
        local f
        for f in gen_host_stub.py constants.py process_dump_info.py host_stub_util.py struct_parser.py channel.py update_host_stub.py; do
            echo "            imports/uses cmake/asc/legacy_modules/util/$f (blob $(blob "cmake/asc/legacy_modules/util/$f"))"
        done
        echo "            run with $(python3 --version 2>&1), cwd = the extracted util folder:"
        echo "            $UTIL"
        echo
        echo "inputs:"
        for i in "${!SRCS[@]}"; do echo "  ${origin[$i]}"; echo "    copied to ${SRCS[$i]}"; done
        echo
        echo "defines: $DEFINES   ($( [[ $DEFMODE == cann ]] && echo "as the judge's CMakeLists passes them" || echo "--dump-unset: ASCENDC_DUMP=0 left out"))"
        echo
        echo "preprocessing (stand-in for bisheng -E; $(g++ -dumpfullversion | sed 's/^/g++ /')), cwd $PPBUILD:"
        local c; for c in "${PPCMDS[@]}"; do echo "  $c"; done
        echo
        echo "generator command (exit status $GENRC), cwd $UTIL:"
        echo "  $GENCMD"
        echo
        echo "files: auto_gen/ = -d ($BUILD/auto_gen/$TARGET)"
        echo "       include/  = -hd ($BUILD/include/$TARGET)"
        echo "       generator_stdout.txt = its stdout+stderr; _inputs/ = what it read"
        echo "       (*.preprocessed.ii = the preprocessed file it was given, compile_commands.json)"
        echo "cross-check with the real $TAG headers: $crossnote"
        [[ $HOSTCHECK == 1 ]] && echo "host-side compile checks: host_checks.txt"
    } > "$OUTC/GENERATED_BY.txt"
    chmod -R u+rwX,go+rX "$OUTC"   # the generator writes its files 0600
    echo "$name: generator rc=$GENRC -> $(realpath --relative-to="$REPO" "$OUTC")"
}

FAILED=()
if [[ $# == 0 ]]; then
    rm -rf "$OUT"
    SFAG=$REPO/reference_kernels/sparse_flash_attention_grad/npu
    PROB=$REPO/problems/sparse_flash_attention_grad
    shopt -s nullglob
    sfag=("$SFAG"/*_kernel.cpp)
    shopt -u nullglob
    for f in "${sfag[@]}"; do run_case "$(basename "$f" .cpp)" cann "$PROB" "$f"; done
    if (( ${#sfag[@]} > 1 )); then run_case sfag_library cann "$PROB" "${sfag[@]}"; fi
    if git -C "$REPO" cat-file -e "$PRESPLIT_REV:reference_kernels/sparse_flash_attention_grad/npu/sfag_kernel.cpp" 2>/dev/null; then
        run_case "sfag_kernel.at_${PRESPLIT_REV:0:7}" cann "$PROB" \
            "$PRESPLIT_REV:reference_kernels/sparse_flash_attention_grad/npu/sfag_kernel.cpp"
    fi
    for f in one_kernel assert_kernel assert_msg_kernel two_kernels printf_kernel; do
        run_case "${f}_kernel" cann "" "$HERE/inputs/${f}_kernel.cpp"
    done
    run_case assert_kernel_kernel.dump_unset dump_unset "" "$HERE/inputs/assert_kernel_kernel.cpp"
    run_case team_library cann "" "$HERE/inputs/one_kernel_kernel.cpp" "$HERE/inputs/two_kernels_kernel.cpp"
else
    incs="" name="" defmode=cann files=()
    while (( $# )); do
        case $1 in
            -I) incs+="${incs:+:}$2"; shift 2 ;;
            -I*) incs+="${incs:+:}${1#-I}"; shift ;;
            --name) name=$2; shift 2 ;;
            --dump-unset) defmode=dump_unset; shift ;;
            -h|--help) sed -n '2,25p' "$0"; exit 0 ;;
            *) files+=("$1"); shift ;;
        esac
    done
    (( ${#files[@]} )) || { echo "no input files" >&2; exit 2; }
    if [[ -n $name ]]; then
        run_case "$name" "$defmode" "$incs" "${files[@]}"
    else
        for f in "${files[@]}"; do
            b=$(basename "${f#*:}" .cpp)
            [[ ! -e $f && $f =~ ^([0-9a-f]{7,40}): ]] && b+=".at_${BASH_REMATCH[1]:0:7}"
            [[ $defmode == dump_unset ]] && b+=".dump_unset"
            run_case "$b" "$defmode" "$incs" "$f"
        done
    fi
fi

if (( ${#FAILED[@]} )); then
    printf 'FAILED: %s\n' "${FAILED[@]}" >&2
    exit 1
fi
