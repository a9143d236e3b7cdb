# lib/packaged-run.sh - sourced by the host side of the scenarios that boot the lab VM with the
# packaged gateway (run-flush-points.sh, run-power-cut.sh, run-watchdog.sh, run-package.sh,
# run-upgrade.sh), with lab set; it sources vm/common.sh, lib/checks.sh and vm/receivers.sh, and the
# scenario sets repository and out. Functions:
#   package_and_vm            the package in deb (HEALTHGATE_LAB_DEB, else scripts/package's
#                             release build), and the lab's VM built; skips without dpkg-deb
#   package_binary DEB DIR    HEALTHGATE_BIN, when unset, set to the package's own binary, unpacked
#                             into DIR (run-scenario.sh hands the guest a binary; the release
#                             build it came from may be in any scratch path, or gone)
#   receivers_scratch NAME    needs vm/receivers.sh: mosquitto and socat checked, a fresh out,
#                             shared ($out/shared) for the receivers, and scratch, a directory of
#                             the lab's cache named after NAME for the disk images; at exit the
#                             receivers stop and scratch goes (kept with HEALTHGATE_LAB_KEEP=1)
source "$lab/vm/common.sh"
source "$lab/lib/checks.sh"
source "$lab/vm/receivers.sh"

package_and_vm() {
  command -v dpkg-deb > /dev/null || lab_skip "no dpkg-deb: the gateway is installed from its Debian package"
  deb=${HEALTHGATE_LAB_DEB:-}
  [[ -n $deb ]] || deb=$("$repository/scripts/package" | tail -n 1) || lab_broken "scripts/package failed"
  [[ -f $deb ]] || lab_broken "no package at $deb"
  "$lab/vm/build-vm.sh"
}

receivers_scratch() {
  command -v mosquitto > /dev/null && command -v socat > /dev/null || lab_broken "mosquitto or socat missing (build-vm.sh installs them)"
  rm -rf "$out"
  mkdir -p "$out" "$lab_cache/runs"
  shared=$out/shared
  scratch=$(mktemp -d "$lab_cache/runs/$1.XXXXXX")
  trap receivers_scratch_cleanup EXIT
  trap 'exit 130' INT TERM
}

receivers_scratch_cleanup() {
  stop_receivers
  if [[ ${HEALTHGATE_LAB_KEEP:-0} == 1 ]]; then lab_say "disk images kept: $scratch"; else rm -rf "$scratch"; fi
}

package_binary() {
  [[ -z ${HEALTHGATE_BIN:-} ]] || return 0
  mkdir -p "$2"
  dpkg-deb --fsys-tarfile "$1" | tar -x -C "$2" ./usr/bin/healthgate || lab_broken "no usr/bin/healthgate in $1"
  export HEALTHGATE_BIN=$2/usr/bin/healthgate
}
