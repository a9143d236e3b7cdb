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
# Environment: HEALTHGATE_LAB_CACHE (default ${XDG_CACHE_HOME:-~/.cache}/healthgate-devicelab),
# HEALTHGATE_LAB_KERNEL (a package such as linux-image-6.1.0-41-amd64; default: the one that
# linux-image-amd64 depends on today).
# Exit: 0 ready, 77 this machine cannot host the lab (reason printed), 125 a step failed.
set -euo pipefail
vm=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$vm/common.sh"

# The guest runs this machine's own programs (healthgate, bluez, python3) from its root, so the
# guest kernel must match their architecture, and the packages come from apt.
[[ $(uname -m) == x86_64 ]] || lab_skip "the lab boots an amd64 kernel around this machine's programs; this is $(uname -m)"
command -v apt-get > /dev/null && command -v dpkg-deb > /dev/null ||
  lab_skip "no apt-get/dpkg-deb: the lab takes its kernel and tools from Debian packages"

# ---- packages -------------------------------------------------------------------------------
wanted=(
  # the VM itself
  qemu-system-x86 busybox-static kmod cpio gzip xz-utils
  # what the scenarios run inside it (from this machine's root, over 9p)
  bluez bluez-test-tools bluez-test-scripts dbus python3 python3-dbus python3-gi python3-venv libglib2.0-bin
  udev systemd util-linux passwd iproute2 procps sqlite3 coreutils
)
# apt needs root; without root, password-less sudo will do.
as_root=()
if [[ $(id -u) != 0 ]]; then
  if sudo -n true 2> /dev/null; then as_root=(sudo -n); else as_root=(no-root); fi
fi
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
repository=$(cd "$vm/../../.." && pwd)
bumble_version=0.0.236
bumble=$repository/.build/lab-bumble
if [[ $("$bumble/bin/python" -c 'import bumble; print(bumble.__version__)' 2> /dev/null) != "$bumble_version" ]]; then
  lab_say "installing Bumble $bumble_version into $bumble"
  rm -rf "$bumble"
  /usr/bin/python3 -m venv "$bumble" >&2 && "$bumble/bin/pip" install -q "bumble==$bumble_version" >&2 ||
    { rm -rf "$bumble"; lab_broken "cannot install Bumble $bumble_version from PyPI"; }
fi

# ---- kernel ---------------------------------------------------------------------------------
kernel_package() { apt-cache depends linux-image-amd64 2> /dev/null | sed -n 's/^ *Depends: \(linux-image-[0-9].*\)$/\1/p' | head -n 1; }
package=${HEALTHGATE_LAB_KERNEL:-$(kernel_package)}
if [[ -z $package ]]; then
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
    (cd "$download" && apt-get -q -o APT::Sandbox::User=root download "$package" >&2) ||
      { rm -rf "$download"; lab_broken "apt-get download $package failed"; }
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

# ---- initramfs ------------------------------------------------------------------------------
# Only what mounting the host's root needs; everything else loads from the root later.
boot_modules=$(for module in virtio_pci 9pnet_virtio 9p overlay; do
                 modprobe -d "$kernel" -S "$release" --show-depends "$module"
               done | awk '$1 == "insmod" && !seen[$2]++ { print $2 }')
fingerprint=$({ echo "$release"; echo "$boot_modules"; cat "$vm/initramfs-init"; sha256sum < /bin/busybox; } | sha256sum | cut -c1-16)
if [[ $(cat "$kernel/initrd.fingerprint" 2> /dev/null) != "$fingerprint" ]]; then
  lab_say "packing the initramfs"
  root=$(mktemp -d "$lab_cache/initramfs.XXXXXX")
  mkdir -p "$root"/{bin,dev,proc,sys,host,scratch,root,modules}
  cp /bin/busybox "$root/bin/busybox"
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

cat > "$lab_cache/vm.env.partial" <<ENV
lab_release=$(printf '%q' "$release")
lab_kernel=$(printf '%q' "$kernel/vmlinuz")
lab_initrd=$(printf '%q' "$kernel/initrd.img")
lab_modules=$(printf '%q' "$kernel/lib/modules/$release")
ENV
mv "$lab_cache/vm.env.partial" "$lab_cache/vm.env"
lab_say "ready: $(cat "$kernel/package") in $lab_cache"
