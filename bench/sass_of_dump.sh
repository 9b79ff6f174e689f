#!/usr/bin/env bash
# On the GPU machine: the SASS of the kernels a run wrote with KILN_DUMP=DIR whose names start with
# PATTERN, compiled as NVRTC compiles them (sm_90a, the plane width kiln gives), one .sass each
# under OUTDIR with its HMMA count. (kiln bench keeps its compiled kernels in a folder of its own,
# which it removes, so its cubins are not there to read; the dumped sources are.)
#   bash bench/sass_of_dump.sh DIR PATTERN OUTDIR
set -euo pipefail
dir=$1 pattern=$2 outdir=$3
mkdir -p "$outdir"
for src in "$dir"/"$pattern"*.cu; do
  name=$(basename "$src" .cu)
  nvcc -arch=sm_90a -std=c++17 -DKILN_PLANE_WIDTH=32u -cubin -Xptxas -v -o "$outdir/$name.cubin" "$src" \
    >"$outdir/$name.ptxas.txt" 2>&1
  cuobjdump -sass "$outdir/$name.cubin" >"$outdir/$name.sass"
  echo "$name: $(grep -c HMMA "$outdir/$name.sass") HMMA, $(grep -o 'Used [0-9]* registers' "$outdir/$name.ptxas.txt")"
done
