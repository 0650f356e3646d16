#!/bin/bash
# setup.sh - prepare everything the Linux-kernel interop harness needs.
#
# Idempotent: installs missing Debian packages, fetches the chosen kernel, compiles
# the static RDS agent and assembles a small gzip initramfs (busybox +
# rds/rds_tcp/virtio modules + agent + /init).  Outputs go to target/ next to this
# script, one directory per kernel generation (target/kernel-GEN/: vmlinuz,
# initramfs.gz, kernel-version, packages, build-info), so kernels coexist.  The
# agent is recompiled only when its source changed; the initramfs is always
# re-packed (under 2 s).
#
# Environment:
#   RDS4J_KERNEL          6.1 (default: bookworm's), 6.12 (trixie's) or 7.2 (sid's),
#                         each fetched as Debian packages into target/kernels/VERSION,
#                         never installed: the host's own kernels play no part
#   RDS4J_KERNEL_REFRESH  1: look for the suite's newest kernel again
#   RDS4J_KVER            instead of a fetched kernel, an installed one to boot (a
#                         version with rds_tcp.ko and a /boot/vmlinuz)
#   RDS4J_RDS_TOOLS       a folder with static builds of rds-stress, rds-ping and rds-info
#                         (the kernel world's rds-tools, oracle/rds-tools 2.0.7), packed into the
#                         guest as /bin/rds-*; default ../shared/rds-tools/bin relative to the
#                         project root when it exists
#   RDS4J_RDS_TOOLS_SRC   otherwise, rds-tools' source tarball, built here with gcc -static
#                         (default: ../shared/rds-tools/rds-tools-*.tar.gz relative to the
#                         project root). With neither, the guest has no rds-tools: with CI=true
#                         that is an error; otherwise their scenarios are skipped, saying so.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TARGET="$HERE/target"
mkdir -p "$TARGET"

log() { echo "setup: $*" >&2; }
die() { echo "setup: ERROR: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (installs packages, later creates namespaces/taps)"

# --- 1. packages -----------------------------------------------------------
# Checked one by one so a machine that already has them never touches apt.
PKGS=(qemu-system-x86 busybox-static gcc libc6-dev iproute2
      cpio gzip kmod xz-utils util-linux coreutils procps tcpdump)
missing=()
for p in "${PKGS[@]}"; do
    st="$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)"
    [ "$st" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    log "installing: ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    # Package lists may be absent on a fresh container; one update is enough.
    if ! apt-get install -y -q --no-install-recommends "${missing[@]}" >"$TARGET/apt.log" 2>&1; then
        apt-get update -q >>"$TARGET/apt.log" 2>&1 || true
        apt-get install -y -q --no-install-recommends "${missing[@]}" >>"$TARGET/apt.log" 2>&1 \
            || { tail -30 "$TARGET/apt.log" >&2; die "apt-get install failed (log: $TARGET/apt.log)"; }
    fi
else
    log "all packages present"
fi

# --- 2. kernel choice ------------------------------------------------------
# RDS4J_KERNEL picks the kernel generation; each comes from the Debian packages of its suite, fetched with a private apt configuration (its own sources list, lists and
# cache under target/apt/SUITE; the host's /etc/apt is never changed and nothing is installed) and unpacked with
# dpkg-deb into target/kernels/VERSION.  Once unpacked, a kernel is reused without network access;
# RDS4J_KERNEL_REFRESH=1 asks the suite for its newest kernel again.
KERNEL_GEN="${RDS4J_KERNEL:-6.1}"
case "$KERNEL_GEN" in
    6.1)  SUITE=bookworm ;;
    6.12) SUITE=trixie ;;
    7.2)  SUITE=sid ;;
    *) die "RDS4J_KERNEL=$KERNEL_GEN: known generations are 6.1 (bookworm), 6.12 (trixie) and 7.2 (sid)" ;;
