#!/bin/bash
# setup.sh - prepare everything the Linux-kernel interop harness needs.
#
# Idempotent: installs missing Debian packages, compiles the static RDS agent and
# assembles a small gzip initramfs (busybox + rds/rds_tcp/virtio modules + agent
# + /init).  Outputs go to target/ next to this script.  The agent is recompiled
# only when its source changed; the initramfs is always re-packed (under 2 s).
#
# Environment:
#   RDS4J_KVER   kernel version to use (default: newest installed *-amd64 kernel
#                that ships rds_tcp.ko and has a /boot/vmlinuz)
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TARGET="$HERE/target"
mkdir -p "$TARGET"

log() { echo "setup: $*" >&2; }
die() { echo "setup: ERROR: $*" >&2; exit 1; }

[ "$(id -u)" = 0 ] || die "must run as root (installs packages, later creates namespaces/taps)"

# --- 1. packages -----------------------------------------------------------
# Checked one by one so a machine that already has them never touches apt.
PKGS=(linux-image-amd64 qemu-system-x86 busybox-static gcc libc6-dev iproute2
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
pick_kernel() {
    local d v best=""
    for d in /lib/modules/*; do
        v="$(basename "$d")"
        [ -e "/boot/vmlinuz-$v" ] || continue
        # rds_tcp may be stored compressed on newer Debian kernels.
        ls "$d"/kernel/net/rds/rds_tcp.ko* >/dev/null 2>&1 || continue
        best="$(printf '%s\n%s\n' "$best" "$v" | sed '/^$/d' | sort -V | tail -1)"
    done
    echo "$best"
}
KVER="${RDS4J_KVER:-$(pick_kernel)}"
[ -n "$KVER" ] || die "no installed kernel with rds_tcp.ko and /boot/vmlinuz found"
[ -e "/boot/vmlinuz-$KVER" ] || die "/boot/vmlinuz-$KVER missing"
log "kernel $KVER"
echo "$KVER" > "$TARGET/kernel-version"
# The harness boots this exact file; a copy keeps it stable if apt upgrades the kernel.
cp -f "/boot/vmlinuz-$KVER" "$TARGET/vmlinuz"

# --- 3. agent ----------------------------------------------------------------
AGENT_SRC="$HERE/agent/rdsagent.c"
AGENT_BIN="$TARGET/rdsagent"
if [ ! -x "$AGENT_BIN" ] || [ "$AGENT_SRC" -nt "$AGENT_BIN" ]; then
    log "compiling rdsagent"
    gcc -static -O2 -Wall -Wextra -o "$AGENT_BIN" "$AGENT_SRC"
fi

# --- 4. initramfs ------------------------------------------------------------
ROOT="$TARGET/initramfs-root"
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

# Modules in load order, with their dependencies, as modprobe would resolve them.
# inet_diag/tcp_diag let the agent abort RDS TCP connections via SOCK_DESTROY;
# virtio_net carries the guest NIC.  Missing optional ones are tolerated.
: > "$ROOT/etc/modules.order"
add_module() {
    local mod="$1" required="$2" line path base dst
    if ! deps="$(modprobe -S "$KVER" --show-depends "$mod" 2>/dev/null)"; then
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

(cd "$ROOT" && find . -print0 | sort -z | cpio --null -o -H newc --quiet) | gzip -9 > "$TARGET/initramfs.gz.tmp"
mv -f "$TARGET/initramfs.gz.tmp" "$TARGET/initramfs.gz"
log "initramfs $(du -k "$TARGET/initramfs.gz" | cut -f1) KiB -> $TARGET/initramfs.gz"

cat > "$TARGET/build-info" <<INFO
KERNEL_VERSION=$KVER
KERNEL=$TARGET/vmlinuz
INITRAMFS=$TARGET/initramfs.gz
AGENT=$AGENT_BIN
BUSYBOX_VERSION=$("$ROOT/bin/busybox" | head -1 | awk '{print $2}')
QEMU_VERSION=$(qemu-system-x86_64 --version | head -1 | awk '{print $4}')
INFO
log "done; see $TARGET/build-info"
