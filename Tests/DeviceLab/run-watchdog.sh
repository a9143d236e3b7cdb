#!/usr/bin/env bash
# run-watchdog.sh [OUTDIR] - systemd's watchdog on the packaged service (issue 58, watchdog.sh in
# the VM): a gateway whose writer hangs in the kernel (its store's device-mapper device suspended)
# is restarted by systemd; one whose bluetoothd is stopped is not.
#
# Artifacts (OUTDIR, default /tmp/healthgate-lab-watchdog): watchdog.log, the journal of the
# service (journal-hang.txt, journal.txt), `healthgate status` while hung and without bluetoothd,
# dpkg's and btvirt's logs, systemd.log.
# The package: HEALTHGATE_LAB_DEB=path, or scripts/package makes one (a release build).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
set -euo pipefail
lab=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$lab/lib/packaged-run.sh"
repository=$(dirname "$(dirname "$lab")")
out=${1:-/tmp/healthgate-lab-watchdog}
began=$SECONDS

package_and_vm
rm -rf "$out"
mkdir -p "$out" "$lab_cache/runs"
scratch=$(mktemp -d "$lab_cache/runs/watchdog.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
truncate -s 128M "$scratch/store.img"
set +e
"$lab/vm/run-vm.sh" -t 600 -o "$out" -d "store=$scratch/store.img" "$lab/watchdog.sh" "$repository" "$deb" 2>&1 |
  tee "$out/watchdog.log"
status=${PIPESTATUS[0]}
set -e
echo "run-watchdog.sh: status $status; $((SECONDS - began)) s in all" >&2
exit "$status"
