# common.sh - sourced by build-vm.sh and run-vm.sh (host side of the device lab).
#
# Where the lab keeps what it downloads and builds, and the exit codes every lab script shares.
# The cache is per user: the kernel package (~70 MB), its extracted modules and the initramfs,
# plus one short-lived directory per VM run.

# Exit codes: a scenario that passed, that failed, that cannot run on this machine at all
# (the automake SKIP convention, which scripts/test reports as skipped), that timed out in the
# guest, and a lab that broke before the scenario could report.
readonly LAB_SKIP=77 LAB_TIMEOUT=124 LAB_BROKEN=125

lab_cache=${HEALTHGATE_LAB_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/healthgate-devicelab}

lab_say() { printf '%s: %s\n' "${0##*/}" "$*" >&2; }
lab_broken() { lab_say "error: $*"; exit "$LAB_BROKEN"; }
lab_skip() { lab_say "SKIP: $*"; exit "$LAB_SKIP"; }
