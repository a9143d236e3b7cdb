#!/usr/bin/env bash
# run-all.sh [LOGDIR] - every device-lab scenario scripts/test runs (Tests/DeviceLab/run-*.sh and
# plugins/*/Lab/run-*.sh, but the arm64 VM and the upgrade: scripts/test --arm64 and --upgrade run
# those), HEALTHGATE_LAB_JOBS (default 2) VMs at a time, in the order below, those that time what
# they count alone and last.
#
# Before the first VM: the VM's kernel and packages (vm/build-vm.sh, once, so that two scenarios
# never fill its cache at once), the debug healthgate the scenarios run (HEALTHGATE_BIN) and the
# Debian package the packaged-service scenarios install (HEALTHGATE_LAB_DEB: package, power-cut,
# flush-points, watchdog; a release build); either is made here unless the caller names it.
# Each scenario's output goes to LOGDIR/NAME.log (default .build/lab-logs), printed whole when it
# ends, with its time; LOGDIR/results has a line per scenario: "NAME STATUS SECONDS START" (START in
# seconds since the epoch; scripts/test's phase table reads it).
# HEALTHGATE_LAB_DEB_FILE instead of HEALTHGATE_LAB_DEB: the package is on its way; the file will
# hold its path (or "failed"), and until then only the scenarios that do not install it start.
# HEALTHGATE_LAB_JOBS_FILE: a file holding how many VMs may run at once, then the word "quiet" once
# nothing but the lab runs on the machine, read again before each start (scripts/test: "1" beside
# its unit tests, "2" after them, "2 quiet" after its last other phase). Without it the machine
# counts as quiet.
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

# The order: first the long scenarios whose checks do not time anything closely (power cuts, the
# watchdog, flush points), then the longest of the rest; a scenario not named here
# runs after them. Those that install the package wait for it while the others run. Those
# in `alone` count what arrives against what was sent in real time (advertisement rates of at
# least 0.9, a class's tiles): they run last, one VM at a time, on a quiet machine (nothing but
# the lab; beside another VM and the builds their rates fell to 0.78 to 0.84). An idle lab alone is not enough: the others may be done while scripts/test still runs its
# configuration schema, fuzzers and arm64 demo beside the lab.
order=(power-cut watchdog flush-points bluetooth-bonded bluetooth-multi ant-stick bluetooth-cgm ghs bluetooth
  bluetooth-bumble usb-serial bluetooth-health rfcomm-serial strap-between-classes clock-unsynchronized advertisements package class)
alone=(advertisements package class)
scenarios=()
shopt -s nullglob
for name in "${order[@]}"; do
  for scenario in Tests/DeviceLab/run-"$name".sh plugins/*/Lab/run-"$name".sh; do
    [[ -f $scenario ]] && scenarios+=("$scenario")
  done
done
for scenario in Tests/DeviceLab/run-*.sh plugins/*/Lab/run-*.sh; do
  [[ $scenario == *-arm64.sh || $scenario == */run-upgrade.sh || $scenario == */run-all.sh ]] && continue
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
# The package: HEALTHGATE_LAB_DEB names it; or HEALTHGATE_LAB_DEB_FILE names a file that will hold
# its path (or the word "failed") once the caller has made it: scripts/test builds it beside the
# unit tests while the scenarios that need no package run; or it is made here, first.
package_failed=0
package_ready() {
  [[ -n ${HEALTHGATE_LAB_DEB:-} ]] && return 0
  ((package_failed == 0)) || return 0
  local content
  content=$(cat "$HEALTHGATE_LAB_DEB_FILE" 2> /dev/null) || return 1
  case $content in
    "") return 1 ;;
    failed) package_failed=1; echo "=== device lab: the package was not made; the scenarios that install it fail" ;;
    *) export HEALTHGATE_LAB_DEB=$content; echo "=== device lab: the package is ready: $content" ;;
  esac
}
if [[ -z ${HEALTHGATE_LAB_DEB:-} && -z ${HEALTHGATE_LAB_DEB_FILE:-} ]]; then
  if deb=$(scripts/package 2> "$logs/package.log" | tail -n 1) && [[ -f $deb ]]; then
    export HEALTHGATE_LAB_DEB=$deb
  else
    cat "$logs/package.log"
    echo "=== device lab: scripts/package FAILED; each packaged-service scenario tries again"
  fi
fi
echo "=== device lab: the VM and healthgate ($HEALTHGATE_BIN) ready in $((SECONDS - began)) s; the package: ${HEALTHGATE_LAB_DEB:-${HEALTHGATE_LAB_DEB_FILE:+to come (${HEALTHGATE_LAB_DEB_FILE})}}"

