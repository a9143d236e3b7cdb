#!/usr/bin/env bash
# run-scenario.sh NAME LIMIT OUTDIR [ARGUMENT...] - the host side every Tests/DeviceLab/run-*.sh shares.
#
# Builds healthgate (debug; HEALTHGATE_BIN names a ready binary instead), makes the VM ready with
# build-vm.sh, and runs Tests/DeviceLab/NAME.sh in the guest as `NAME.sh REPOSITORY HEALTHGATE`,
# with LIMIT seconds to finish; ARGUMENTs, if any, follow HEALTHGATE. NAME may instead be the path
# of a scenario script inside the checkout (a plugin's own, plugins/NAME/Lab/*.sh). What the
# scenario writes under $LAB_OUT lands in OUTDIR.
# Exit: the scenario's status (0 passed, 1 failed), 77 the lab cannot run on this machine,
# 124 the scenario ran out of time, 125 the lab broke.
set -euo pipefail
vm=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$vm/common.sh"
(($# >= 3)) || { lab_say "usage: run-scenario.sh NAME LIMIT OUTDIR [ARGUMENT...]"; exit 64; }
name=$1 limit=$2 out=$3
shift 3
lab=$(dirname "$vm")
repository=$(dirname "$(dirname "$lab")")

healthgate=${HEALTHGATE_BIN:-}
if [[ -z $healthgate ]]; then
  (cd "$repository" && swift build --product healthgate >&2) || lab_broken "healthgate does not build"
  healthgate=$repository/.build/debug/healthgate
fi
[[ -x $healthgate ]] || lab_broken "no healthgate binary at $healthgate"

"$vm/build-vm.sh"
rm -rf "$out"
mkdir -p "$out"
script=$lab/$name.sh
[[ $name == */* ]] && script=$(realpath "$name")
[[ -f $script ]] || lab_broken "no scenario script $script"
exec "$vm/run-vm.sh" -t "$limit" -o "$out" "$script" "$repository" "$(realpath "$healthgate")" "$@"