esac
# An installed kernel instead, by hand only: whatever else /boot holds never decides which kernel a run boots.
[ -z "${RDS4J_KVER:-}" ] || SUITE=
KTARGET="$TARGET/kernel-$KERNEL_GEN"
mkdir -p "$KTARGET"

# apt with a configuration of its own for SUITE: nothing of the host's apt state is read or written but the
# package status (which apt-get download does not change).
private_apt() {
    local suite="$1"; shift
    local d="$TARGET/apt/$suite"
    mkdir -p "$d/lists/partial" "$d/cache/archives/partial" "$d/sources.list.d" "$d/preferences.d"
    echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian $suite main" \
        > "$d/sources.list"
    "$@" -q -o Dir::Etc::sourcelist="$d/sources.list" -o Dir::Etc::sourceparts="$d/sources.list.d" \
        -o Dir::Etc::preferencesparts="$d/preferences.d" -o Dir::State::Lists="$d/lists" \
        -o Dir::Cache="$d/cache" -o APT::Architecture=amd64
}

# The suite's linux-image-amd64 names the image package of its current kernel; since 7.x Debian splits that image
# into linux-binary-ABI (vmlinuz), linux-modules-ABI and linux-base-ABI (modules.order, modules.builtin), which
# the image package depends on.  Prints
# "package=version" lines of the packages to unpack.
resolve_packages() {
    local suite="$1" image ver deps p
    image="$(private_apt "$suite" apt-cache show linux-image-amd64 | sed -n 's/^Depends: .*\(linux-image-[0-9][^ ,]*-amd64\) .*/\1/p' | head -1)"
    [ -n "$image" ] || die "$suite: linux-image-amd64 names no kernel image"
    ver="$(private_apt "$suite" apt-cache show "$image" | sed -n 's/^Version: //p' | head -1)"
    echo "$image=$ver"
    deps="$(private_apt "$suite" apt-cache show "$image=$ver" | sed -n 's/^Depends: //p' | head -1)"
    for p in $(echo "$deps" | tr ',|' '\n\n' | awk '{print $1}' | grep -E '^linux-(binary|modules|base)-[0-9]' || true); do
        echo "$p=$ver"
    done
}

if [ -z "$SUITE" ]; then
    KVER="$RDS4J_KVER"
    [ -e "/boot/vmlinuz-$KVER" ] || die "RDS4J_KVER=$KVER: /boot/vmlinuz-$KVER missing"
    MODROOT=/
    VMLINUZ="/boot/vmlinuz-$KVER"
    PACKAGES="$(dpkg -S "/boot/vmlinuz-$KVER" | cut -d: -f1 | while read -r p; do
        echo "$p=$(dpkg-query -W -f='${Version}' "$p")"; done)"