# The jobs file's two words (HEALTHGATE_LAB_JOBS_FILE, read again before each start): how many VMs
# at once, then "quiet" or nothing. Without the file: $jobs, quiet.
jobs_file() {
  local count= rest=
  [[ -z ${HEALTHGATE_LAB_JOBS_FILE:-} ]] && { echo "$jobs quiet"; return; }
  read -r count rest < "$HEALTHGATE_LAB_JOBS_FILE" 2> /dev/null
  [[ $count =~ ^[1-9][0-9]*$ ]] || count=$jobs
  echo "$count $rest"
}
# slots: how many VMs at once (scripts/test runs one beside its unit tests, then two).
slots() { local words; words=($(jobs_file)); echo "${words[0]}"; }
# quiet: nothing but the lab runs on the machine.
quiet() { local words; words=($(jobs_file)); [[ ${words[1]:-} == quiet ]]; }
name_of() { local name; name=$(basename "$1" .sh); echo "${name#run-}"; }
is_alone() { [[ " ${alone[*]} " == *" $(name_of "$1") "* ]]; }
# A scenario that installs the package reads HEALTHGATE_LAB_DEB itself, or through
# lib/packaged-run.sh's package_and_vm (code, not a comment, decides). One grep, no pipe: under
# pipefail, `grep -v | grep -q` fails whenever grep -q stops reading first (SIGPIPE).
installs_package() { grep -qE '^[^#]*(HEALTHGATE_LAB_DEB|package_and_vm)' "$1"; }

declare -A running=() started=() started_at=()
failed=()
# reap_finished: reports each scenario that has ended (its status file written) with its log.
reap_finished() {
  local pid status scenario name seconds
  for pid in "${!running[@]}"; do
    scenario=${running[$pid]}
    name=$(name_of "$scenario")
    [[ -f $logs/$name.status ]] || continue
    wait "$pid" 2> /dev/null
    status=$(cat "$logs/$name.status")
    unset "running[$pid]"
    seconds=$((SECONDS - started[$pid]))
    echo "$name $status $seconds ${started_at[$pid]}" >> "$logs/results"
    echo "=== device lab: $scenario ($seconds s)"
    cat "$logs/$name.log"
    case $status in
      0) echo "=== device lab: $scenario passed ($seconds s)" ;;
      77) echo "=== device lab: $scenario SKIPPED (the lab cannot run here; reason above)" ;;
      *) echo "=== device lab: $scenario FAILED (status $status, $seconds s)"; failed+=("$scenario") ;;
    esac
  done
}
start() {
  local scenario=$1 name binary
  name=$(name_of "$scenario")
  # The debug binary for the scenarios that run one; those that install the package take
  # HEALTHGATE_BIN as a release binary to package, so not this one.
  binary=(env HEALTHGATE_BIN="$HEALTHGATE_BIN")
  installs_package "$scenario" && binary=(env -u HEALTHGATE_BIN)
  rm -f "$logs/$name.status"
  if installs_package "$scenario" && ((package_failed)); then
    binary=(sh -c 'echo "no package: its maker failed ($HEALTHGATE_LAB_DEB_FILE)"; exit 125' sh)
  fi
  # The status file tells reap_finished that it ended (wait -n cannot wait with a time limit).
  { "${binary[@]}" "$scenario" "/tmp/healthgate-lab-$name" > "$logs/$name.log" 2>&1; echo $? > "$logs/$name.status"; } &
  running[$!]=$scenario
  started[$!]=$SECONDS
  started_at[$!]=$(date +%s)
}

# The first pending scenario in the order that may start now: not one that installs the package
# before the package is there; one that runs alone only on an idle lab of a quiet machine, and
# nothing beside it.
pending=("${scenarios[@]}")
while ((${#pending[@]} > 0)); do
  reap_finished
  chosen=
  alone_running=0
  for scenario in "${running[@]}"; do is_alone "$scenario" && alone_running=1; done
  if ((!alone_running && ${#running[@]} < $(slots))); then
    package_ready || true
    for index in "${!pending[@]}"; do
      scenario=${pending[$index]}
      installs_package "$scenario" && [[ -z ${HEALTHGATE_LAB_DEB:-} ]] && ((!package_failed)) && continue
      is_alone "$scenario" && { ((${#running[@]} > 0)) || ! quiet; } && break
      chosen=$index
      break
    done
  fi
  if [[ -n $chosen ]]; then
    start "${pending[$chosen]}"
    unset "pending[$chosen]"
    pending=("${pending[@]}")
  else
    sleep 2
  fi
done
while ((${#running[@]} > 0)); do
  reap_finished
  ((${#running[@]} == 0)) || sleep 2
done
echo "=== device lab: ${#scenarios[@]} scenarios, up to $jobs at a time, in $((SECONDS - began)) s"
if ((${#failed[@]} > 0)); then
  echo "device lab failures: ${failed[*]}" >&2
  exit 1
fi
