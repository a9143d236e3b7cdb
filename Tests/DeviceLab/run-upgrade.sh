#!/usr/bin/env bash
# run-upgrade.sh [OUTDIR] - the upgrade from the previous release as a gym meets it (issue #57):
# the previous release's Debian package installed and run under systemd in the lab VM with
# simulated straps, a class and an HTTP repository, then this checkout's package installed over
# the running service (upgrade.sh), in about 10 minutes: run-all.sh runs it in the full lab
# (scenarios.txt: tier full, so `scripts/test --full`), and `scripts/test --upgrade` alone.
#
# The previous release is the merge-base of HEAD with HEALTHGATE_PREVIOUS_RELEASE (default
# 509386e, the commit before quantity series). Its package is built by that commit's own
# scripts/package, in a `git worktree add --detach` inside this run's temporary directory (removed
# at the end), and kept in the lab cache under the commit id ($cache/previous-release/COMMIT/), so
# a second run does not build it again. This checkout's package is HEALTHGATE_LAB_DEB when set
# (run-all.sh passes the one scripts/test made), else scripts/package's release build
# (HEALTHGATE_SCRATCH_PATH names SwiftPM's scratch path, default .build; HEALTHGATE_BIN=path
# packages that release binary instead). Artifacts: OUTDIR (default /tmp/healthgate-lab-upgrade),
# what upgrade.sh keeps.
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
set -euo pipefail
lab=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$lab/lib/packaged-run.sh"
repository=$(dirname "$(dirname "$lab")")
out=${1:-/tmp/healthgate-lab-upgrade}
command -v dpkg-deb > /dev/null && command -v apt-get > /dev/null ||
  lab_skip "no dpkg-deb/apt-get: the package is a Debian package and the lab takes its kernel from Debian"
began=$SECONDS

# The previous release's package, from the cache or built once.
previous=$(git -C "$repository" merge-base HEAD "${HEALTHGATE_PREVIOUS_RELEASE:-509386e}") ||
  lab_broken "no merge-base of HEAD with ${HEALTHGATE_PREVIOUS_RELEASE:-509386e} (a shallow clone?)"
cached=$lab_cache/previous-release/$previous
previous_deb=
[[ -d $cached ]] && previous_deb=$(find "$cached" -maxdepth 1 -name 'healthgate_*.deb' | head -n 1)
if [[ -z $previous_deb ]]; then
  work=$(mktemp -d "${TMPDIR:-/tmp}/healthgate-upgrade.XXXXXX")
  cleanup() {
    git -C "$repository" worktree remove --force "$work/previous" 2> /dev/null || true
    rm -rf "$work"
  }
  trap cleanup EXIT
  git -C "$repository" worktree add --detach "$work/previous" "$previous" >&2
  lab_say "building the previous release's package ($previous) with its own scripts/package"
  deb=$("$work/previous/scripts/package" --output "$work/package" | tail -n 1) ||
    { echo "FAIL: the previous release's scripts/package failed ($previous)"; exit 1; }
  [[ -f $deb ]] || { echo "FAIL: the previous release's scripts/package printed no package path ($deb)"; exit 1; }
  # Into the cache whole or not at all: a run stopped halfway leaves no package there.
  mkdir -p "$lab_cache/previous-release"
  rm -rf "$cached.partial"
  mkdir "$cached.partial"
  cp "$deb" "$cached.partial/"
  mv "$cached.partial" "$cached"
  previous_deb=$cached/$(basename "$deb")
  cleanup
  trap - EXIT
  echo "the previous release's package: $previous_deb (built in $((SECONDS - began)) s)"
else
  echo "the previous release's package: $previous_deb (cached)"
fi

# This checkout's package.
packaging=$SECONDS
deb=${HEALTHGATE_LAB_DEB:-}
if [[ -z $deb ]]; then
  arguments=()
  [[ -n ${HEALTHGATE_BIN:-} ]] && arguments=(--binary "$HEALTHGATE_BIN")
  deb=$("$repository/scripts/package" "${arguments[@]}" | tail -n 1) || { echo "FAIL: scripts/package failed"; exit 1; }
fi
[[ -f $deb ]] || { echo "FAIL: no package at $deb"; exit 1; }
package_binary "$deb" "$out.binary"
echo "this release's package: $deb (ready in $((SECONDS - packaging)) s)"

status=0
vm=$SECONDS
"$lab/vm/run-scenario.sh" upgrade 1500 "$out" "$previous_deb" "$deb" || status=$?
echo "run-upgrade.sh: scenario status $status; the VM $((SECONDS - vm)) s, $((SECONDS - began)) s in all" >&2
exit "$status"