else
    if [ "${RDS4J_KERNEL_REFRESH:-0}" = 1 ] || [ ! -s "$KTARGET/packages" ] \
        || [ ! -e "$TARGET/kernels/$(cat "$KTARGET/kernel-version" 2>/dev/null)/.unpacked" ]; then
        log "$KERNEL_GEN: package lists of $SUITE (private apt configuration)"
        private_apt "$SUITE" apt-get update >"$TARGET/apt-$SUITE.log" 2>&1 \
            || { tail -20 "$TARGET/apt-$SUITE.log" >&2; die "apt-get update for $SUITE failed"; }
        resolve_packages "$SUITE" > "$KTARGET/packages.new"
        debs="$TARGET/apt/$SUITE/debs"
        mkdir -p "$debs"
        while IFS='=' read -r p v; do
            if ! ls "$debs/${p}_${v//:/%3a}_"*.deb >/dev/null 2>&1; then
                log "downloading $p $v"
                (cd "$debs" && private_apt "$SUITE" apt-get -o APT::Sandbox::User=root download "$p=$v") \
                    >>"$TARGET/apt-$SUITE.log" 2>&1 || die "apt-get download $p=$v failed"
            fi
        done < "$KTARGET/packages.new"
        tree="$TARGET/kernels/unpack.$$"
        rm -rf "$tree"; mkdir -p "$tree"
        while IFS='=' read -r p v; do
            dpkg-deb -x "$(ls "$debs/${p}_${v//:/%3a}_"*.deb | head -1)" "$tree"
        done < "$KTARGET/packages.new"
        # merged /usr: modules live in usr/lib/modules; modprobe and depmod look under lib/modules.
        [ -e "$tree/lib" ] || ln -s usr/lib "$tree/lib"
        KVER="$(ls "$tree/lib/modules" | head -1)"
        [ -n "$KVER" ] || die "no lib/modules/<version> in the packages of $KERNEL_GEN"
        depmod -b "$tree" "$KVER"
        cp "$KTARGET/packages.new" "$tree/.unpacked"
        rm -rf "$TARGET/kernels/$KVER"
        mv "$tree" "$TARGET/kernels/$KVER"
        mv -f "$KTARGET/packages.new" "$KTARGET/packages"
        echo "$KVER" > "$KTARGET/kernel-version"
    fi
    KVER="$(cat "$KTARGET/kernel-version")"
    MODROOT="$TARGET/kernels/$KVER"
    VMLINUZ="$MODROOT/boot/vmlinuz-$KVER"
    [ -e "$VMLINUZ" ] || VMLINUZ="$MODROOT/lib/modules/$KVER/vmlinuz"
    [ -e "$VMLINUZ" ] || die "no vmlinuz in the packages of $KERNEL_GEN"
    PACKAGES="$(cat "$KTARGET/packages")"
fi
log "kernel $KERNEL_GEN: $KVER ($(echo $PACKAGES))"
echo "$KVER" > "$KTARGET/kernel-version"
# The harness boots this exact file; a copy keeps it stable if apt upgrades the kernel.
cp -f "$VMLINUZ" "$KTARGET/vmlinuz"

# --- 3. agent ----------------------------------------------------------------
AGENT_SRC="$HERE/agent/rdsagent.c"
AGENT_BIN="$TARGET/rdsagent"
if [ ! -x "$AGENT_BIN" ] || [ "$AGENT_SRC" -nt "$AGENT_BIN" ]; then
    log "compiling rdsagent"
    gcc -static -O2 -Wall -Wextra -o "$AGENT_BIN" "$AGENT_SRC"
fi

# --- 3b. rds-tools --------------------------------------------------------------
# The kernel world's own tools (oracle/rds-tools 2.0.7) are test peers, like the kernel: taken from a folder, or
# built from their source tarball, never part of the project. A folder named by the user must be complete.
PROJECT="$(cd "$HERE/../.." && pwd)"
RDS_TOOLS_NAMES=(rds-stress rds-ping rds-info)
RDS_TOOLS_HOWTO="give the folder of static x86-64 builds of rds-stress, rds-ping and rds-info (oracle/rds-tools 2.0.7) \
in RDS4J_RDS_TOOLS, or their source tarball (a git archive of github.com/oracle/rds-tools) in RDS4J_RDS_TOOLS_SRC, \
which setup.sh builds; see interop/linux/README.md, \"The kernel world's rds-tools\""
rds_tools_complete() {
    local p
    for p in "${RDS_TOOLS_NAMES[@]}"; do [ -x "$1/$p" ] || return 1; done
}
# Builds the three tools from a source tarball into target/rds-tools/bin, with the command their source is known
# to build with; again only when the tarball changed.
build_rds_tools() {
    local tarball="$1" out="$TARGET/rds-tools" sum src p
    sum="$(sha256sum "$tarball" | cut -d' ' -f1)"
    if [ "$(cat "$out/source.sha256" 2>/dev/null)" = "$sum" ] && rds_tools_complete "$out/bin"; then
        echo "$out/bin"; return 0
    fi
    log "building rds-tools from $(basename "$tarball")"
    rm -rf "$out"; mkdir -p "$out/src" "$out/bin"
    tar -xzf "$tarball" -C "$out/src" || die "cannot unpack $tarball"
    src="$(dirname "$(find "$out/src" -maxdepth 2 -name rds-stress.c | head -1)")"
    [ -f "$src/rds-stress.c" ] || die "$tarball holds no rds-stress.c: not rds-tools' source"
    for p in "${RDS_TOOLS_NAMES[@]}"; do
        (cd "$src" && gcc -static -O2 -Wall -Iinclude -DDEBUG_EXE -DRDS_VERSION=\"2.0.7\" -DDYNAMIC_PF_RDS \
            -o "$out/bin/$p" "$p.c" pfhack.c) >>"$out/build.log" 2>&1 \
            || { tail -20 "$out/build.log" >&2; die "building $p from $tarball failed (log: $out/build.log)"; }
        strip "$out/bin/$p"
    done
    echo "$sum" > "$out/source.sha256"
    echo "$out/bin"
}
RDS_TOOLS=
if [ -n "${RDS4J_RDS_TOOLS:-}" ]; then
    rds_tools_complete "$RDS4J_RDS_TOOLS" \
        || die "RDS4J_RDS_TOOLS=$RDS4J_RDS_TOOLS lacks one of ${RDS_TOOLS_NAMES[*]} (executable): $RDS_TOOLS_HOWTO"
    RDS_TOOLS="$RDS4J_RDS_TOOLS"
elif rds_tools_complete "$PROJECT/../shared/rds-tools/bin"; then
    RDS_TOOLS="$PROJECT/../shared/rds-tools/bin"
else
    tarball="${RDS4J_RDS_TOOLS_SRC:-}"
    if [ -z "$tarball" ]; then
        shopt -s nullglob
        for t in "$PROJECT"/../shared/rds-tools/rds-tools-*.tar.gz; do tarball="$t"; done
        shopt -u nullglob
    fi
    if [ -n "$tarball" ]; then
        [ -f "$tarball" ] || die "RDS4J_RDS_TOOLS_SRC=$tarball: no such file"
        RDS_TOOLS="$(build_rds_tools "$tarball")"
    fi
fi
if [ -n "$RDS_TOOLS" ]; then
    for p in "${RDS_TOOLS_NAMES[@]}"; do
        # The initramfs has no libc: a dynamic build would not start in the guest.
        if readelf -l "$RDS_TOOLS/$p" 2>/dev/null | grep -q 'program interpreter'; then
            die "$RDS_TOOLS/$p is dynamically linked; the guest needs a static build: $RDS_TOOLS_HOWTO"
        fi
    done
    log "rds-tools from $RDS_TOOLS"
elif [ "${CI:-}" = true ]; then
    die "no rds-tools for the guest (CI=true: their scenarios may not be skipped): $RDS_TOOLS_HOWTO"
else
    log "WARNING: no rds-tools for the guest; the scenarios with rds-stress, rds-ping and rds-info will be SKIPPED: $RDS_TOOLS_HOWTO"
fi

# --- 4. initramfs ------------------------------------------------------------
ROOT="$KTARGET/initramfs-root"
rm -rf "$ROOT"
mkdir -p "$ROOT"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,etc,root,lib/modules/"$KVER"}

# busybox-static: the initramfs has no libc, so a dynamic busybox would not run.
dpkg -S /bin/busybox 2>/dev/null | grep -q busybox-static || die "/bin/busybox is not from busybox-static (a dynamic busybox cannot run in the initramfs)"
cp /bin/busybox "$ROOT/bin/busybox"
# Every applet as a symlink so /init and harness commands can use plain names.
for a in $("$ROOT/bin/busybox" --list); do
    [ -e "$ROOT/bin/$a" ] || ln -s busybox "$ROOT/bin/$a"
done
cp "$AGENT_BIN" "$ROOT/bin/rdsagent"
if [ -n "$RDS_TOOLS" ]; then
    for p in "${RDS_TOOLS_NAMES[@]}"; do install -m 0755 "$RDS_TOOLS/$p" "$ROOT/bin/$p"; done
fi

# Modules in load order, with their dependencies, as modprobe would resolve them.
# inet_diag/tcp_diag let the agent abort RDS TCP connections via SOCK_DESTROY;
# virtio_net carries the guest NIC.  Missing optional ones are tolerated.
: > "$ROOT/etc/modules.order"
add_module() {
    local mod="$1" required="$2" line path base dst
    if ! deps="$(modprobe -d "$MODROOT" -S "$KVER" --show-depends "$mod" 2>/dev/null)"; then
        [ "$required" = 1 ] && die "module $mod not found for $KVER"
        log "optional module $mod not available (built in or absent)"
        return 0
    fi
    while read -r line; do
        case "$line" in
            insmod\ *) path="$(echo "$line" | awk '{print $2}')" ;;
            *) continue ;;   # "builtin xyz" lines need nothing
        esac
        base="$(basename "$path")"
        base="${base%.xz}"; base="${base%.zst}"; base="${base%.gz}"
        dst="$ROOT/lib/modules/$KVER/$base"
        grep -qx "$base" "$ROOT/etc/modules.order" && continue
        # busybox insmod cannot decompress, so store plain .ko files.
        case "$path" in
            *.xz)  xz -dc "$path" > "$dst" ;;
            *.zst) zstd -dc "$path" > "$dst" ;;
            *.gz)  gzip -dc "$path" > "$dst" ;;
            *)     cp "$path" "$dst" ;;
        esac
        echo "$base" >> "$ROOT/etc/modules.order"
    done <<< "$deps"
}
add_module virtio_pci 0
add_module virtio_net 0
add_module rds 1
add_module rds_tcp 1
add_module inet_diag 0
add_module tcp_diag 0
log "modules: $(tr '\n' ' ' < "$ROOT/etc/modules.order")"
echo "$KVER" > "$ROOT/etc/kernel-version"

