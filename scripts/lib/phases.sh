# scripts/lib/phases.sh - sourced by scripts/test: runs the suite's phases, in the foreground or in
# the background, records when each started and ended, and prints where the run's time went.
#
#   phase NAME COMMAND...        runs COMMAND here, its output shown and kept in $phase_logs/NAME.log;
#                                returns its status
#   phase_start NAME COMMAND...  runs COMMAND in the background, in a process group of its own,
#                                its output in $phase_logs/NAME.log
#   phase_wait NAME              waits for a background phase, prints its log (the last
#                                $phase_tail_lines, default 5, when it passed), returns its status
#   phase_stop_all               stops every background phase still running (an EXIT trap); the
#                                table shows each as stopped
#   phase_table                  the table: each phase and device-lab scenario with its start,
#                                end and wall time, its status and what ran beside it, the lines
#                                of each failed one's log that say why, then the whole run
#                                against the budget
#
# Each phase's record is a line in $phase_records: NAME START END STATUS (seconds since the epoch).
# The device lab's scenarios come from its own results file ($phase_lab_results, written by
# Tests/DeviceLab/run-all.sh: NAME STATUS SECONDS START BUDGET).
# HEALTHGATE_TEST_BUDGET_SECONDS: the budget (default 1800, the gate's 30 minutes; --full: 5400).

phase_began=$(date +%s)
phase_budget=${HEALTHGATE_TEST_BUDGET_SECONDS:-1800}
phase_records=.build/phases/records
phase_logs=.build/phases/logs
phase_lab_results=.build/lab-logs/results
rm -rf .build/phases
mkdir -p "$phase_logs"
: > "$phase_records"
declare -A phase_pids=() phase_started=()

phase_clock() { printf '%d:%02d' $((($1 - phase_began) / 60)) $((($1 - phase_began) % 60)); }

phase() {
  local name=$1 began status=0
  shift
  began=$(date +%s)
  echo "=== $name: started at $(phase_clock "$began")"
  # Shown as it comes, and kept in its log for the lines under the table that say why it failed.
  "$@" > >(tee "$phase_logs/$name.log") 2>&1 || status=$?
  echo "$name $began $(date +%s) $status" >> "$phase_records"
  echo "=== $name: $( ((status == 0)) && echo passed || echo "FAILED (status $status)") in $(($(date +%s) - began)) s"
  return "$status"
}

phase_start() {
  local name=$1
  shift
  echo "=== $name: started in the background at $(phase_clock "$(date +%s)") (log: $phase_logs/$name.log)"
  # The subshell records the end when the command ends, not when scripts/test gets to waiting for
  # it; the command runs under setsid so that phase_stop_all can stop all it started.
  (
    began=$(date +%s)
    status=0
    setsid -w "$@" > "$phase_logs/$name.log" 2>&1 < /dev/null &
    echo $! > "$phase_logs/$name.pid"
    wait $! || status=$?
    echo "$name $began $(date +%s) $status" >> "$phase_records"
    exit "$status"
  ) &
  phase_pids[$name]=$!
  phase_started[$name]=$(date +%s)
}

phase_wait() {
  local name=$1 status=0
  wait "${phase_pids[$name]}" || status=$?
  unset "phase_pids[$name]"
  # The whole log when the phase failed, else its end (what it concluded).
  if ((status == 0)); then tail -n "${phase_tail_lines:-5}" "$phase_logs/$name.log"; else cat "$phase_logs/$name.log"; fi
  echo "=== $name: $( ((status == 0)) && echo passed || echo "FAILED (status $status)") (in the background)"
  return "$status"
}

phase_stop_all() {
  local name
  for name in "${!phase_pids[@]}"; do
    [[ -f $phase_logs/$name.pid ]] && kill -- -"$(cat "$phase_logs/$name.pid")" 2> /dev/null
    kill "${phase_pids[$name]}" 2> /dev/null
    echo "$name ${phase_started[$name]} $(date +%s) stopped" >> "$phase_records"
  done
  return 0
}

phase_table() {
  python3 - "$phase_records" "$phase_lab_results" "$phase_began" "$(date +%s)" "$phase_budget" "$phase_logs" <<'PY'
import os, re, sys
records, lab_results, began, ended, budget = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
logs = sys.argv[6]
rows = []  # (name, start, end, status)
budgets = {}  # a lab scenario's budget (Tests/DeviceLab/scenarios.txt, through run-all.sh's results)
for line in open(records):
    name, start, end, status = line.split()
    rows.append((name, int(start), int(end), status))
if os.path.exists(lab_results) and os.path.getmtime(lab_results) >= began:
    for line in open(lab_results):
        fields = line.split()
        if len(fields) == 5:
            name, status, seconds, start, allowed = fields
            rows.append(("lab:" + name, int(start), int(start) + int(seconds), status))
            budgets["lab:" + name] = int(allowed)
rows.sort(key=lambda row: (row[1], row[0]))
clock = lambda t: "%d:%02d" % ((t - began) // 60, (t - began) % 60)
width = max([len(row[0]) for row in rows] + [5])
print("=== scripts/test: where the time went (clock from the run's start; budget: a lab scenario's, "
      "flagged ! over 1.5 times; beside: what ran at the same time)")
print("%-*s %7s %7s %6s %7s  %-7s %s" % (width, "phase", "start", "end", "wall", "budget", "status", "beside"))
for name, start, end, status in rows:
    # What overlapped this phase by at least 10 s, lab scenarios counted as one entry per slot.
    beside = [other for other, s, e, _ in rows if other != name and min(end, e) - max(start, s) >= 10]
    lab = [b for b in beside if b.startswith("lab:")]
    shown = [b for b in beside if not b.startswith("lab:") and not (name.startswith("lab:") and b == "device-lab")]
    if lab:
        shown.append("%d lab scenario%s" % (len(lab), "" if len(lab) == 1 else "s"))
    verdict = {"0": "passed", "77": "skipped", "stopped": "stopped"}.get(status, "FAILED " + status)
    allowed = budgets.get(name)
    shown_budget = "-" if allowed is None else "%d%s" % (allowed, "!" if 2 * (end - start) > 3 * allowed else " ")
    print("%-*s %7s %7s %5ds %7s  %-7s %s" % (width, name, clock(start), clock(end), end - start, shown_budget,
                                             verdict, ", ".join(shown) or "-"))
# Why each failed: the lines of its log that say so (its whole log is further up, but CI keeps
# only the end of the output).
said = re.compile(r"^(FAIL|.*error: |.*FAILED|Test Case .* failed)")
for name, start, end, status in rows:
    if status in ("0", "77", "stopped"):
        continue
    log = os.path.join(os.path.dirname(lab_results), name[4:] + ".log") if name.startswith("lab:") else os.path.join(logs, name + ".log")
    if not os.path.exists(log):
        continue
    lines = [line.rstrip() for line in open(log, errors="replace") if said.match(line)]
    print("=== why %s failed (%s, %d line%s saying so%s):" % (
        name, log, len(lines), "" if len(lines) == 1 else "s", ", the last 12" if len(lines) > 12 else ""))
    for line in lines[-12:]:
        print("  " + line[:300])
total = ended - began
print("=== scripts/test: %d s (%s) against a budget of %d s (%d min)" % (total, clock(ended), budget, budget // 60))
if total > budget:
    print("WARNING: this run took %d s, %d s over the budget of %d s: see the table above for the critical path" % (total, total - budget, budget))
PY
}
