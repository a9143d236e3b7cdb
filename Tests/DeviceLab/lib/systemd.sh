# lib/systemd.sh - sourced by the scenarios that run the packaged service under a real systemd in
# the guest (package.sh, power-cut.sh, flush-points.sh, watchdog.sh), after lib/checks.sh. Expects
# OUT.
#
# systemd runs as PID 1 of a PID and mount namespace of its own (`unshare --pid --fork
# --mount-proc`, cgroup2 mounted, container mode): journald, udevd and the D-Bus socket run as on
# a machine that booted, and units run with their whole sandbox. dpkg, systemctl and every check
# run inside that namespace (`inside`), so maintainer scripts see a running systemd.

# start_systemd TARGET: systemd booted to TARGET (basic.target: journald, udevd, D-Bus; or
# multi-user.target: what an enabled service is started by at boot), its output in
# $OUT/systemd.log; sets SYSTEMD (its PID) and UNSHARE. Returns 1, having said why, when it did
# not start or finish booting within 120 s.
start_systemd() {
  local target=$1
  mountpoint -q /sys/fs/cgroup || mount -t cgroup2 -o nsdelegate cgroup2 /sys/fs/cgroup ||
    { echo "FAIL: cannot mount cgroup2 at /sys/fs/cgroup"; return 1; }
  # The host is a container image whose policy-rc.d forbids starting services (exit 101), which
  # deb-systemd-invoke obeys; a Debian machine has none. This removes the guest's copy only.
  rm -f /usr/sbin/policy-rc.d
  # systemd-tmpfiles empties /tmp at boot (tmp.conf's "D /tmp"). The guest's /tmp is the host's,
  # and the package, or the whole checkout, may live there: the guest's tmp.conf keeps it.
  echo 'd /tmp 1777 root root -' > /etc/tmpfiles.d/tmp.conf
  # man-db's dpkg trigger re-indexes every manual page, which over 9p under TCG takes about a
  # minute per dpkg run; the index is not under test (the page is checked as a file).
  rm -f /var/lib/man-db/auto-update
  # dpkg's database in the guest's memory, from the one tar build-vm.sh packed (LAB_DPKG_DATABASE):
  # over 9p every dpkg and dpkg-query in the maintainer scripts reads thousands of small files.
  if [[ -n ${LAB_DPKG_DATABASE:-} && -f $LAB_DPKG_DATABASE ]] && ! mountpoint -q /var/lib/dpkg; then
    mkdir -p /run/lab-dpkg && tar -C /run/lab-dpkg -xf "$LAB_DPKG_DATABASE" && mount --bind /run/lab-dpkg/dpkg /var/lib/dpkg ||
      { echo "FAIL: cannot unpack dpkg's database from $LAB_DPKG_DATABASE"; return 1; }
  fi
  unshare --pid --fork --mount-proc env container=healthgate-lab /lib/systemd/systemd --unit="$target" \
    >> "$OUT/systemd.log" 2>&1 &
  UNSHARE=$!
  SYSTEMD=
  systemd_pid() { SYSTEMD=$(pgrep -P "$UNSHARE") && [[ -n $SYSTEMD ]]; }
  poll 10 systemd_pid || { echo "FAIL: systemd did not start"; cat "$OUT/systemd.log"; return 1; }
  STATE=
  booted() { STATE=$(inside systemctl is-system-running 2>&1); [[ $STATE == running || $STATE == degraded ]]; }
  if poll 120 booted; then
    pass "systemd booted to $target in $(inside systemd-detect-virt) mode: $STATE"
    [[ $STATE == degraded ]] && inside systemctl --failed --no-pager
    return 0
  fi
  echo "FAIL: systemd did not finish booting within 120 s (state: $STATE)"
  inside systemctl list-jobs --no-pager
  tail -n 30 "$OUT/systemd.log"
  return 1
}

# lean_systemd: before start_systemd, masks (symlinks to /dev/null in /etc) what the guest's
# systemd would otherwise start and that neither the service nor its checks use: the host image's
# own services and timers (a database, a broker, a metrics server, apt and man-db jobs), the
# generators of what the guest has none of (init scripts, encrypted or verity disks, gettys,
# PostgreSQL clusters), and logins, consoles and binfmt. Under TCG every unit and generator costs
# seconds; the power-cut scenarios boot systemd many times (and daemon-reload, which reruns the
# generators, in dpkg's maintainer scripts).
lean_systemd() {
  local name
  mkdir -p /etc/systemd/system-generators
  for name in postgresql-generator systemd-cryptsetup-generator systemd-debug-generator systemd-getty-generator \
    systemd-gpt-auto-generator systemd-hibernate-resume-generator systemd-integritysetup-generator \
    systemd-rc-local-generator systemd-run-generator systemd-system-update-generator systemd-sysv-generator \
    systemd-veritysetup-generator; do
    ln -sfn /dev/null "/etc/systemd/system-generators/$name"
  done
  for name in /etc/systemd/system/multi-user.target.wants/*.service /etc/systemd/system/timers.target.wants/*.timer \
    /etc/systemd/system/sysinit.target.wants/*.service; do
    [[ -e $name && ${name##*/} != healthgate.service ]] && ln -sfn /dev/null "/etc/systemd/system/${name##*/}"
  done
  for name in getty.target console-getty.service systemd-logind.service systemd-user-sessions.service \
    systemd-update-utmp.service systemd-update-utmp-runlevel.service systemd-binfmt.service \
    proc-sys-fs-binfmt_misc.automount systemd-ask-password-wall.path systemd-ask-password-console.path \
    sys-kernel-debug.mount sys-kernel-tracing.mount sys-kernel-config.mount sys-fs-fuse-connections.mount \
    dev-hugepages.mount dev-mqueue.mount systemd-firstboot.service systemd-repart.service \
    systemd-pcrphase.service systemd-pcrphase-sysinit.service; do
    ln -sfn /dev/null "/etc/systemd/system/$name"
  done
}

# inside COMMAND...: COMMAND in systemd's namespaces (its /proc, its PIDs), as root.
inside() { nsenter --target "$SYSTEMD" --mount --pid -- "$@"; }
# as_service COMMAND...: COMMAND inside, as the package's system user.
as_service() { inside setpriv --reuid=healthgate --regid=healthgate --init-groups "$@"; }
# unit PROPERTY: healthgate.service's value as systemd has it (systemctl show).
unit() { inside systemctl show -P "$1" healthgate.service; }

# service_report: how the service last ended and what it logged, for a failure's context.
service_report() {
  echo "healthgate.service: ActiveState $(unit ActiveState), Result $(unit Result), NRestarts $(unit NRestarts)," \
    "last exit: code $(unit ExecMainCode) status $(unit ExecMainStatus) (code 1 exited, 2 killed by the signal numbered)"
  inside journalctl -u healthgate.service --no-pager -n 12 -o short-monotonic
}

# stop_systemd: systemd shut down (in container mode poweroff ends it), a PASS or FAIL for it.
stop_systemd() {
  say "systemd shuts down"
  # poweroff.target itself, as `systemctl poweroff` starts it (without asking logind, which a
  # lean boot masks).
  inside systemctl --no-block --job-mode=replace-irreversibly start poweroff.target
  # unshare reaps systemd, then exits itself.
  systemd_gone() { [[ ! -e /proc/$SYSTEMD ]]; }
  if poll 60 systemd_gone; then
    pass "systemd stopped"
  else
    fail "systemd did not stop within 60 s"
    kill -KILL "$SYSTEMD" 2> /dev/null
  fi
  wait "$UNSHARE"
}
