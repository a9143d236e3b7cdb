#!/usr/bin/env bash
# build-vm.sh - makes the device-lab VM ready; cheap to run again (everything is cached).
#
#  1. installs the Debian packages the lab and its scenarios use (apt-get update first when one
#     is missing);
#  2. downloads Debian's stock kernel package with `apt-get download` (never installed on this
#     machine), keeps its vmlinuz and modules under the cache and indexes them with depmod;
#  3. packs an initramfs from busybox-static, the few modules needed to reach the host's root
#     over virtio-9p, and vm/initramfs-init.
# It writes $cache/vm.env, which run-vm.sh reads.
#
# With HEALTHGATE_LAB_ARCH=arm64 (as root) the guest is an arm64 Debian 13 machine instead: step 1
# installs qemu-system-arm, qemu-user-static, binfmt-support and debootstrap here; a Debian 13
# (trixie) arm64 root with systemd, udev, D-Bus, BlueZ, python3 and sqlite3 is debootstrapped
# under $cache/arm64/root through qemu-user (once: 45 min on 2 busy cores; 370 MB); the kernel
# is the one the root's linux-image-arm64 depends on, its modules hard linked into the root;
# busybox-static is the root's.
# It writes $cache/vm-arm64.env.
#
# Environment: HEALTHGATE_LAB_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/healthgate-devicelab),
# HEALTHGATE_LAB_ARCH (amd64 or arm64, default amd64), HEALTHGATE_LAB_KERNEL (a package such as
# linux-image-6.1.0-41-amd64; default: the one that linux-image-amd64, or the arm64 root's
# linux-image-arm64, depends on today), HEALTHGATE_DEBIAN_MIRROR (arm64 root; default
# http://deb.debian.org/debian).
# Exit: 0 ready, 77 this machine cannot host the lab (reason printed), 125 a step failed.
set -euo pipefail
vm=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$vm/common.sh"

# The amd64 guest runs this machine's own programs (healthgate, bluez, python3) from its root, so
# the guest kernel must match their architecture; the arm64 guest's root is made here through
# qemu-user. The packages come from apt.
[[ $(uname -m) == x86_64 ]] || lab_skip "the lab boots an amd64 kernel around this machine's programs; this is $(uname -m)"
command -v apt-get > /dev/null && command -v dpkg-deb > /dev/null ||
  lab_skip "no apt-get/dpkg-deb: the lab takes its kernel and tools from Debian packages"

# One build-vm.sh at a time: every scenario runs it, two or more at once under run-all.sh, and
# each step writes a file of the cache through a .partial name (vm.env, the initramfs, dpkg's
# database), which two at once would take from each other.
mkdir -p "$lab_cache"
exec 8> "$lab_cache/build-vm.lock"
flock 8

# ---- packages -------------------------------------------------------------------------------
case $lab_arch in
  amd64) mapfile -t wanted < <(grep -v -e '^#' -e '^$' "$vm/packages-amd64.txt") ;;
  # The VM (qemu-system-arm has qemu-system-aarch64), and what makes its root: debootstrap, whose
  # second stage runs the root's arm64 programs through qemu-user and binfmt_misc.
  arm64) wanted=(qemu-system-arm qemu-user-static binfmt-support debootstrap kmod cpio gzip xz-utils) ;;
esac
# apt needs root; without root, password-less sudo will do.
as_root=()
if [[ $(id -u) != 0 ]]; then
  if sudo -n true 2> /dev/null; then as_root=(sudo -n); else as_root=(no-root); fi
fi
# debootstrap and chroot make and use the arm64 root as root.
[[ $lab_arch != arm64 || $(id -u) == 0 ]] || lab_skip "the arm64 lab makes its Debian root with debootstrap and chroot: run it as root"
absent=()
for package in "${wanted[@]}"; do
  [[ $(dpkg-query -W -f='${db:Status-Status}' "$package" 2> /dev/null) == installed ]] || absent+=("$package")
