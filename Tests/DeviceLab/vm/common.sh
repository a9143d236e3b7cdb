# common.sh - sourced by build-vm.sh and run-vm.sh (host side of the device lab).
#
# Where the lab keeps what it downloads and builds, the exit codes every lab script shares, and
# the guest's architecture. The cache is per user: the kernel package (~70 MB), its extracted
# modules and the initramfs, plus one short-lived directory per VM run; for arm64 also the
# guest's own Debian 13 root (~700 MB).

# Exit codes: a scenario that passed, that failed, that cannot run on this machine at all
# (the automake SKIP convention, which scripts/test reports as skipped), that timed out in the
# guest, and a lab that broke before the scenario could report.
readonly LAB_SKIP=77 LAB_TIMEOUT=124 LAB_BROKEN=125

lab_cache=${HEALTHGATE_LAB_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/healthgate-devicelab}

lab_say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
lab_broken() { lab_say "error: $*"; exit "$LAB_BROKEN"; }
lab_skip() { lab_say "SKIP: $*"; exit "$LAB_SKIP"; }

# The guest's architecture: amd64 (default) boots this machine's own root under Debian's amd64
# kernel; arm64 boots a Debian 13 arm64 root made by build-vm.sh under Debian 13's arm64 kernel
# (qemu-system-aarch64, software emulation), with the checkout shared at its own path.
lab_arch=${HEALTHGATE_LAB_ARCH:-amd64}
case $lab_arch in
  amd64) lab_env=$lab_cache/vm.env ;;
  arm64) lab_env=$lab_cache/vm-arm64.env ;;
  *) printf '%s: HEALTHGATE_LAB_ARCH must be amd64 or arm64, not %s\n' "${0##*/}" "$lab_arch" >&2; exit 64 ;;
esac
