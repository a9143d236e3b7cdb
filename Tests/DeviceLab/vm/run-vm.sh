#!/usr/bin/env bash
# run-vm.sh - boots the device-lab VM once, runs one bash script in it as root, and exits with
# that script's status.
#
# usage: run-vm.sh [-t SECONDS] [-o OUTDIR] SCRIPT [ARGUMENTS...]
#   -t  the script's time limit inside the guest (default 300); qemu itself is stopped 120 s later
#   -o  where to copy what the script wrote under $LAB_OUT in the guest (default: discarded)
# The guest runs SCRIPT from its path on this machine: it sees this machine's whole root at the
# same paths (read-only, with a tmpfs on top that takes its writes), so a checkout anywhere and
# the programs built in it work unchanged. The VM has no network device.
#
# Environment: HEALTHGATE_LAB_ACCEL=kvm|tcg (default: kvm only where it can boot a stock kernel),
# HEALTHGATE_LAB_CPUS (default 2), HEALTHGATE_LAB_MEMORY in MiB (default 1024),
# HEALTHGATE_LAB_KEEP=1 keeps the run directory (console.log, output.log, status),
# HEALTHGATE_LAB_RTC_OFFSET_SECONDS boots the guest with its real-time clock that far from this
# machine's UTC (qemu's -rtc base=; -86400: a day behind) and tells the scenario the offset
# (LAB_RTC_OFFSET_SECONDS).
# Exit: the script's status; 124 it ran out of time; 125 the VM failed before the script ended.
set -euo pipefail
vm=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$vm/common.sh"

usage() { sed -n '4,8p' "$0" | cut -c3- >&2; exit 64; }
limit=300 out=
while getopts 't:o:' option; do
  case $option in
    t) limit=$OPTARG ;;
    o) out=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
(($# >= 1)) || usage
script=$(realpath "$1"); shift
[[ -f $script ]] || { lab_say "no script $script"; exit 64; }
[[ -f $lab_cache/vm.env ]] || lab_broken "no VM in $lab_cache: run $vm/build-vm.sh first"
source "$lab_cache/vm.env"
command -v qemu-system-x86_64 > /dev/null || lab_broken "no qemu-system-x86_64: run $vm/build-vm.sh first"

# KVM only with hardware virtualization the stock kernel can use. A nested /dev/kvm backed by the
# kvm_pvm module (no vmx/svm flags) never gets a bzImage past its real-mode setup, so TCG it is.
accel=${HEALTHGATE_LAB_ACCEL:-}
if [[ -z $accel ]]; then
  accel=tcg
  if [[ -r /dev/kvm && -w /dev/kvm && ! -e /sys/module/kvm_pvm ]] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
    accel=kvm
  fi
fi
# Under nested KVM, -cpu max stops with "failed to set MSR 0x10a": the host model without
# arch-capabilities boots.
case $accel in
  kvm) cpu=host,-arch-capabilities ;;
  tcg) cpu=max ;;
  *) lab_say "HEALTHGATE_LAB_ACCEL must be kvm or tcg"; exit 64 ;;
esac

mkdir -p "$lab_cache/runs"
run=$(mktemp -d "$lab_cache/runs/run.XXXXXX")
qemu= follower=
finish() {
  [[ -n $follower ]] && kill "$follower" 2> /dev/null
  [[ -n $qemu ]] && kill "$qemu" 2> /dev/null
  if [[ ${HEALTHGATE_LAB_KEEP:-0} == 1 ]]; then lab_say "run directory kept: $run"; else rm -rf "$run"; fi
}
trap finish EXIT
trap 'exit 130' INT TERM

install -m 0755 "$vm/stage2" "$run/stage2"
{
  printf 'lab_modules=%q\n' "$lab_modules"
  printf 'lab_timeout=%q\n' "$limit"
  printf 'export LAB_RTC_OFFSET_SECONDS=%q\n' "${HEALTHGATE_LAB_RTC_OFFSET_SECONDS:-0}"
  printf 'lab_command=(bash'; printf ' %q' "$script" "$@"; printf ')\n'
} > "$run/job.env"
: > "$run/output.log"

share=security_model=none,multidevs=remap
rtc=base=utc
if [[ -n ${HEALTHGATE_LAB_RTC_OFFSET_SECONDS:-} ]]; then
  rtc=base=$(date -u -d "@$(($(date +%s) + HEALTHGATE_LAB_RTC_OFFSET_SECONDS))" +%Y-%m-%dT%H:%M:%S)
fi
lab_say "kernel $lab_release, $accel, script ${script#"$PWD/"} (limit ${limit}s)"
began=$(date +%s.%N)
# panic=-1 with -no-reboot turns a guest panic into qemu's exit rather than a hang.
timeout -k 10 $((limit + 120)) qemu-system-x86_64 \
  -nodefaults -no-user-config -display none -no-reboot -monitor none \
  -machine q35,accel="$accel" -cpu "$cpu" \
  -smp "${HEALTHGATE_LAB_CPUS:-2}" -m "${HEALTHGATE_LAB_MEMORY:-1024}" \
  -kernel "$lab_kernel" -initrd "$lab_initrd" -rtc "$rtc" \
  -append "console=ttyS0 panic=-1 quiet loglevel=4" \
  -serial "file:$run/console.log" \
  -device virtio-rng-pci \
  -virtfs "local,path=/,mount_tag=host,readonly=on,$share" \
  -virtfs "local,path=$run,mount_tag=run,$share" \
  > "$run/qemu.log" 2>&1 &
qemu=$!
tail -n +1 -F --pid="$qemu" "$run/output.log" 2> /dev/null &
follower=$!
set +e
wait "$qemu"
qemu_status=$?
set -e
qemu=
wait "$follower" 2> /dev/null || true
follower=
ended=$(date +%s.%N)

grep -a '^lab' "$run/console.log" >&2 || true
if [[ -f $run/status ]]; then
  status=$(cat "$run/status")
else
  status=$LAB_BROKEN
  lab_say "the VM stopped without the script's status (qemu status $qemu_status); qemu and console said:"
  cat "$run/qemu.log" >&2
  tail -n 40 "$run/console.log" >&2
fi
if [[ -n $out && -d $run/out ]]; then
  mkdir -p "$out"
  cp -a "$run/out/." "$out/"
fi
lab_say "status $status, $(awk -v a="$began" -v b="$ended" 'BEGIN { printf "%.1f", b - a }') s from qemu start to exit"
exit "$status"
