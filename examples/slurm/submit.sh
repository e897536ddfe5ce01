#!/bin/bash
# Submits the gate as a Slurm array and its merge after it:
#   GATE_DIR=/shared/kvgate/$(date +%F) examples/slurm/submit.sh
# afterany (not afterok): the merge runs even when a shard failed, and names what is missing.
set -euo pipefail

: "${GATE_DIR:?set GATE_DIR to a new directory on the shared file system}"
export GATE_DIR
mkdir -p "$GATE_DIR"
here=$(dirname "$0")

array=$(sbatch --parsable --export=ALL "$here/gate-array.sbatch")
array=${array%%;*}
sbatch --export=ALL --dependency=afterany:"$array" "$here/merge.sbatch"
echo "array $array: $GATE_DIR/shard-*; merge after it into $GATE_DIR/merged"
