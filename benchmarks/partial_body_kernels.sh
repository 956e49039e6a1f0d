#!/usr/bin/env bash
# Partial-body blending kernels of several builds, side by side in one process (x86-64, gcc):
#   benchmarks/partial_body_kernels.sh JOINTS PATHS ROUNDS NAME=TREE [NAME=TREE ...]
# TREE is a checkout holding csrc/ (the current one, or one made by `git worktree add DIR COMMIT`);
# NAME labels it in the table (a C identifier). Each tree's csrc/interp.c (or slerp.c, partial_body.c
# and joint_index.c) is compiled for the four
# x86 paths with setup.py's flags, its symbols prefixed with NAME_, and linked into the driver
# partial_body_kernels.c, which times every build's kernels round by round against the first
# build's full call. Example, this checkout against commit 44eb6fa:
#   git worktree add ../base 44eb6fa
#   benchmarks/partial_body_kernels.sh 1024 sse,avx2,avx512 61 base=../base new=.
# OFFSET=16 in the environment shifts every list by 16 bytes from 64-byte alignment; OFFSET=48,0,16
# shifts joints, blend and out each by its own offset (NumPy places small arrays 16 bytes apart).
# FRAME_JOINTS=31 makes the lists frames of 31 joints, the indexes selecting within each frame.
set -euo pipefail
if [ $# -lt 4 ]; then
    sed -n '2,14p' "$0"
    exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
joints=$1 paths=$2 rounds=$3
shift 3
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
# setup.py's flags, read from it (its setup() runs only as __main__): the common ones, then per x86
# path its JM_ISA value and target flags
mapfile -t setup_flags < <(python - "$here/../setup.py" <<'EOF'
import importlib.util, sys
spec = importlib.util.spec_from_file_location("jointmath_setup", sys.argv[1])
setup = importlib.util.module_from_spec(spec)
spec.loader.exec_module(setup)
print(*setup.COMMON_FLAGS)
for isa in ("scalar", "sse", "avx2", "avx512"):
    value, flags, _ = setup.ISA_TARGETS[isa]
    print(value, *flags)
EOF
)
read -ra flags <<< "${setup_flags[0]}"
isa_flags=("${setup_flags[@]:1}")
builds="" objects=()
for spec in "$@"; do
    name=${spec%%=*} tree=${spec#*=}
    mkdir "$work/$name"
    # the interpolation kernels: csrc/interp.c, or the files it was split into
    sources=("$tree/csrc/interp.c")
    [ -e "${sources[0]}" ] || sources=("$tree/csrc/slerp.c" "$tree/csrc/partial_body.c" "$tree/csrc/joint_index.c")
    for entry in "${isa_flags[@]}"; do
        for source in "${sources[@]}"; do
            # shellcheck disable=SC2086  # the ISA's flags are separate words
            gcc "${flags[@]}" -I"$tree/csrc" -DJM_ISA=${entry%% *} ${entry#* } -c "$source" \
                -o "$work/$name/isa${entry%% *}_$(basename "$source" .c).o"
        done
    done
    ld -r "$work/$name"/isa*.o -o "$work/$name/all.o"
    nm --defined-only -g "$work/$name/all.o" | awk -v p="$name" '{print $3, p "_" $3}' > "$work/$name/symbols"
    objcopy --redefine-syms="$work/$name/symbols" "$work/$name/all.o" "$work/$name.o"
    builds="$builds X($name)" objects+=("$work/$name.o")
done
gcc -O2 -Wall -Wextra "-DBUILDS(X)=$builds" "$here/partial_body_kernels.c" "${objects[@]}" -lm -o "$work/driver"
"$work/driver" "$joints" "$paths" "$rounds"
