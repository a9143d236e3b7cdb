#!/usr/bin/env bash
# run-all.sh [--gate] [LOGDIR] - the device lab's scenarios, each in its own VM, as declared in
# scenarios.txt beside this script (order, budget, processors, tier).
#   run-all.sh            every scenario (scripts/test --full)
#   run-all.sh --gate     the gate's: the scenarios of tier gate and those of rotation group
#                         (HEAD's commit count) mod 4, or HEALTHGATE_LAB_ROTATION (0 to 3)
# Every scenario runs the release healthgate, the one in the Debian package (the packaged-service
# scenarios install the package itself): HEALTHGATE_LAB_DEB names the package, or
# HEALTHGATE_LAB_DEB_FILE a file that will hold its path (or "failed") once the caller has made it
# (scripts/test builds it beside the debug build), or it is made here first.
#
# The lab runs as many VM processors at once as HEALTHGATE_LAB_JOBS (default 2), or as the first
# word of HEALTHGATE_LAB_JOBS_FILE, read again before each start (scripts/test: 1 beside its unit
# tests, 2 after them). A scenario's processors are its CPUS in scenarios.txt; one that needs more
# than are granted waits, and the others start in the table's order as they fit.
#
# Each scenario's output goes to LOGDIR/NAME.log (default .build/lab-logs), printed whole when it
# ends, with its time against its budget; LOGDIR/results has a line per scenario:
# "NAME STATUS SECONDS START BUDGET" (START in seconds since the epoch; scripts/test's phase table
# reads it).
# Exit: 0 every scenario passed (or the lab cannot run here: status 77 each, reason printed),
# 1 one or more failed, 125 the lab could not be prepared, 64 a bad argument or declaration.
set -uo pipefail
lab=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repository=$(dirname "$(dirname "$lab")")
cd "$repository" || exit 125
tier=full
[[ ${1:-} == --gate ]] && { tier=gate; shift; }
[[ ${1:-} == -* ]] && { sed -n '2,22p' "$0" | cut -c3- >&2; exit 64; }
logs=${1:-.build/lab-logs}
jobs=${HEALTHGATE_LAB_JOBS:-2}
[[ $jobs =~ ^[1-9][0-9]*$ ]] || { echo "run-all.sh: HEALTHGATE_LAB_JOBS must be a whole number from 1" >&2; exit 64; }
rm -rf "$logs"
mkdir -p "$logs"
began=$SECONDS

# The rotation group of this run: HEAD's commit count mod 4, so four consecutive commits run every
# group once.
rotation=${HEALTHGATE_LAB_ROTATION:-$(($(git rev-list --count HEAD 2> /dev/null || echo 0) % 4))}
[[ $rotation =~ ^[0-3]$ ]] || { echo "run-all.sh: HEALTHGATE_LAB_ROTATION must be 0, 1, 2 or 3" >&2; exit 64; }

