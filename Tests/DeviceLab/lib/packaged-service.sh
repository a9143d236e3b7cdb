# lib/packaged-service.sh - sourced by the guest scenarios that install the Debian package and
# run it as a booted machine would (package.sh, upgrade.sh), after lib/checks.sh, with $OUT set.
#
# Sourcing it boots systemd to basic.target as PID 1 of namespaces of its own (lib/systemd.sh's
# start_systemd: journald, udevd and the D-Bus socket run; a failure to boot exits the scenario
# with 1), so dpkg's maintainer scripts see a running systemd and the unit runs with its real
# sandbox. Beside lib/systemd.sh's inside, as_service, unit and service_report it defines:
#   finish                 systemd shut down, then exit with the scenario's status
#   abort MESSAGE          a failure the later checks depend on: FAIL, then finish
source "$REPO/Tests/DeviceLab/lib/systemd.sh"
say "systemd as PID 1 of its own namespaces"
start_systemd basic.target || exit 1
finish() {
  stop_systemd
  echo "failures: $failures"
  exit $((failures > 0))
}
abort() { fail "$*"; finish; }
