#!/usr/bin/env bash
# run-vm.sh - boots the device-lab VM once, runs one bash script in it as root, and exits with
# that script's status.
#
# usage: run-vm.sh [-t SECONDS] [-o OUTDIR] [-d SERIAL=IMAGE]... [-f PORT=HOSTPORT]... [-s DIR] [-p PIDFILE]
#                  SCRIPT [ARGUMENTS...]
#   -t  the script's time limit inside the guest (default 300); qemu itself is stopped 120 s later
#   -o  where to copy what the script wrote under $LAB_OUT in the guest (default: discarded)
#   -d  a raw disk image as a virtio disk whose serial is SERIAL (/sys/block/vdX/serial in the
#       guest); writes go to this machine's page cache and flushes are not passed on (cache=unsafe):
#       a qemu killed with SIGKILL loses the guest's page cache, never what reached the disk
#   -f  a network device (user networking, restricted: no route out of the VM) on which the guest's
#       connections to 10.0.2.100:PORT reach 127.0.0.1:HOSTPORT on this machine (socat per
#       connection); stage2 gives the guest 10.0.2.15/24
#   -s  DIR shared read-write and uncached with the guest under the 9p tag "shared" (the script
#       mounts it): what one side appends the other reads at once, across boots
#   -p  qemu's PID written to PIDFILE, for a caller that pulls the plug (kill -KILL); such a kill
#       is reported as status 137, not as a broken lab
# The guest runs SCRIPT from its path on this machine: it sees this machine's whole root at the
# same paths (read-only, with a tmpfs on top that takes its writes), so a checkout anywhere and
# the programs built in it work unchanged. The VM has no network device unless -f asks for one.
# With HEALTHGATE_LAB_ARCH=arm64 the VM is qemu-system-aarch64 (software emulation): its root is
# the arm64 Debian root build-vm.sh made, shared the same way, and the checkout this script is in
# is shared read-only at its own path: SCRIPT, and the files its arguments name, must lie inside it.
#
# Environment: HEALTHGATE_LAB_ARCH=amd64|arm64 (default amd64),
# HEALTHGATE_LAB_ACCEL=kvm|tcg (default: kvm only where it can boot a stock kernel; arm64: tcg),
# HEALTHGATE_LAB_ARM64_CPU (default cortex-a72, the Raspberry Pi 4's core),
# HEALTHGATE_LAB_POLL_SCALE (the scenarios' waits multiplied; default 1, arm64 3),
# HEALTHGATE_LAB_CPUS (default 2), HEALTHGATE_LAB_MEMORY in MiB (default 1024),
# HEALTHGATE_LAB_STARVE=N runs N busy loops in the guest beside the script, at its priority, for
# the whole run (a starved box: `HEALTHGATE_LAB_CPUS=1 HEALTHGATE_LAB_STARVE=1` halves the one
# processor; the time limit and the scenarios' waits are multiplied by N + 1),
# HEALTHGATE_LAB_KEEP=1 keeps the run directory (console.log, output.log, status),
# HEALTHGATE_LAB_RTC_OFFSET_SECONDS boots the guest with its real-time clock that far from this
# machine's UTC (qemu's -rtc base=; -86400: a day behind) and tells the scenario the offset
# (LAB_RTC_OFFSET_SECONDS).
# Exit: the script's status; 124 it ran out of time; 125 the VM failed before the script ended.
set -euo pipefail
vm=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$vm/common.sh"

usage() { sed -n '4,20p' "$0" | cut -c3- >&2; exit 64; }
limit=300 out= shared= pidfile=
disks=() forwards=()
while getopts 't:o:d:f:s:p:' option; do
  case $option in
    t) limit=$OPTARG ;;
    o) out=$OPTARG ;;
    d) [[ $OPTARG == ?*=?* && -f ${OPTARG#*=} ]] || { lab_say "-d wants SERIAL=IMAGE, an existing file: $OPTARG"; exit 64; }
       disks+=("$OPTARG") ;;
    f) [[ $OPTARG =~ ^[0-9]+=[0-9]+$ ]] || { lab_say "-f wants PORT=HOSTPORT: $OPTARG"; exit 64; }
       forwards+=("$OPTARG") ;;
    s) [[ -d $OPTARG ]] || { lab_say "-s wants a directory: $OPTARG"; exit 64; }
       shared=$(realpath "$OPTARG") ;;
    p) pidfile=$OPTARG ;;
    *) usage ;;
  esac
