#!/usr/bin/env bash
# run-power-cut.sh [OUTDIR] - pulls the plug on the packaged gateway (issue 58): the service as
# dpkg installs it, under systemd in the lab VM, its store on an ext4 of its own virtio disk,
# followed by an HTTP repository and an MQTT broker on this machine's loopback; qemu killed with
# SIGKILL at a random instant, HEALTHGATE_LAB_POWER_CUTS times (default 3, one in each kind of
# window, as scripts/test runs it; a long run: 24), each
# cut followed by a boot of the same disks (power-cut.sh runs in each boot).
#
# What a kill keeps: what the guest wrote to its disks reached this machine's page cache (qemu,
# cache=unsafe) and survives; the guest's page cache does not. The cuts fall in three kinds of
# window, as many of each as the count allows, in an order drawn from HEALTHGATE_LAB_SEED (printed;
# set it to repeat a run): during steady ingest (0-8 s after the followers caught up), during a
# burst of `workout end` and `participant assign` (0-2 s after its first answered `workout end`), and during a WAL
# checkpoint (0-0.25 s after SQLite began writing the database file).
#
# After each cut, on the next boot: e2fsck of both disks (in the guest); the store as it was
# found, checked here (lib/store_check.py): PRAGMA integrity_check, every record the repository or
# the broker acknowledged before the cut in the store at that version or a later one (or its
# deletion), every answered `workout end` and `participant assign` stored; systemd starting the
# service by itself; the followers resuming past the anchor the store had at boot. The last boot
# stops the service and checks that both receivers hold every object of the store.
#
# Artifacts (OUTDIR, default /tmp/healthgate-lab-power-cut): boot-N.log (each boot's output),
# shared/ (the receivers' logs http.jsonl and mqtt.jsonl, commands.jsonl, each boot's copy of the
# store and e2fsck's output, windows, checkpoints), checks/ (the verdicts per boot), boot-N/
# (what the guest kept: the configuration, dpkg's log, the journal and store of the last boot),
# summary.txt. HEALTHGATE_LAB_KEEP=1 keeps the disk images (in the lab's cache, path printed).
# The package: HEALTHGATE_LAB_DEB=path, or scripts/package makes one (a release build).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 125 the lab broke.
set -euo pipefail
lab=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$lab/lib/packaged-run.sh"
repository=$(dirname "$(dirname "$lab")")
out=${1:-/tmp/healthgate-lab-power-cut}
cuts=${HEALTHGATE_LAB_POWER_CUTS:-3}
[[ $cuts =~ ^[1-9][0-9]*$ ]] || { lab_say "HEALTHGATE_LAB_POWER_CUTS must be a whole number from 1"; exit 64; }
seed=${HEALTHGATE_LAB_SEED:-$((RANDOM * 32768 + RANDOM))}
RANDOM=$seed
began=$SECONDS

package_and_vm

receivers_scratch power-cut
mkdir -p "$out/checks"
truncate -s 256M "$scratch/store.img"
truncate -s 1G "$scratch/system.img"
start_receivers "$shared" "$repository" || lab_broken "the receivers did not start"
: > "$shared/windows"
: > "$shared/checkpoints"
: > "$shared/commands.jsonl"

# The plan: the cuts' windows, each kind as often as the count allows, shuffled; the last boot
# checks the last cut and stops.
kinds=(burst checkpoint steady)
plan=()
for ((cut = 0; cut < cuts; cut++)); do plan+=("${kinds[cut % 3]}"); done
for ((cut = cuts - 1; cut > 0; cut--)); do
  other=$((RANDOM % (cut + 1)))
  kind=${plan[cut]} plan[cut]=${plan[other]} plan[other]=$kind
done
plan+=(final)
echo "power cut: $cuts cuts, $((cuts + 1)) boots, seed $seed (HEALTHGATE_LAB_SEED), windows: ${plan[*]}"