install -m 0755 "$HERE/guest/init" "$ROOT/init"
install -m 0755 "$HERE/guest/cmdd.sh" "$ROOT/bin/cmdd.sh"
install -m 0755 "$HERE/guest/bgrun" "$ROOT/bin/bgrun"

(cd "$ROOT" && find . -print0 | sort -z | cpio --null -o -H newc --quiet) | gzip -9 > "$KTARGET/initramfs.gz.tmp"
mv -f "$KTARGET/initramfs.gz.tmp" "$KTARGET/initramfs.gz"
log "initramfs $(du -k "$KTARGET/initramfs.gz" | cut -f1) KiB -> $KTARGET/initramfs.gz"

{
    echo "KERNEL_GENERATION=$KERNEL_GEN"
    echo "KERNEL_VERSION=$KVER"
    echo "$PACKAGES" | sed 's/^/KERNEL_PACKAGE=/'
    echo "KERNEL=$KTARGET/vmlinuz"
    echo "INITRAMFS=$KTARGET/initramfs.gz"
    echo "AGENT=$AGENT_BIN"
    if [ -n "$RDS_TOOLS" ]; then
        for p in "${RDS_TOOLS_NAMES[@]}"; do
            echo "RDS_TOOL=$p sha256=$(sha256sum "$RDS_TOOLS/$p" | cut -d' ' -f1)"
        done
    else
        echo "RDS_TOOL=none"
    fi
    echo "BUSYBOX_VERSION=$("$ROOT/bin/busybox" | head -1 | awk '{print $2}')"
    echo "QEMU_VERSION=$(qemu-system-x86_64 --version | head -1 | awk '{print $4}')"
} > "$KTARGET/build-info"
# target/build-info: every kernel prepared so far, one block each.
for f in "$TARGET"/kernel-*/build-info; do cat "$f"; echo; done > "$TARGET/build-info"
log "done; see $KTARGET/build-info"