done
shift $((OPTIND - 1))
(($# >= 1)) || usage
script=$(realpath "$1"); shift
[[ -f $script ]] || { lab_say "no script $script"; exit 64; }
[[ -f $lab_env ]] || lab_broken "no $lab_arch VM in $lab_cache: run HEALTHGATE_LAB_ARCH=$lab_arch $vm/build-vm.sh first"
source "$lab_env"
case $lab_arch in
  amd64) qemu_system=qemu-system-x86_64 ;;
  arm64) qemu_system=qemu-system-aarch64 ;;
esac
command -v "$qemu_system" > /dev/null || lab_broken "no $qemu_system: run HEALTHGATE_LAB_ARCH=$lab_arch $vm/build-vm.sh first"
repository=$(cd "$vm/../../.." && pwd)
[[ $lab_arch != arm64 || $script == "$repository"/* ]] ||
  { lab_say "$script is outside the checkout $repository, which is all the arm64 guest sees of this machine"; exit 64; }

# KVM only with hardware virtualization the stock kernel can use. A nested /dev/kvm backed by the
# kvm_pvm module (no vmx/svm flags) never gets a bzImage past its real-mode setup, so TCG it is.
# An arm64 guest on this x86-64 machine is always emulated.
accel=${HEALTHGATE_LAB_ACCEL:-}
if [[ $lab_arch == arm64 ]]; then
  accel=${accel:-tcg}
  [[ $accel == tcg ]] || { lab_say "an arm64 guest runs under tcg only on $(uname -m)"; exit 64; }
elif [[ -z $accel ]]; then
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

# How much longer the scenarios' waits (lib/checks.sh's poll) may take: an arm64 guest emulated
# on this x86-64 machine runs systemd's boot and dpkg several times slower than the amd64 one.
poll_scale=${HEALTHGATE_LAB_POLL_SCALE:-1}
[[ -n ${HEALTHGATE_LAB_POLL_SCALE:-} || $lab_arch != arm64 ]] || poll_scale=3
[[ $poll_scale =~ ^[1-9][0-9]*$ ]] || { lab_say "HEALTHGATE_LAB_POLL_SCALE must be a whole number from 1"; exit 64; }

starve=${HEALTHGATE_LAB_STARVE:-0}
[[ $starve =~ ^[0-9]+$ ]] || { lab_say "HEALTHGATE_LAB_STARVE must be a whole number of busy loops"; exit 64; }
limit=$((limit * (starve + 1)))
poll_scale=$((poll_scale * (starve + 1)))

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
  printf 'export LAB_POLL_SCALE=%q\n' "$poll_scale"
  printf 'export LAB_DPKG_DATABASE=%q\n' "${lab_dpkg_database:-}"
  printf 'lab_network=%q\n' "$((${#forwards[@]} > 0))"
  printf 'lab_starve=%q\n' "$starve"
  # The class scenario's own settings (CLASS_PHASE_SECONDS, CLASS_BLUETOOTHD_EXPERIMENTAL).
  for name in $(compgen -v CLASS_); do printf 'export %s=%q\n' "$name" "${!name}"; done
  printf 'lab_command=(bash'; printf ' %q' "$script" "$@"; printf ')\n'
} > "$run/job.env"
: > "$run/output.log"

share=security_model=none,multidevs=remap
rtc=base=utc
if [[ -n ${HEALTHGATE_LAB_RTC_OFFSET_SECONDS:-} ]]; then
  rtc=base=$(date -u -d "@$(($(date +%s) + HEALTHGATE_LAB_RTC_OFFSET_SECONDS))" +%Y-%m-%dT%H:%M:%S)
fi
# What differs by architecture: the machine, its serial console, and for arm64 the checkout's
# share (initramfs-init mounts the tag "checkout" at the path lab.checkout= names).
case $lab_arch in
  amd64) machine=(-machine q35,accel="$accel" -cpu "$cpu") console=ttyS0 checkout=() ;;
  # virt: virtio over PCI, a PL011 UART (ttyAMA0) and a PL031 real-time clock, all built into
  # Debian's arm64 kernel; -kernel boots its Image directly, without firmware. cortex-a72 is
  # the baseline ARMv8-A a Raspberry Pi 4 has (and emulates faster than -cpu max's pointer
  # authentication).
  arm64) machine=(-machine virt,accel=tcg -cpu "${HEALTHGATE_LAB_ARM64_CPU:-cortex-a72}") console=ttyAMA0
    checkout=(-virtfs "local,path=$repository,mount_tag=checkout,readonly=on,$share") ;;
esac
append="console=$console panic=-1 quiet loglevel=4"
# Under TCG on a loaded host the amd64 kernel's check that the 8254 timer reaches the IO-APIC
# can miss its ticks and panic ("IO-APIC + timer doesn't work", seen at a load average of 30);
# no_timer_check skips that check, as cloud images booted under emulation do.
[[ $lab_arch != amd64 || $accel != tcg ]] || append+=" no_timer_check"
((${#checkout[@]} == 0)) || append+=" lab.checkout=$repository"
# The power-cut scenarios' devices: disks by serial, the network to this machine's loopback, a
# share both sides append to, and qemu's own PID (timeout's would survive the plug).
extra=()
for disk in "${disks[@]}"; do
  serial=${disk%%=*} image=$(realpath "${disk#*=}")
  extra+=(-drive "id=disk-$serial,file=$image,format=raw,if=none,cache=unsafe"
          -device "virtio-blk-pci,drive=disk-$serial,serial=$serial")
done
if ((${#forwards[@]})); then
  # restrict=on: the guest reaches nothing but the forwards (no route to this machine or beyond);
  # each forward runs socat for each connection the guest opens, to 127.0.0.1 only.
  netdev=user,id=net0,restrict=on
  for forward in "${forwards[@]}"; do
    netdev+=",guestfwd=tcp:10.0.2.100:${forward%%=*}-cmd:socat STDIO TCP:127.0.0.1:${forward#*=}"
  done
  extra+=(-netdev "$netdev" -device virtio-net-pci,netdev=net0)
fi
[[ -z $shared ]] || extra+=(-virtfs "local,path=$shared,mount_tag=shared,$share")
[[ -z $pidfile ]] || { rm -f "$pidfile"; extra+=(-pidfile "$pidfile"); }
lab_say "$lab_arch, kernel $lab_release, $accel, script ${script#"$PWD/"} (limit ${limit}s)"
began=$(date +%s.%N)
# panic=-1 with -no-reboot turns a guest panic into qemu's exit rather than a hang.
timeout -k 10 $((limit + 120)) "$qemu_system" \
  -nodefaults -no-user-config -display none -no-reboot -monitor none \
  "${machine[@]}" \
  -smp "${HEALTHGATE_LAB_CPUS:-2}" -m "${HEALTHGATE_LAB_MEMORY:-1024}" \
  -kernel "$lab_kernel" -initrd "$lab_initrd" -rtc "$rtc" \
  -append "$append" \
  -serial "file:$run/console.log" \
  -device virtio-rng-pci \
  -virtfs "local,path=${lab_root:-/},mount_tag=host,readonly=on,$share" \
  -virtfs "local,path=$run,mount_tag=run,$share" \
  "${checkout[@]}" "${extra[@]}" \
  > "$run/qemu.log" 2>&1 &
qemu=$!
tail -n +1 -F --pid="$qemu" "$run/output.log" 2> /dev/null &
follower=$!
set +e
wait "$qemu" 2> /dev/null  # a qemu killed by the caller would be reported as "Killed"
qemu_status=$?
set -e
qemu=
wait "$follower" 2> /dev/null || true
follower=
ended=$(date +%s.%N)

grep -a '^lab' "$run/console.log" >&2 || true
if [[ -f $run/status ]]; then
  status=$(cat "$run/status")
elif [[ -n $pidfile && $qemu_status == 137 ]]; then
  # timeout passes on its child's death by SIGKILL as 128 + 9: the caller pulled the plug.
  status=137
  lab_say "qemu was killed (SIGKILL) while the script ran: the plug was pulled"
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