# random_delay MAX: a random instant in [0, MAX] seconds, to the millisecond.
random_delay() { awk -v r="$(((RANDOM * 32768 + RANDOM) % 1000001))" -v m="$1" 'BEGIN { printf "%.3f", m * r / 1000000 }'; }
# size FILE: its bytes.
size() { stat -c %s "$1"; }
# quiet: the receivers' logs unchanged for a second (the broker's last messages passed on).
quiet() {
  local before after
  before="$(size "$shared/http.jsonl") $(size "$shared/mqtt.jsonl")"
  sleep 1
  after="$(size "$shared/http.jsonl") $(size "$shared/mqtt.jsonl")"
  [[ $before == "$after" ]]
}
vm_seconds=() lost_total=0 checked_total=0 broken=0
offsets=
for ((boot = 1; boot <= cuts + 1; boot++)); do
  action=${plan[boot - 1]}
  printf 'LAB_BOOT=%d\nLAB_ACTION=%s\n' "$boot" "$action" > "$shared/boot.env"
  log=$out/boot-$boot.log
  echo "=== boot $boot of $((cuts + 1)): $action"
  "$lab/vm/run-vm.sh" -t 900 -o "$out/boot-$boot" -d "store=$scratch/store.img" -d "system=$scratch/system.img" \
    "${RECEIVER_FORWARDS[@]}" -s "$shared" -p "$scratch/qemu.pid" \
    "$lab/power-cut.sh" "$repository" "$deb" > "$log" 2>&1 &
  vm=$!
  tail -n +1 -F --pid="$vm" "$log" 2> /dev/null &
  follower=$!
  if [[ $action != final ]]; then
    # The window the guest opens for this boot, then the instant in it.
    opened() { grep -q "^$boot $action " "$shared/windows"; }
    until opened || ! kill -0 "$vm" 2> /dev/null; do sleep 0.05; done
    if opened; then
      case $action in
        steady) delay=$(random_delay 8) ;;
        burst)
          # Within 2 s of the burst's first answered `workout end`: some answered, others on the way.
          answered_end() { grep -q "\"command\": \"workout end\".*\"answered\": true, \"status\": 0, \"boot\": $boot," "$shared/commands.jsonl"; }
          for ((tries = 0; tries < 2400; tries++)); do answered_end && break; sleep 0.05; done
          answered_end || echo "NOTE: boot $boot: no workout end was answered within 120 s of the burst; cut now"
          delay=$(random_delay 2) ;;
        checkpoint)
          # Cut at the next checkpoint's start, within 0.25 s; without one within 120 s, say so.
          count=$(grep -c "^$boot " "$shared/checkpoints" || true)
          for ((tries = 0; tries < 2400; tries++)); do
            (($(grep -c "^$boot " "$shared/checkpoints" || true) > count)) && break
            sleep 0.05
          done
          (($(grep -c "^$boot " "$shared/checkpoints" || true) > count)) ||
            echo "NOTE: boot $boot: no WAL checkpoint began within 120 s of the window; cut at its end"
          delay=$(random_delay 0.25) ;;
      esac
      sleep "$delay"
      kill -KILL "$(cat "$scratch/qemu.pid")" 2> /dev/null || true
      echo "=== boot $boot: plug pulled ${delay} s into the $action window"
    else
      echo "FAIL: boot $boot ended before it opened its $action window"
      failures=$((failures + 1))
    fi
  fi
  status=0
  wait "$vm" || status=$?
  wait "$follower" 2> /dev/null || true
  seconds=$(sed -n 's/.*status [0-9]*, \([0-9.]*\) s from qemu start to exit.*/\1/p' "$log" | tail -n 1)
  vm_seconds+=("${seconds:-?}")
  case $action:$status in
    final:0 | final:1) ;;
    final:*) echo "FAIL: the last boot ended with status $status"; broken=1 ;;
    *:137) ;;
    *) echo "FAIL: boot $boot ended with status $status instead of being cut"; failures=$((failures + 1)) ;;
  esac
  guest=$(cat "$shared/boot-$boot/failures" 2> /dev/null || echo unknown)
  [[ $guest == 0 ]] || { echo "FAIL: boot $boot: the guest's checks failed ($guest; boot-$boot.log)"; failures=$((failures + 1)); }

  # The store as boot N found it against what was acknowledged before cut N-1.
  if ((boot > 1)); then
    copy=$scratch/check-$boot
    mkdir -p "$copy"
    cp "$shared/boot-$boot"/samples.sqlite* "$copy/" 2> /dev/null || true
    arguments=(--http "$shared/http.jsonl@${offsets[0]}" --mqtt "$shared/mqtt.jsonl@${offsets[1]}"
               --commands "$shared/commands.jsonl@${offsets[2]}" --summary "$out/checks/boot-$boot.json")
    if [[ -f $copy/samples.sqlite ]]; then
      /usr/bin/python3 "$lab/lib/store_check.py" check "$copy/samples.sqlite" "${arguments[@]}" > "$out/checks/boot-$boot.txt" 2>&1 || true
      echo "--- cut $((boot - 1)) (${plan[boot - 2]} window), the store boot $boot found:"
      verdicts "$out/checks/boot-$boot.txt"
    else
      fail "cut $((boot - 1)): boot $boot found no store to check"
    fi
  fi
  if [[ $action != final ]]; then
    poll 20 quiet || true
    offsets=("$(size "$shared/http.jsonl")" "$(size "$shared/mqtt.jsonl")" "$(size "$shared/commands.jsonl")")
    echo "${offsets[*]}" > "$shared/cut-$boot.offsets"
  fi
