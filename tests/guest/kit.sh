#!/bin/bash
# Builds the guest kit in build/guest/kit (reused when present): Debian's
# own kernel (the one linux-image-amd64 points to) unpacked, never
# installed, its vmlinux, and a busybox initramfs that mounts the host's /
# read-only over virtio-9p.  Trusts apt's mirror and the packages it verifies.
set -eu
: "${GUEST_DIR:=build/guest}"
KIT="$GUEST_DIR/kit"
# The kernel is kept once unpacked; the initramfs is made anew each time
# (it is small, and tests/guest/init may have changed).
if [ ! -f "$KIT/ready" ]; then
	rm -rf "$KIT" && mkdir -p "$KIT/dl"
	KIT=$(cd "$KIT" && pwd)

	pkg=$(apt-cache depends linux-image-amd64 2>/dev/null |
		sed -n 's/^ *Depends: \(linux-image-[0-9][^ ]*-amd64\)$/\1/p' | head -1)
	[ -n "$pkg" ] || { echo "kit: apt knows no linux-image-amd64 (apt-get update?)" >&2; exit 1; }
	# apt's _apt user must be able to write the download directory.
	chmod 0777 "$KIT/dl"
	(cd "$KIT/dl" && apt-get download -q "$pkg" >/dev/null)
	dpkg-deb -x "$KIT"/dl/*.deb "$KIT/root"
	rm -rf "$KIT/dl"
	ver=${pkg#linux-image-}
	depmod -b "$KIT/root" "$ver"

	# microvm boots an uncompressed ELF kernel: unpack vmlinuz's xz payload.
	vmlinuz="$KIT/root/boot/vmlinuz-$ver"
	off=$(LC_ALL=C grep -aobP '\xfd7zXZ\x00' "$vmlinuz" | head -1 | cut -d: -f1)
	[ -n "$off" ] || { echo "kit: no xz payload in $vmlinuz" >&2; exit 1; }
	tail -c +$((off + 1)) "$vmlinuz" | xz -dc --single-stream >"$KIT/vmlinux" 2>/dev/null || true
	file -b "$KIT/vmlinux" | grep -q '^ELF 64-bit' || { echo "kit: vmlinux is no ELF" >&2; exit 1; }

	echo "$ver" >"$KIT/version"
	touch "$KIT/ready"
fi

# The initramfs: busybox, the virtio-mmio and 9p modules in load order.
KIT=$(cd "$KIT" && pwd)
ver=$(cat "$KIT/version")
rm -rf "$KIT/initrd" && mkdir -p "$KIT/initrd/bin" "$KIT/initrd/mod"
cp /bin/busybox "$KIT/initrd/bin/busybox"
for m in virtio_mmio 9pnet_virtio 9p; do
	modprobe -d "$KIT/root" -S "$ver" --show-depends "$m"
done | awk '$1 == "insmod" && !seen[$2]++ {print $2}' | while read -r ko; do
	cp "$ko" "$KIT/initrd/mod/" && basename "$ko"
done >"$KIT/initrd/mod/order"
cp "$(dirname "$0")/init" "$KIT/initrd/init"
chmod 0755 "$KIT/initrd/init"
(cd "$KIT/initrd" && find . | cpio -o -H newc --quiet) >"$KIT/initrd.cpio"
