# lib/packaged-service.sh - sourced by the guest scenarios that install the Debian package
# (package.sh, upgrade.sh), after lib/checks.sh, with $OUT set.
#
# systemd runs for real. The guest's PID 1 is stage2, so systemd is PID 1 of a PID and mount
# namespace of its own (`unshare --pid --fork --mount-proc`, cgroup2 mounted, container mode),
# booted to basic.target: journald, udevd and the D-Bus socket run, as on a machine that booted,
# without the host image's other services. dpkg, systemctl and every check run inside that
# namespace (`inside`), so the maintainer scripts see a running systemd and the unit runs with
# its real sandbox. Sourcing it boots systemd (a failure to boot exits the scenario with 1) and
# defines:
#   inside COMMAND...      COMMAND in systemd's namespaces (its /proc, its PIDs), as root
#   as_service COMMAND...  the same as the service user healthgate
#   unit PROPERTY          the unit's value as systemd has it (systemctl show)
#   service_report         how the service last ended and what it logged, for a failure's context
#   finish                 systemd shut down, then exit with the scenario's status
#   abort MESSAGE          a failure the later checks depend on: FAIL, then finish
say "systemd as PID 1 of its own namespaces"
mountpoint -q /sys/fs/cgroup || mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup ||
  { echo "FAIL: cannot mount cgroup2 at /sys/fs/cgroup"; exit 1; }
# The host is a container image whose policy-rc.d forbids starting services (exit 101), which
# deb-systemd-invoke obeys; a Debian machine has none. This removes the guest's copy only.
rm -f /usr/sbin/policy-rc.d
# systemd-tmpfiles empties /tmp at boot (tmp.conf's "D /tmp"). The guest's /tmp is the host's, and
# the package, or the whole checkout, may live there: the guest's tmp.conf keeps it.
echo 'd /tmp 1777 root root -' > /etc/tmpfiles.d/tmp.conf
# man-db's dpkg trigger re-indexes every manual page, which over 9p under TCG takes about a minute
# per dpkg run; the index is not under test (the page is checked as a file).
rm -f /var/lib/man-db/auto-update
unshare --pid --fork --mount-proc env container=healthgate-lab /lib/systemd/systemd --unit=basic.target \
  > "$OUT/systemd.log" 2>&1 &
UNSHARE=$!
SYSTEMD=
systemd_pid() { SYSTEMD=$(pgrep -P "$UNSHARE") && [[ -n $SYSTEMD ]]; }
poll 10 systemd_pid || { echo "FAIL: systemd did not start"; cat "$OUT/systemd.log"; exit 1; }
# inside COMMAND...: COMMAND in systemd's namespaces (its /proc, its PIDs), as root.
inside() { nsenter --target "$SYSTEMD" --mount --pid -- "$@"; }
STATE=
booted() { STATE=$(inside systemctl is-system-running 2>&1); [[ $STATE == running || $STATE == degraded ]]; }
if poll 120 booted; then
  pass "systemd booted to basic.target in $(inside systemd-detect-virt) mode: $STATE"
  [[ $STATE == degraded ]] && inside systemctl --failed --no-pager
else
  echo "FAIL: systemd did not finish booting within 120 s (state: $STATE)"
  inside systemctl list-jobs --no-pager
  tail -n 30 "$OUT/systemd.log"
  exit 1
fi
as_service() { inside setpriv --reuid=healthgate --regid=healthgate --init-groups "$@"; }
# unit PROPERTY: the unit's value as systemd has it (systemctl show).
unit() { inside systemctl show -P "$1" healthgate.service; }
# service_report: how the service last ended and what it logged, for a failure's context.
service_report() {
  echo "healthgate.service: ActiveState $(unit ActiveState), Result $(unit Result), NRestarts $(unit NRestarts)," \
    "last exit: code $(unit ExecMainCode) status $(unit ExecMainStatus) (code 1 exited, 2 killed by the signal numbered)"
  inside journalctl -u healthgate.service --no-pager -n 12 -o short-monotonic
}
# finish: systemd shut down (in container mode poweroff ends it), the scenario's status.
finish() {
  say "systemd shuts down"
  inside systemctl poweroff --no-block
  # unshare reaps systemd, then exits itself.
  systemd_gone() { [[ ! -e /proc/$SYSTEMD ]]; }
  if poll 60 systemd_gone; then
    pass "systemd stopped"
  else
    fail "systemd did not stop within 60 s"
    kill -KILL "$SYSTEMD" 2> /dev/null
  fi
  wait "$UNSHARE"
  echo "failures: $failures"
  exit $((failures > 0))
}
# abort MESSAGE: a failure the later checks depend on.
abort() { fail "$*"; finish; }
