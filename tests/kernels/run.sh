#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# `make test-kernels`: boots each kernel in FG_KERNELS under qemu and runs
# floodgate's BPF tests there (tests/kernels/guest.sh lists which, and why
# the others are not run under emulation).
#
# A kernel is a Debian package name. Its .deb comes from the configured apt
# sources once (`apt-get download`) and is kept, unpacked and depmod'ed, in
# FG_KERNEL_CACHE, so a fresh clone reuses it. The host's root is shared
# read-only over 9p (a tmpfs overlay makes it writable inside), so the guest
# runs this checkout's build/ with the host's tools. The guest writes its
# result to a second, writable 9p share; the host trusts only that file:
# no result before FG_KERNEL_TIMEOUT seconds is a failure.
#
# FG_SUITES=REGEX runs only the guest's suites whose names match (no spaces).
# Needs root, the `kernels` group of scripts/install-deps.sh, and `make tests`.
# Exit status: 0 when every suite passed on every kernel, 1 otherwise.
set -uo pipefail

REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
FG_KERNELS=${FG_KERNELS:-linux-image-6.1.0-57-amd64}
FG_KERNEL_CACHE=${FG_KERNEL_CACHE:-/var/cache/floodgate-kernels}
# 3900 s: the 23 suites took 1,533-2,444 s under TCG on an idle 2-CPU host,
# and about 3,300 s on a slow day (2026-12-07 afternoon: test_prog alone
# 1,180 s), with the shell suites one at a time (two at a time since,
# about 1,000 s less); CI runs them after `make test` within its 90.
FG_KERNEL_TIMEOUT=${FG_KERNEL_TIMEOUT:-3900}
OUT=$REPO/build/kernels

die() {
	echo "test-kernels: $*" >&2
	exit 1
}

# fetch_kernel PACKAGE: prints the unpacked tree, downloading only once.
fetch_kernel() {
	local pkg=$1 tree=$FG_KERNEL_CACHE/$1 deb kver
	if [ ! -e "$tree/.complete" ]; then
		rm -rf "$tree" && mkdir -p "$tree/download" || return 1
		echo "test-kernels: downloading $pkg" >&2
		# apt's _apt user cannot write here; quiet its warning about that.
		(cd "$tree/download" && apt-get download -q "$pkg" 2>&1 | grep -v unsandboxed) >&2
		deb=$(ls "$tree/download"/*.deb 2>/dev/null | head -1)
		[ -n "$deb" ] || { echo "test-kernels: apt-get download $pkg failed" >&2; return 1; }
		dpkg-deb -x "$deb" "$tree/root" || return 1
		kver=$(ls "$tree/root/lib/modules")
		depmod -b "$tree/root" "$kver" || return 1
		rm -f "$deb"
		touch "$tree/.complete"
	fi
	echo "$tree/root"
}

# build_initramfs KROOT IMAGE: busybox plus the modules that reach the 9p
# root; tests/kernels/init does the rest.
build_initramfs() {
	local kroot=$1 image=$2 kver dir ko mod
	kver=$(ls "$kroot/lib/modules")
	dir=$(mktemp -d) || return 1
	mkdir -p "$dir"/{bin,modules,proc,sys,dev,lower,upper,newroot}
	cp /bin/busybox "$dir/bin/busybox" || return 1
	cp "$REPO/tests/kernels/init" "$dir/init" && chmod 755 "$dir/init"
	# Dependency order from the host's kmod; a module needed twice is loaded once.
	for ko in $(for mod in virtio_pci 9pnet_virtio 9p overlay; do
		modprobe -d "$kroot" -S "$kver" --show-depends "$mod"
	done | awk '$1 == "insmod" { print $2 }'); do
		grep -qx "$(basename "$ko")" "$dir/modules/order" 2>/dev/null && continue
		cp "$ko" "$dir/modules/" || return 1
		basename "$ko" >>"$dir/modules/order"
	done
	(cd "$dir" && find . | cpio -o -H newc --quiet | gzip -1) >"$image"
	local rc=$?
	rm -rf "$dir"
	return $rc
}

# boot KROOT RESULTS: runs the guest; its console goes to RESULTS/console.log.
# mitigations=off: the guest is a throwaway test machine, and under TCG the
# speculation mitigations (emulated barriers on every syscall and BPF call)
# cost about 15% of the run (measured 2026-12-03: 76 s -> 65 s on four suites).
boot() {
	local kroot=$1 results=$2 kver
	kver=$(ls "$kroot/lib/modules")
	timeout --foreground -k 10 "$FG_KERNEL_TIMEOUT" qemu-system-x86_64 \
		-machine q35 -accel tcg,thread=multi -cpu max -smp 2 -m 3G \
		-nographic -no-reboot -nodefaults -serial stdio \
		-kernel "$kroot/boot/vmlinuz-$kver" -initrd "$results/initramfs.gz" \
		-append "console=ttyS0 quiet panic=-1 mitigations=off fg_repo=$REPO fg_results=$results fg_kroot=$kroot fg_suites=${FG_SUITES:-.}" \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs local,path="$results",mount_tag=results,security_model=none \
		</dev/null >"$results/console.log" 2>&1 &
	local qemu=$!
	# Progress lines the guest marks for the host; the full log stays in the file.
	tail -n +1 -F --pid=$qemu "$results/console.log" 2>/dev/null | grep --line-buffered -o 'fg-guest: .*' &
	local progress=$!
	wait $qemu
	local rc=$?
	wait $progress # tail ends by itself once qemu is gone
	return $rc
}

run_kernel() {
	local pkg=$1 kroot results start rc
	start=$SECONDS
	kroot=$(fetch_kernel "$pkg") || return 1
	results=$OUT/$pkg
	rm -rf "$results" && mkdir -p "$results" || return 1
	build_initramfs "$kroot" "$results/initramfs.gz" || return 1
	echo "test-kernels: booting $pkg under qemu (TCG, timeout ${FG_KERNEL_TIMEOUT}s)"
	boot "$kroot" "$results"
	rc=$?
	if [ ! -s "$results/result" ]; then
		[ "$rc" -eq 124 ] && echo "test-kernels: $pkg: no result within ${FG_KERNEL_TIMEOUT}s"
		echo "test-kernels: $pkg: the guest did not finish (qemu exit $rc); last console lines:"
		tail -n 30 "$results/console.log"
		SUMMARY+=("$pkg: DID NOT FINISH in $((SECONDS - start)) s")
		return 1
	fi
	SUMMARY+=("$pkg: guest uname -r $(cat "$results/uname"), $(cat "$results/result") in $((SECONDS - start)) s")
	grep -q '^passed ' "$results/result"
}

[ "$(id -u)" -eq 0 ] || die "needs root (qemu shares / over 9p, apt caches the kernel)"
for tool in qemu-system-x86_64 busybox cpio modprobe depmod dpkg-deb apt-get; do
	command -v "$tool" >/dev/null || die "needs $tool: run scripts/install-deps.sh kernels"
done
[ -x "$REPO/build/floodgate" ] || die "needs build/floodgate: run make tests"

SUMMARY=()
failed=0
total_start=$SECONDS
for pkg in $FG_KERNELS; do
	run_kernel "$pkg" || failed=1
done
echo
echo "test-kernels summary ($((SECONDS - total_start)) s):"
printf '  %s\n' "${SUMMARY[@]}"
exit $failed