done
if ((${#absent[@]})); then
  [[ ${as_root[*]} != no-root ]] ||
    lab_skip "packages missing (${absent[*]}) and no root or password-less sudo to install them"
  lab_say "installing ${absent[*]}"
  "${as_root[@]}" apt-get update -qq >&2 || lab_broken "apt-get update failed"
  "${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${absent[@]}" >&2 ||
    lab_broken "apt-get install ${absent[*]} failed"
fi

# ---- Bumble ---------------------------------------------------------------------------------
# Google's Bumble (PyPI), the second Bluetooth stack of bluetooth-bumble.sh, in a venv inside the
# checkout's .build: the guest sees this machine's root, so it runs the venv at the same path.
# The arm64 guest has its own root, where this machine's venv would not run.
repository=$(cd "$vm/../../.." && pwd)
bumble_version=0.0.236
bumble=$repository/.build/lab-bumble
if [[ $lab_arch == amd64 ]] &&
  [[ $("$bumble/bin/python" -c 'import bumble; print(bumble.__version__)' 2> /dev/null) != "$bumble_version" ]]; then
  lab_say "installing Bumble $bumble_version into $bumble"
  rm -rf "$bumble"
  /usr/bin/python3 -m venv "$bumble" >&2 && "$bumble/bin/pip" install -q "bumble==$bumble_version" >&2 ||
    { rm -rf "$bumble"; lab_broken "cannot install Bumble $bumble_version from PyPI"; }
fi

# ---- the arm64 root -------------------------------------------------------------------------
# Debian 13 arm64 with what the scenarios run (package.sh: systemd, udev, D-Bus, python3, sqlite3,
# procps) and the arm64 package's Depends (BlueZ, the libraries dpkg-shlibdeps names), so that
# `dpkg -i` in the guest finds them installed as `apt install ./healthgate_*.deb` would leave them.
# The guest shares it read-only under a tmpfs overlay, as the amd64 guest shares this machine's.
# The list is the root's marker: a changed list makes the root again.
guest_root=/
guest_packages=(systemd udev dbus bluez python3 sqlite3 procps iproute2 hostname busybox-static kmod
  libsqlite3-0 libudev1 libsystemd0 libstdc++6 libgcc-s1 zlib1g)
in_root=()
if [[ $lab_arch == arm64 ]]; then
  guest_root=$lab_cache/arm64/root
  in_root=(chroot "$guest_root")
  mountpoint -q /proc/sys/fs/binfmt_misc || mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc ||
    lab_broken "cannot mount binfmt_misc (qemu-user runs the root's arm64 programs through it)"
  update-binfmts --enable qemu-aarch64 > /dev/null 2>&1 || true
  [[ -e /proc/sys/fs/binfmt_misc/qemu-aarch64 ]] || lab_broken "binfmt_misc has no qemu-aarch64 entry (qemu-user-static)"
  if [[ $(cat "$guest_root/.healthgate-lab" 2> /dev/null) != "${guest_packages[*]}" ]]; then
    mirror=${HEALTHGATE_DEBIAN_MIRROR:-http://deb.debian.org/debian}
    lab_say "debootstrap trixie arm64 into $guest_root (qemu-user; up to 45 minutes)"
    rm -rf "$guest_root" "$guest_root.partial"
    mkdir -p "$(dirname "$guest_root")"
    started=$SECONDS
    include=$(IFS=,; echo "${guest_packages[*]}")
    debootstrap --variant=minbase --arch=arm64 --include="$include" trixie "$guest_root.partial" "$mirror" \
      > "$lab_cache/arm64/debootstrap.log" 2>&1 ||
      { tail -n 20 "$lab_cache/arm64/debootstrap.log" >&2; lab_broken "debootstrap failed (log: $lab_cache/arm64/debootstrap.log)"; }
    echo "${guest_packages[*]}" > "$guest_root.partial/.healthgate-lab"
    mv "$guest_root.partial" "$guest_root"
    lab_say "the arm64 root took $((SECONDS - started)) s"
  fi
fi

# ---- kernel ---------------------------------------------------------------------------------
kernel_package() {
  "${in_root[@]}" apt-cache depends "linux-image-$lab_arch" 2> /dev/null |
    sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n 1
}
package=${HEALTHGATE_LAB_KERNEL:-$(kernel_package)}
if [[ -z $package && $lab_arch == arm64 ]]; then
  "${in_root[@]}" apt-get update -qq >&2 || lab_broken "apt-get update in the arm64 root failed"
  package=$(kernel_package)
  [[ -n $package ]] || lab_broken "the arm64 root's apt knows no linux-image-arm64 dependency"
elif [[ -z $package ]]; then
  # apt has never been updated on a fresh machine: its lists are empty.
  [[ ${as_root[*]} != no-root ]] || lab_skip "apt's package lists are empty and there is no root to update them"
  "${as_root[@]}" apt-get update -qq >&2 || lab_broken "apt-get update failed"
  package=$(kernel_package)
  [[ -n $package ]] || lab_broken "apt knows no linux-image-amd64 dependency"
fi
release=${package#linux-image-}
kernel=$lab_cache/kernel/$release
if [[ ! -e $kernel/ready ]]; then
  mkdir -p "$lab_cache/debs"
  deb=$(find "$lab_cache/debs" -maxdepth 1 -name "${package}_*.deb" | sort | tail -n 1)
  if [[ -z $deb ]]; then
    lab_say "downloading $package"
    download=$(mktemp -d "$lab_cache/debs/download.XXXXXX")
    # Root's apt drops to the _apt user for downloads, which cannot write into a private cache.
    if [[ $lab_arch == arm64 ]]; then
      # The arm64 root's apt knows Debian 13's arm64 kernel; it downloads into the root's /tmp.
      inside=$(mktemp -d "$guest_root/tmp/download.XXXXXX")
      "${in_root[@]}" sh -c 'cd "$1" && apt-get -q -o APT::Sandbox::User=root download "$2"' sh \
        "/tmp/${inside##*/}" "$package" >&2 || { rm -rf "$download" "$inside"; lab_broken "apt-get download $package failed"; }
      mv "$inside"/*.deb "$download/" && rmdir "$inside"
    else
      (cd "$download" && apt-get -q -o APT::Sandbox::User=root download "$package" >&2) ||
        { rm -rf "$download"; lab_broken "apt-get download $package failed"; }
    fi
    mv "$download"/*.deb "$lab_cache/debs/" && rmdir "$download"
    deb=$(find "$lab_cache/debs" -maxdepth 1 -name "${package}_*.deb" | sort | tail -n 1)
  fi
  lab_say "unpacking $(basename "$deb")"
  staging=$kernel.partial
  rm -rf "$staging" && mkdir -p "$staging/lib/modules"
  dpkg-deb -x "$deb" "$staging/deb"
  tree=$staging/deb/lib/modules/$release
  [[ -d $tree ]] || tree=$staging/deb/usr/lib/modules/$release
  [[ -d $tree && -f $staging/deb/boot/vmlinuz-$release ]] || lab_broken "$deb has no vmlinuz-$release or modules"
  mv "$staging/deb/boot/vmlinuz-$release" "$staging/vmlinuz"
  mv "$tree" "$staging/lib/modules/$release"
  rm -rf "$staging/deb"
  # The package's postinst would index the modules; it never runs, so depmod does it here.
  depmod -b "$staging" "$release"
  basename "$deb" > "$staging/package"
  touch "$staging/ready"
  rm -rf "$kernel" && mv "$staging" "$kernel"
fi

# Where the guest finds the modules (stage2 links them into /lib/modules): the amd64 guest in the
# cache, through this machine's root; the arm64 guest in its own root, hard links to the cache's.
modules=$kernel/lib/modules/$release
if [[ $lab_arch == arm64 ]]; then
  if [[ ! -e $guest_root/usr/lib/modules/$release/modules.dep ]]; then
    rm -rf "$guest_root/usr/lib/modules/$release"
    mkdir -p "$guest_root/usr/lib/modules"
    cp -al "$kernel/lib/modules/$release" "$guest_root/usr/lib/modules/"
  fi
  modules=/usr/lib/modules/$release
fi

# ---- initramfs ------------------------------------------------------------------------------
# Only what mounting the host's root needs; everything else loads from the root later. depmod and
# modprobe here read the arm64 modules as well (kmod reads any ELF class and byte order).
busybox=$guest_root/bin/busybox
[[ -f $busybox ]] || lab_broken "no busybox at $busybox (busybox-static)"
boot_modules=$(for module in virtio_pci 9pnet_virtio 9p overlay; do
                 modprobe -d "$kernel" -S "$release" --show-depends "$module"
               done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }')
fingerprint=$({ echo "$release"; echo "$boot_modules"; cat "$vm/initramfs-init"; sha256sum < "$busybox"; } | sha256sum | cut -c1-16)
if [[ $(cat "$kernel/initrd.fingerprint" 2> /dev/null) != "$fingerprint" ]]; then
  lab_say "packing the initramfs"
  root=$(mktemp -d "$lab_cache/initramfs.XXXXXX")
  mkdir -p "$root"/{bin,dev,proc,sys,host,scratch,root,modules}
  cp "$busybox" "$root/bin/busybox"
  ln -s busybox "$root/bin/sh"
  # In load order: --show-depends lists each module after what it needs.
  index=0
  for file in $boot_modules; do
    index=$((index + 1))
    name=$(printf '%02d-%s' "$index" "$(basename "${file%%.ko*}").ko")
    case $file in
      *.ko.xz) xz -dc "$file" > "$root/modules/$name" ;;
      *.ko.zst) zstd -qdc "$file" > "$root/modules/$name" ;;
      *.ko.gz) gzip -dc "$file" > "$root/modules/$name" ;;
      *) cp "$file" "$root/modules/$name" ;;
    esac
  done
  install -m 0755 "$vm/initramfs-init" "$root/init"
  (cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$kernel/initrd.partial"
  mv "$kernel/initrd.partial" "$kernel/initrd.img"
  echo "$fingerprint" > "$kernel/initrd.fingerprint"
  rm -rf "$root"
fi

# ---- dpkg's database, in one file --------------------------------------------------------------
# The amd64 guest's dpkg reads this machine's database over 9p: thousands of small files under
# /var/lib/dpkg, some seconds for every dpkg, dpkg-query and maintainer script that loads it. The
# scenarios that install the package unpack this one tar into the guest's memory instead
# (lib/systemd.sh's start_systemd). Made again whenever dpkg's status file changes.
dpkg_database=
if [[ $lab_arch == amd64 ]]; then
  dpkg_database=$lab_cache/dpkg-database.tar
  fingerprint=$(sha256sum < /var/lib/dpkg/status | cut -c1-16)
  if [[ $(cat "$dpkg_database.fingerprint" 2> /dev/null) != "$fingerprint" || ! -f $dpkg_database ]]; then
    lab_say "packing dpkg's database"
    tar -C /var/lib -cf "$dpkg_database.partial" dpkg || lab_broken "cannot pack /var/lib/dpkg"
    mv "$dpkg_database.partial" "$dpkg_database"
    echo "$fingerprint" > "$dpkg_database.fingerprint"
  fi
fi

cat > "$lab_env.partial" <<ENV
lab_release=$(printf '%q' "$release")
lab_kernel=$(printf '%q' "$kernel/vmlinuz")
lab_initrd=$(printf '%q' "$kernel/initrd.img")
lab_modules=$(printf '%q' "$modules")
lab_root=$(printf '%q' "$guest_root")
lab_dpkg_database=$(printf '%q' "$dpkg_database")
ENV
mv "$lab_env.partial" "$lab_env"
lab_say "ready: $(cat "$kernel/package") in $lab_cache${in_root:+, root $guest_root}"
