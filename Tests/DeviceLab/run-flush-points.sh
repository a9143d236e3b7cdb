#!/usr/bin/env bash
# run-flush-points.sh [OUTDIR] - every flush point of one run of the packaged gateway (issue 58):
# the store's disk logged by dm-log-writes in the VM (flush-points.sh), then the log replayed here
# to each FLUSH, FUA and mark, and each crash state checked (lib/replay-log.py: e2fsck, the store's
# files read with debugfs, lib/store_check.py). The receivers are this machine's, on its loopback
# (vm/receivers.sh), as for run-power-cut.sh.
#
# HEALTHGATE_LAB_FLUSH_RUN_SECONDS (default 20) is the run's length; a longer run has more flush
# points and takes longer to check. HEALTHGATE_LAB_FLUSH_MIN_STATES (100) is the fewest crash states
# the run must give. Artifacts (OUTDIR, default /tmp/healthgate-lab-flush-points): flush-points.log,
# shared/ (the receivers' logs, commands.jsonl, marks.jsonl), replay.txt (the verdicts), replay.json
# (the counts), the guest's config.json, dpkg-install.log, systemd.log.
# The package: HEALTHGATE_LAB_DEB=path, or scripts/package makes one (a release build).
# Exit: 0 passed, 1 failed, 77 the lab cannot run here, 124 timed out, 125 the lab broke.
set -euo pipefail
lab=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$lab/lib/packaged-run.sh"
repository=$(dirname "$(dirname "$lab")")
out=${1:-/tmp/healthgate-lab-flush-points}
run_seconds=${HEALTHGATE_LAB_FLUSH_RUN_SECONDS:-20}
min_states=${HEALTHGATE_LAB_FLUSH_MIN_STATES:-100}
began=$SECONDS

package_and_vm

receivers_scratch flush-points
# The logged disk is small: every crash state is a copy of it in the guest's memory.
truncate -s 128M "$scratch/store.img"
truncate -s 4G "$scratch/log.img"
start_receivers "$shared" "$repository" || lab_broken "the receivers did not start"
: > "$shared/commands.jsonl"
printf 'LAB_BOOT=1\nLAB_ACTION=record\nFLUSH_RUN_SECONDS=%d\nFLUSH_MARK_SECONDS=0.2\nFLUSH_MIN_STATES=%d\n' \
  "$run_seconds" "$min_states" > "$shared/boot.env"

set +e
"$lab/vm/run-vm.sh" -t 900 -o "$out" -d "store=$scratch/store.img" -d "log=$scratch/log.img" \
  "${RECEIVER_FORWARDS[@]}" -s "$shared" "$lab/flush-points.sh" "$repository" "$deb" 2>&1 | tee "$out/flush-points.log"
status=${PIPESTATUS[0]}
set -e
stop_receivers
((status == 0 || status == 1)) || exit "$status"
echo "the log: $(du -h --apparent-size "$scratch/log.img" | cut -f1) apparent, $(du -h "$scratch/log.img" | cut -f1) written"

echo "--- every crash state of the run, replayed here"
mkdir -p "$scratch/replay"
/usr/bin/python3 "$lab/lib/replay-log.py" "$scratch/log.img" "$(stat -c %s "$scratch/store.img")" "$scratch/replay" \
  "$shared/marks.jsonl" --http "$shared/http.jsonl" --mqtt "$shared/mqtt.jsonl" --commands "$shared/commands.jsonl" \
  --from-mark formatted --min-states "$min_states" --summary "$out/replay.json" > "$out/replay.txt" || true
verdicts "$out/replay.txt"
echo "run-flush-points.sh: the guest's status $status, replay failures $failures; $((SECONDS - began)) s in all" >&2
((status == 0 && failures == 0))
