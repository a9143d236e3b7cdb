#!/usr/bin/env bash
# run-all.sh [LOGDIR] - every device-lab scenario scripts/test runs (Tests/DeviceLab/run-*.sh and
# plugins/*/Lab/run-*.sh, but the arm64 VM: scripts/test --arm64 runs that one), HEALTHGATE_LAB_JOBS
# (default 2) VMs at a time, in the order below, those that time what they count alone and last.
#
# Before the first VM: the VM's kernel and packages (vm/build-vm.sh, once, so that two scenarios
# never fill its cache at once), the debug healthgate the scenarios run (HEALTHGATE_BIN) and the
# Debian package the packaged-service scenarios install (HEALTHGATE_LAB_DEB: package, power-cut,
# flush-points, watchdog; a release build); either is made here unless the caller names it.
# Each scenario's output goes to LOGDIR/NAME.log (default .build/lab-logs), printed whole when it
# ends, with its time; LOGDIR/results has a line per scenario: "NAME STATUS SECONDS START" (START in
# seconds since the epoch; scripts/test's phase table reads it).
# Exit: 0 every scenario passed (or the lab cannot run here: status 77 each, reason printed),
# 1 one or more failed, 125 the lab could not be prepared.
set -uo pipefail
lab=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repository=$(dirname "$(dirname "$lab")")
cd "$repository" || exit 125
logs=${1:-.build/lab-logs}
jobs=${HEALTHGATE_LAB_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "run-all.sh: HEALTHGATE_LAB_JOBS must be a whole number from 1" >&2; exit 64; }
rm -rf "$logs"
mkdir -p "$logs"
began=$SECONDS

# The order: first the long scenarios whose checks do not time anything closely (power cuts,
# the watchdog, flush points), beside the heaviest part of scripts/test (the fuzzers' and the
# arm64 build), then the longest of the rest; a scenario not named here runs after them. Those
# in `alone` count what arrives against what was sent in real time (advertisement rates of at
# least 0.9, a class's tiles): they run last, one VM at a time, as on a machine with nothing else
# to do (beside another VM and the builds their rates fell to 0.78 to 0.84).
order=(power-cut watchdog flush-points bluetooth-bonded bluetooth-multi ant-stick bluetooth-cgm bluetooth
  bluetooth-bumble usb-serial bluetooth-health rfcomm-serial clock-unsynchronized advertisements package class)
alone=(advertisements package class)
scenarios=()
shopt -s nullglob
for name in "${order[@]}"; do
  for scenario in Tests/DeviceLab/run-"$name".sh plugins/*/Lab/run-"$name".sh; do
    [[ -f $scenario ]] && scenarios+=("$scenario")
  done
done
for scenario in Tests/DeviceLab/run-*.sh plugins/*/Lab/run-*.sh; do
  [[ $scenario == *-arm64.sh || $scenario == */run-all.sh ]] && continue
  [[ " ${scenarios[*]} " == *" $scenario "* ]] || scenarios+=("$scenario")
done

if ! "$lab/vm/build-vm.sh" > "$logs/build-vm.log" 2>&1; then
  status=$?
  cat "$logs/build-vm.log"
  # 77: no qemu or no way to make the VM here; every scenario would say the same.
  [[ $status == 77 ]] && { echo "=== device lab: SKIPPED (the lab cannot run here; reason above)"; exit 0; }
  echo "=== device lab: build-vm.sh FAILED (status $status)"
  exit 125
fi
# What the scenarios run, unless the caller made it (scripts/test does, before its unit tests
# hold SwiftPM's lock on .build): the debug healthgate, and the package (a release build).
if [[ -z ${HEALTHGATE_BIN:-} ]]; then
  swift build --product healthgate > "$logs/build.log" 2>&1 || { cat "$logs/build.log"; exit 125; }
  HEALTHGATE_BIN=$(swift build --show-bin-path)/healthgate
fi
if [[ -z ${HEALTHGATE_LAB_DEB:-} ]]; then
  if deb=$(scripts/package 2> "$logs/package.log" | tail -n 1) && [[ -f $deb ]]; then
    HEALTHGATE_LAB_DEB=$deb
  else
    cat "$logs/package.log"
    echo "=== device lab: scripts/package FAILED; each packaged-service scenario tries again"
  fi
fi
[[ -n ${HEALTHGATE_LAB_DEB:-} ]] && export HEALTHGATE_LAB_DEB
echo "=== device lab: the VM, healthgate ($HEALTHGATE_BIN) and the package (${HEALTHGATE_LAB_DEB:-none}) ready in $((SECONDS - began)) s"

declare -A running=() started=() started_at=()
failed=()
# reap: waits for one scenario to end, prints its log and verdict.
reap() {
  local pid status=0 scenario name seconds
  wait -n -p pid "${!running[@]}" || status=$?
  scenario=${running[$pid]}
  unset "running[$pid]"
  name=$(basename "$scenario" .sh)
  name=${name#run-}
  seconds=$((SECONDS - started[$pid]))
  echo "$name $status $seconds ${started_at[$pid]}" >> "$logs/results"
  echo "=== device lab: $scenario ($seconds s)"
  cat "$logs/$name.log"
  case $status in
    0) echo "=== device lab: $scenario passed ($seconds s)" ;;
    77) echo "=== device lab: $scenario SKIPPED (the lab cannot run here; reason above)" ;;
    *) echo "=== device lab: $scenario FAILED (status $status, $seconds s)"; failed+=("$scenario") ;;
  esac
}
for scenario in "${scenarios[@]}"; do
  limit=$jobs
  [[ " ${alone[*]} " == *" $(basename "$scenario" .sh | sed 's/^run-//') "* ]] && limit=1
  while ((${#running[@]} >= limit)); do reap; done
  name=$(basename "$scenario" .sh)
  name=${name#run-}
  # The debug binary for the scenarios that run one; those that install the package (they read
  # HEALTHGATE_LAB_DEB) take HEALTHGATE_BIN as a release binary to package, so not this one.
  binary=(env HEALTHGATE_BIN="$HEALTHGATE_BIN")
  grep -q HEALTHGATE_LAB_DEB "$scenario" && binary=(env -u HEALTHGATE_BIN)
  "${binary[@]}" "$scenario" "/tmp/healthgate-lab-$name" > "$logs/$name.log" 2>&1 &
  running[$!]=$scenario
  started[$!]=$SECONDS
  started_at[$!]=$(date +%s)
  # One that runs alone has the machine to itself until it ends.
  ((limit == 1)) && while ((${#running[@]} > 0)); do reap; done
done
while ((${#running[@]} > 0)); do reap; done
echo "=== device lab: ${#scenarios[@]} scenarios, $jobs at a time, in $((SECONDS - began)) s"
if ((${#failed[@]} > 0)); then
  echo "device lab failures: ${failed[*]}" >&2
  exit 1
fi
