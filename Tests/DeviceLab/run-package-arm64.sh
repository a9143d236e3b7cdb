#!/usr/bin/env bash
# run-package-arm64.sh [OUTDIR] - the arm64 Debian package (`scripts/build-arm64 arm64-package`:
# the cross build, scripts/package --arch arm64 and trixie's lintian) installed, run by systemd
# and removed in an arm64 VM: qemu-system-aarch64 under software emulation, Debian 13's arm64
# kernel, a Debian 13 arm64 root (vm/build-vm.sh with HEALTHGATE_LAB_ARCH=arm64). The checks are
# run-package.sh's, package.sh in the guest. As root. Artifacts: OUTDIR (default
# /tmp/healthgate-lab-package-arm64): what package.sh keeps, plus package-info.txt and vm.txt
# (the VM's boot and run times).
#
# HEALTHGATE_ARM64_DEB=path uses a ready arm64 package instead of making one. The guest sees only
# the checkout of this machine, so a package elsewhere is copied into .build/lab-arm64 first; its
# binary, unpacked there, is the HEALTHGATE argument package.sh reports.
# Time: the first run makes the arm64 root (debootstrap through qemu-user, up to 45 min) and downloads
# the kernel; then the package (seconds when HEAD's cross build is cached) and the VM (80 s on a
# quiet 2-core machine, 13 min at a load average of 20).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
set -euo pipefail
lab=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$lab/vm/common.sh"
repository=$(dirname "$(dirname "$lab")")
out=${1:-/tmp/healthgate-lab-package-arm64}
[[ $(id -u) == 0 ]] || lab_skip "the arm64 package and the arm64 VM's root are made with debootstrap and chroot: run as root"
command -v dpkg-deb > /dev/null && command -v apt-get > /dev/null ||
  lab_skip "no dpkg-deb/apt-get: the package is a Debian package and the lab takes its kernel from Debian"
export HEALTHGATE_LAB_ARCH=arm64

began=$SECONDS
deb=${HEALTHGATE_ARM64_DEB:-}
if [[ -z $deb ]]; then
  deb=$("$repository/scripts/build-arm64" arm64-package | tail -n 1) || { echo "FAIL: scripts/build-arm64 arm64-package failed"; exit 1; }
fi
[[ -f $deb ]] || { echo "FAIL: no arm64 package at '$deb'"; exit 1; }
[[ $(dpkg-deb -f "$deb" Architecture) == arm64 ]] || { echo "FAIL: $deb is for $(dpkg-deb -f "$deb" Architecture), not arm64"; exit 1; }
packaged=$((SECONDS - began))
staging=$repository/.build/lab-arm64
rm -rf "$staging" && mkdir -p "$staging"
deb=$(realpath "$deb")
if [[ $deb != "$repository"/* ]]; then
  cp "$deb" "$staging/" && deb=$staging/${deb##*/}
fi
dpkg-deb --fsys-tarfile "$deb" | tar -x -C "$staging" ./usr/bin/healthgate
echo "package: $deb ($packaged s to make or find)"
info=$(dpkg-deb --info "$deb" && dpkg-deb --contents "$deb")
echo "$info"

# run-scenario.sh's build of healthgate is skipped: HEALTHGATE_BIN is the package's own binary.
vm_began=$SECONDS
status=0
HEALTHGATE_BIN=$staging/usr/bin/healthgate "$lab/vm/run-scenario.sh" package 1800 "$out" "$deb" \
  2> >(tee "$staging/vm.txt" >&2) || status=$?
# The console's lab lines and run-vm.sh's times reach vm.txt through tee; wait for it to flush.
wait
mkdir -p "$out"
echo "$info" > "$out/package-info.txt"
cp "$staging/vm.txt" "$out/vm.txt"
boot=$(sed -n 's/^lab: stage 2 at uptime \([0-9.]*\)s.*/\1/p' "$staging/vm.txt")
echo "run-package-arm64.sh: scenario status $status; boot to the scenario ${boot:-?} s (guest uptime);" \
  "the VM $((SECONDS - vm_began)) s (build-vm.sh and qemu); $((SECONDS - began)) s in all" >&2
exit "$status"
