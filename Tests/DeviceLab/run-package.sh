#!/usr/bin/env bash
# run-package.sh [OUTDIR] - the Debian package (scripts/package) checked by lintian here, then
# installed, run by systemd and removed in the device-lab VM (package.sh). About 5 minutes under
# TCG, most of it the release build. Artifacts: OUTDIR (default /tmp/healthgate-lab-package):
# what package.sh keeps, plus lintian.txt and package-info.txt.
#
# The package is built from a release build with the Swift runtime linked in (scripts/package;
# HEALTHGATE_SCRATCH_PATH names SwiftPM's scratch path, default .build). HEALTHGATE_BIN=path
# packages that binary instead, which must be such a build; HEALTHGATE_LAB_DEB=path uses a ready
# package (scripts/test makes one for every packaged-service scenario), whose own binary the guest
# is told of. No debug build is made.
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
set -euo pipefail
lab=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$lab/lib/packaged-run.sh"
repository=$(dirname "$(dirname "$lab")")
out=${1:-/tmp/healthgate-lab-package}
command -v dpkg-deb > /dev/null && command -v apt-get > /dev/null ||
  lab_skip "no dpkg-deb/apt-get: the package is a Debian package and the lab takes its kernel from Debian"

began=$SECONDS
arguments=()
[[ -n ${HEALTHGATE_BIN:-} ]] && arguments=(--binary "$HEALTHGATE_BIN")
deb=${HEALTHGATE_LAB_DEB:-}
[[ -n $deb ]] || deb=$("$repository/scripts/package" "${arguments[@]}" | tail -n 1) || { echo "FAIL: scripts/package failed"; exit 1; }
[[ -f $deb ]] || { echo "FAIL: scripts/package printed no package path ($deb)"; exit 1; }
package_binary "$deb" "$out.binary"
echo "package: $deb (scripts/package: $((SECONDS - began)) s)"
info=$(dpkg-deb --info "$deb" && dpkg-deb --contents "$deb")
echo "$info"

# The package as lintian sees it: no error or warning (informational tags are listed; those the
# package overrides are in /usr/share/lintian/overrides/healthgate with their reasons).
if command -v lintian > /dev/null; then
  lintian_status=0
  linted=$(lintian --fail-on error,warning --display-info --show-overrides "$deb" 2>&1) || lintian_status=$?
  echo "$linted"
  ((lintian_status == 0)) && pass "lintian --fail-on error,warning $(basename "$deb")" ||
    fail "lintian --fail-on error,warning $(basename "$deb") (status $lintian_status)"
else
  linted="lintian is not installed"
  fail "lintian is not installed (scripts/install-dependencies --test installs it)"
fi

status=0
"$lab/vm/run-scenario.sh" package 900 "$out" "$deb" || status=$?
mkdir -p "$out"
echo "$linted" > "$out/lintian.txt"
echo "$info" > "$out/package-info.txt"
echo "run-package.sh: scenario status $status; lintian failures $failures; $((SECONDS - began)) s in all" >&2
((status != 0)) && exit "$status"
exit $((failures > 0))