# scenarios.txt: the scenarios of this run, with their script, budget and processors.
declare -A script_of=() budget_of=() cpus_of=()
scenarios=()
shopt -s nullglob
while read -r name budget cpus scenario_tier _; do
  [[ -z $name || $name == \#* ]] && continue
  [[ $budget =~ ^[0-9]+$ && $cpus =~ ^[12]$ && $scenario_tier =~ ^(gate|rotation-[0-3]|full)$ ]] ||
    { echo "run-all.sh: scenarios.txt: a bad line for $name" >&2; exit 64; }
  found=()
  for scenario in Tests/DeviceLab/run-"$name".sh plugins/*/Lab/run-"$name".sh; do
    [[ -f $scenario ]] && found+=("$scenario")
  done
  ((${#found[@]} == 1)) || { echo "run-all.sh: scenarios.txt names $name, which has ${#found[@]} run-$name.sh" >&2; exit 64; }
  script_of[$name]=${found[0]} budget_of[$name]=$budget cpus_of[$name]=$cpus
  if [[ $tier == full || $scenario_tier == gate || $scenario_tier == "rotation-$rotation" ]]; then
    scenarios+=("$name")
  fi
done < "$lab/scenarios.txt"
# Every scenario script is declared there (the arm64 VM is scripts/test --arm64's).
for scenario in Tests/DeviceLab/run-*.sh plugins/*/Lab/run-*.sh; do
  name=$(basename "$scenario" .sh)
  name=${name#run-}
  [[ $name == all || $name == package-arm64 || -n ${script_of[$name]:-} ]] ||
    { echo "run-all.sh: $scenario is not declared in Tests/DeviceLab/scenarios.txt" >&2; exit 64; }
done
if [[ $tier == gate ]]; then
  echo "=== device lab: the gate's scenarios, rotation group $rotation of 0-3: ${scenarios[*]}"
else
  echo "=== device lab: every scenario: ${scenarios[*]}"
fi

if ! "$lab/vm/build-vm.sh" > "$logs/build-vm.log" 2>&1; then
  status=$?
  cat "$logs/build-vm.log"
  # 77: no qemu or no way to make the VM here; every scenario would say the same.
  [[ $status == 77 ]] && { echo "=== device lab: SKIPPED (the lab cannot run here; reason above)"; exit 0; }
  echo "=== device lab: build-vm.sh FAILED (status $status)"
  exit 125
fi

# The package, and its release binary for every scenario: HEALTHGATE_LAB_DEB, or the path the
# caller writes into HEALTHGATE_LAB_DEB_FILE, or scripts/package here.
if [[ -z ${HEALTHGATE_LAB_DEB:-} && -n ${HEALTHGATE_LAB_DEB_FILE:-} ]]; then
  until content=$(cat "$HEALTHGATE_LAB_DEB_FILE" 2> /dev/null) && [[ -n $content ]]; do sleep 2; done
  [[ $content == failed ]] && { echo "=== device lab: the package was not made (its maker failed); no scenario can run"; exit 125; }
  HEALTHGATE_LAB_DEB=$content
elif [[ -z ${HEALTHGATE_LAB_DEB:-} ]]; then
  HEALTHGATE_LAB_DEB=$(scripts/package 2> "$logs/package.log" | tail -n 1)
  [[ -f $HEALTHGATE_LAB_DEB ]] || { cat "$logs/package.log"; echo "=== device lab: scripts/package FAILED"; exit 125; }
fi
release=$(realpath -m "$logs/release")
mkdir -p "$release"
dpkg-deb --fsys-tarfile "$HEALTHGATE_LAB_DEB" | tar -x -C "$release" ./usr/bin/healthgate ||
  { echo "=== device lab: no usr/bin/healthgate in $HEALTHGATE_LAB_DEB"; exit 125; }
export HEALTHGATE_LAB_DEB HEALTHGATE_BIN=$release/usr/bin/healthgate
# The gate pulls the plug once (the full lab: power-cut.sh's default, once in each kind of window).
[[ $tier == gate ]] && export HEALTHGATE_LAB_POWER_CUTS=${HEALTHGATE_LAB_POWER_CUTS:-1}
echo "=== device lab: the VM and the package ($HEALTHGATE_LAB_DEB) ready in $((SECONDS - began)) s"

# granted: how many VM processors may run now (the jobs file's first word, else $jobs).
granted() {
  local count=
  [[ -n ${HEALTHGATE_LAB_JOBS_FILE:-} ]] && read -r count _ < "$HEALTHGATE_LAB_JOBS_FILE" 2> /dev/null
  [[ $count =~ ^[1-9][0-9]*$ ]] || count=$jobs
  echo "$count"
}

declare -A running=() started=() started_at=()
busy=0
failed=()
# reap_finished: reports each scenario that has ended (its status file written) with its log.
reap_finished() {
  local pid status name seconds budget over
  for pid in "${!running[@]}"; do
    name=${running[$pid]}
    [[ -f $logs/$name.status ]] || continue
    wait "$pid" 2> /dev/null
    status=$(cat "$logs/$name.status")
    unset "running[$pid]"
    busy=$((busy - cpus_of[$name]))
    seconds=$((SECONDS - started[$pid]))
    budget=${budget_of[$name]}
    echo "$name $status $seconds ${started_at[$pid]} $budget" >> "$logs/results"
    over=
    ((seconds * 2 > budget * 3)) && over=", OVER 1.5 times its budget"
    echo "=== device lab: $name ($seconds s of its $budget s budget$over)"
    cat "$logs/$name.log"
    case $status in
      0) echo "=== device lab: $name passed ($seconds s of $budget s$over)" ;;
      77) echo "=== device lab: $name SKIPPED (the lab cannot run here; reason above)" ;;
      *) echo "=== device lab: $name FAILED (status $status, $seconds s of $budget s$over)"; failed+=("$name") ;;
    esac
  done
}
start() {
  local name=$1
  rm -f "$logs/$name.status"
  # The status file tells reap_finished that it ended (wait -n cannot wait with a time limit).
  { HEALTHGATE_LAB_CPUS=${cpus_of[$name]} "${script_of[$name]}" "/tmp/healthgate-lab-$name" > "$logs/$name.log" 2>&1
    echo $? > "$logs/$name.status"; } &
  running[$!]=$name
  started[$!]=$SECONDS
  started_at[$!]=$(date +%s)
  busy=$((busy + cpus_of[$name]))
}

# The first pending scenario, in the table's order, whose processors fit beside those running; one
# that needs more than are granted at all lets those after it go first.
pending=("${scenarios[@]}")
while ((${#pending[@]} > 0)); do
  reap_finished
  chosen=
  capacity=$(granted)
  for index in "${!pending[@]}"; do
    cpus=${cpus_of[${pending[$index]}]}
    if ((cpus > capacity)); then
      # More than the jobs file grants now: later ones go first. More than the lab ever has: alone.
      ((capacity >= jobs && busy == 0)) && { chosen=$index; break; }
      continue
    fi
    ((busy + cpus <= capacity)) && chosen=$index
    break
  done
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
echo "=== device lab: ${#scenarios[@]} scenarios in $((SECONDS - began)) s"
if ((${#failed[@]} > 0)); then
  echo "device lab failures: ${failed[*]}" >&2
  exit 1
fi
