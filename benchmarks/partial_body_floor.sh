#!/usr/bin/env bash
# How much of the partial-body kernels' time is their memory stream (x86-64, gcc):
#   benchmarks/partial_body_floor.sh JOINTS PATHS ROUNDS
# runs partial_body_kernels.sh on this checkout's kernels (`kernels`) beside two probes built from
# copies of its csrc/ (probes, not kernels: they compute wrong results on purpose):
#   no_math      joints_block's slerp replaced by one add per quaternion component (every load,
#                store, copy and request of the calls kept): what the calls' loops cost without
#                their math
#   no_requests  the same without the software requests (PREFETCH_MIN_RECORDS out of reach): the
#                hardware prefetchers alone
# Every figure is over the kernels' full call, as partial_body_kernels.sh prints it. OFFSET and
# FRAME_JOINTS pass through (see partial_body_kernels.sh). Example, one frame of 1,048,576 joints:
#   benchmarks/partial_body_floor.sh 1048576 avx2,avx512 11
set -euo pipefail
if [ $# -ne 3 ]; then
    sed -n '2,14p' "$0"
    exit 2
fi
here="$(cd "$(dirname "$0")" && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
for probe in no_math no_requests; do
    mkdir -p "$work/$probe"
    cp -r "$here/../csrc" "$work/$probe/"
    python - "$work/$probe/csrc/interp.c" "$probe" <<'EOF'
import sys

path, probe = sys.argv[1:]
source = open(path).read()


def replace(old, new):
    global source
    if source.count(old) != 1:
        sys.exit(f"partial_body_floor.sh: csrc/interp.c no longer holds {old!r} once; update the probe")
    source = source.replace(old, new)


replace("    blend_lanes(mode, 1, &t, ft, qa, qb, q, &sign);\n",
        "    if (ft) { /* the probe: no math */\n"
        "        for (int k = 0; k < 4; k++)\n"
        "            q[0][k] = v_add(qa[0][k], qb[0][k]);\n"
        "        v_store_octs(o, os, idx, q[0], &ra);\n"
        "        return;\n"
        "    }\n"
        "    blend_lanes(mode, 1, &t, ft, qa, qb, q, &sign);\n")
if probe == "no_requests":
    replace("#define PREFETCH_MIN_RECORDS 32768\n", "#define PREFETCH_MIN_RECORDS ((size_t)1 << 62)\n")
open(path, "w").write(source)
EOF
done
"$here/partial_body_kernels.sh" "$1" "$2" "$3" kernels="$here/.." no_math="$work/no_math" \
    no_requests="$work/no_requests"
