# lib/checks.sh - sourced by every scenario that runs inside the lab VM: a heading with the
# guest's uptime, PASS and FAIL lines (FAILs counted in $failures), and polling.
failures=0
# say TEXT: a heading, and the start of a step in the scenario's table of steps: each heading's
# uptime and text go to $LAB_STEPS (stage2 sets it), from which stage2 prints every step with its
# time once the scenario ends (vm/stage2, "steps").
say() {
  local uptime
  uptime=$(cut -d' ' -f1 /proc/uptime)
  printf '\n--- [%6.1fs] %s\n' "$uptime" "$*"
  [[ -z ${LAB_STEPS:-} ]] || printf '%s %s\n' "$uptime" "$*" >> "$LAB_STEPS"
}
pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
# poll SECONDS COMMAND...: re-run COMMAND every 0.25 s until it succeeds or time runs out. The
# time is multiplied by LAB_POLL_SCALE (run-vm.sh: 1, and 3 in the emulated arm64 guest).
poll() { local limit=$((SECONDS + $1 * ${LAB_POLL_SCALE:-1})); shift
  until "$@"; do ((SECONDS >= limit)) && return 1; sleep 0.25; done; }
# verdicts FILE: a PASS for each line "ok TEXT", the TEXT of each line "note TEXT" (a count the
# checker reports without judging it), and a FAIL for any other line of FILE ("FAIL TEXT", or the
# checker's error), and a FAIL when FILE holds none.
verdicts() {
  local verdict text
  [[ -s $1 ]] || { fail "no verdicts in $1"; return; }
  while read -r verdict text; do
    case $verdict in
      ok) pass "$text" ;;
      note) echo "$text" ;;
      FAIL) fail "$text" ;;
      *) fail "$verdict $text" ;;
    esac
  done < "$1"
}