done

echo "--- the last boot, after a graceful stop: what each follower's cursor passed is at its receiver"
if [[ -f $shared/boot-$((cuts + 1))/final-samples.sqlite ]]; then
  copy=$scratch/check-final
  mkdir -p "$copy"
  for file in "$shared/boot-$((cuts + 1))"/final-samples.sqlite*; do cp "$file" "$copy/${file##*/final-}"; done
  /usr/bin/python3 "$lab/lib/store_check.py" check "$copy/samples.sqlite" --http "$shared/http.jsonl" --mqtt "$shared/mqtt.jsonl" \
    --converged-only --summary "$out/checks/final.json" > "$out/checks/final.txt" 2>&1 || true
  verdicts "$out/checks/final.txt"
else
  fail "the last boot left no store to check"
fi

# The counts for the issue's closing note.
/usr/bin/python3 - "$out/checks" "$cuts" "${plan[*]}" "${vm_seconds[*]}" "$((SECONDS - began))" > "$out/summary.txt" <<'PYTHON'
import glob, json, os, sys
checks, cuts, plan, seconds, wall = sys.argv[1], int(sys.argv[2]), sys.argv[3].split(), sys.argv[4].split(), sys.argv[5]
rows = sorted((int(os.path.basename(path)[5:-5]), json.load(open(path))) for path in glob.glob(os.path.join(checks, "boot-*.json")))
print(f"cuts {cuts}, boots {cuts + 1}; windows: " + ", ".join(f"{kind} {plan[:-1].count(kind)}" for kind in ("burst", "checkpoint", "steady")))
vm = [float(s) for s in seconds if s != "?"]
print(f"VM time {sum(vm):.0f} s (qemu start to exit, per boot: {' '.join(seconds)}); the whole run {wall} s")
# Each check is cumulative (everything acknowledged before the cut); what a cut lost is what its
# check finds lost that the check before it did not.
names = {"the repository": "repository", "the broker": "broker", "workout end": "workout end", "participant assign": "participant assign"}
before = {name: (0, set()) for name in names}
totals = {name: [0, 0] for name in names}
lossy = 0
for boot, row in rows:
    lossy += any(set(row.get(name, {}).get("lost_uuids", [])) - before[name][1] for name in ("the repository", "the broker"))
    parts = []
    for name, label in names.items():
        entry = row.get(name, {})
        count = entry.get("records", entry.get("answered", 0))
        lost = set(entry.get("lost_uuids", []))
        new, newly_lost = count - before[name][0], len(lost - before[name][1])
        before[name] = (count, lost)
        totals[name][0] += new
        totals[name][1] += newly_lost
        versions = f" ({entry['versions']} versions in all)" if "versions" in entry else ""
        parts.append(f"{label} {new} {'records' if name.startswith('the') else 'answered'}{versions}, {newly_lost} lost")
    print(f"cut {boot - 1} ({plan[boot - 2]}): " + "; ".join(parts))
print("in all: " + "; ".join(f"{label}: {totals[name][1]} of {totals[name][0]} lost" for name, label in names.items())
      + f"; cuts that lost an acknowledged record: {lossy} of {len(rows)}")
PYTHON
cat "$out/summary.txt"
echo "run-power-cut.sh: failures $failures; $((SECONDS - began)) s in all" >&2
((broken)) && exit "$LAB_BROKEN"
exit $((failures > 0))
