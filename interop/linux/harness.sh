#!/bin/bash
# harness.sh - run one Linux guest with the kernel's RDS/TCP stack in a private
# network namespace, for interop tests of rds4j.
#
#   harness.sh up                      boot the guest, print KEY=VALUE lines
#   harness.sh guest CMD...            run shell text in the guest, print output, exit with its status
#   harness.sh guest-bg NAME CMD...    start a guest job in the background
#   harness.sh guest-out NAME          print a background job's output so far
#   harness.sh guest-expect NAME REGEX [TIMEOUT_S]   wait until its output has a matching line
#   harness.sh guest-wait NAME [TIMEOUT_S]           wait for it to end; print output; exit with its status
#   harness.sh guest-kill NAME [SIGNAL]              stop it (TERM, then KILL), print output
#   harness.sh exec CMD...             run a host command inside the namespace (peer at HOST_ADDR)
#   harness.sh dmesg                   the guest's kernel log
#   harness.sh counters                the guest's RDS counters (rdsagent counters)
#   harness.sh env                     print the KEY=VALUE lines of the running instance again
#   harness.sh status                  exit 0 if the guest is up
#   harness.sh down                    stop everything, delete the namespace (idempotent)
#
# Network rule: everything lives in a namespace created here (bridge + tap with
# 10.213.0.0/24); nothing is routed out of it and the root namespace is never
# touched.  State (pids, names, FIFOs, logs) is kept in STATE_DIR so that each
# subcommand can be a separate process.
#
# Environment: RDS4J_KERNEL (6.1|6.12|7.2, default 6.1: the kernel setup.sh prepared
# in target/kernel-GEN), RDS4J_STATE_DIR (default target/state-GEN), RDS4J_GUESTS
# (with `up`: 1, or 2 for a second guest 10.213.0.3 on the same bridge),
# RDS4J_GUEST (which guest the guest-* commands talk to: 1, the default, or 2),
# RDS4J_ACCEL (kvm|tcg, skips the probe), RDS4J_BOOT_TIMEOUT (default 90),
# RDS4J_GUEST_TIMEOUT (default 60 s per foreground guest command), RDS4J_QEMU_MEM
# (default 512M).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TARGET="$HERE/target"
KERNEL_GEN="${RDS4J_KERNEL:-6.1}"
# Each kernel generation has its own build (setup.sh) and state, so they coexist.
KTARGET="$TARGET/kernel-$KERNEL_GEN"
STATE="${RDS4J_STATE_DIR:-$TARGET/state-$KERNEL_GEN}"
HOST_ADDR=10.213.0.1
PREFIX=24
BRIDGE=rds4jbr0
MAX_GUESTS=2
# Guest N (1 or 2) is 10.213.0.(N+1) on tap rds4jtap(N-1); its files (qemu pid, console, command channel) are in
# STATE for guest 1 and STATE/guestN for the others.
guest_addr() { echo "10.213.0.$(( $1 + 1 ))"; }
guest_tap() { echo "rds4jtap$(( $1 - 1 ))"; }
guest_dir() { if [ "$1" = 1 ]; then echo "$STATE"; else echo "$STATE/guest$1"; fi; }
GUEST="${RDS4J_GUEST:-1}"
case "$GUEST" in 1|2) ;; *) echo "harness: ERROR: RDS4J_GUEST=$GUEST (1 or 2)" >&2; exit 2 ;; esac
GD="$(guest_dir "$GUEST")"
GUEST_ADDR="$(guest_addr 1)"
BOOT_TIMEOUT="${RDS4J_BOOT_TIMEOUT:-90}"
GUEST_TIMEOUT="${RDS4J_GUEST_TIMEOUT:-60}"

log() { echo "harness: $*" >&2; }
die() { echo "harness: ERROR: $*" >&2; exit 1; }

need_root() { [ "$(id -u)" = 0 ] || die "must run as root (network namespaces, tap devices)"; }

state_get() { cat "$STATE/$1" 2>/dev/null || true; }

# A pid is only ours if it still runs the program we started (pids get reused).
pid_is() {
    local pid="$1" what="$2"
    [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] && tr '\0' ' ' < "/proc/$pid/cmdline" | grep -q -- "$what"
}

# TERM, wait up to 5 s, then KILL.
stop_pid() {
    local pid="$1" what="$2" i
    pid_is "$pid" "$what" || return 0
    kill -TERM "$pid" 2>/dev/null || true
    for i in $(seq 50); do pid_is "$pid" "$what" || return 0; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
    for i in $(seq 20); do pid_is "$pid" "$what" || return 0; sleep 0.1; done
    log "WARN pid $pid ($what) survived SIGKILL"
}

# ------------------------------------------------------------------ down

cmd_down() {
    need_root
    [ -d "$STATE" ] || return 0
    local ns
    ns="$(state_get ns)"
    local n d
    for n in $(seq "$MAX_GUESTS"); do
        d="$(guest_dir "$n")"
        [ -d "$d" ] || continue
        stop_pid "$(cat "$d/qemu.pid" 2>/dev/null || true)" qemu-system
        stop_pid "$(cat "$d/reader.pid" 2>/dev/null || true)" "cat $d/cmd.out"
        rm -f "$d"/qemu.pid "$d"/reader.pid "$d"/cmd.in "$d"/cmd.out "$d"/monitor.sock
    done
    if [ -n "$ns" ] && ip netns list | awk '{print $1}' | grep -qx "$ns"; then
        # Stop anything still running inside (e.g. a host peer started by `exec`).
        local p
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$p" 2>/dev/null || true; done
        sleep 0.2
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
        for n in $(seq "$MAX_GUESTS"); do ip -n "$ns" link del "$(guest_tap "$n")" 2>/dev/null || true; done
        ip -n "$ns" link del "$BRIDGE" 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || log "WARN could not delete namespace $ns"
    fi
    rm -f "$STATE"/ns "$STATE"/env "$STATE"/ready "$STATE"/guests
    log "down (logs kept in $STATE)"
}

# -------------------------------------------------------------------- up

# Decides once per machine whether KVM works; the result is cached in
# target/accel.  A CPU without vmx/svm gets TCG without trying: on such hosts
# /dev/kvm may exist but a KVM guest never prints anything.
pick_accel() {
    if [ -n "${RDS4J_ACCEL:-}" ]; then echo "$RDS4J_ACCEL"; return; fi
    if [ -s "$TARGET/accel" ]; then cat "$TARGET/accel"; return; fi
    local a=tcg
    if grep -qE '\b(vmx|svm)\b' /proc/cpuinfo && [ -w /dev/kvm ]; then
        a=kvm-try
    fi
    echo "$a"
}

start_qemu() {
    local accel="$1" ns="$2" n="$3"
    local d addr
    d="$(guest_dir "$n")"
    addr="$(guest_addr "$n")"
    : > "$d/console.log"
    local kver
    kver="$(cat "$KTARGET/kernel-version")"
    # -display none instead of -nographic: -daemonize refuses -nographic, and
    # both serial ports are redirected anyway (ttyS0 = console log file,
    # ttyS1 = command channel FIFOs).
    # event_idx=off: under TCG a 6.1 guest's virtio NIC died for good during the
    # rds-stress scenarios (in 3 of 5 full-suite runs on one day, 2 with nothing on
    # the console); with the ring's event index off it passed 5 of 5 (docs/interop.md).
    ip netns exec "$ns" qemu-system-x86_64 \
        -name "rds4j-guest$n" \
        -machine pc -accel "$accel" -cpu max -smp 1 -m "${RDS4J_QEMU_MEM:-512M}" \
        -nodefaults -display none -vga none -no-reboot \
        -kernel "$KTARGET/vmlinuz" -initrd "$KTARGET/initramfs.gz" \
        -append "console=ttyS0 panic=-1 loglevel=4 mitigations=off 8250.nr_uarts=2 rds4j.ip=$addr/$PREFIX rds4j.name=rds4j-guest$n" \
        -serial "file:$d/console.log" \
        -serial "pipe:$d/cmd" \
        -monitor "unix:$d/monitor.sock,server=on,wait=off" \
        -netdev "tap,id=n0,ifname=$(guest_tap "$n"),script=no,downscript=no" \
        -device "virtio-net-pci,netdev=n0,mac=52:54:00:d5:00:0$(( n + 1 )),event_idx=off" \
        -pidfile "$d/qemu.pid" -daemonize \
        >"$d/qemu.log" 2>&1 || { cat "$d/qemu.log" >&2; return 1; }
    log "guest $n: qemu pid $(cat "$d/qemu.pid") accel=$accel kernel=$kver"
}

# Bounded wait for a regex in guest N's console log; returns 1 on timeout or qemu exit.
wait_console() {
    local regex="$1" secs="$2" n="$3" deadline d
    d="$(guest_dir "$n")"
    deadline=$(( $(date +%s) + secs ))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        grep -qE "$regex" "$d/console.log" 2>/dev/null && return 0
        pid_is "$(cat "$d/qemu.pid" 2>/dev/null || true)" qemu-system || { log "guest $n: qemu exited"; return 1; }
        sleep 0.1
    done
    return 1
}

cmd_up() {
    need_root
    [ -s "$KTARGET/initramfs.gz" ] && [ -s "$KTARGET/vmlinuz" ] \
        || die "no build for kernel $KERNEL_GEN: run RDS4J_KERNEL=$KERNEL_GEN setup.sh first"
    local guests="${RDS4J_GUESTS:-1}" n d
    case "$guests" in 1|2) ;; *) die "RDS4J_GUESTS=$guests (1 or 2)" ;; esac
    # `up` always starts fresh: a previous instance from this STATE_DIR goes first.
    cmd_down 2>/dev/null || true
    mkdir -p "$STATE"
    rm -rf "$STATE/guest2"
    local ns="rds4j-$$"
    echo "$ns" > "$STATE/ns"
    echo "$guests" > "$STATE/guests"
    # Any failure from here on tears everything down again.
    trap 'rc=$?; if [ $rc -ne 0 ]; then log "up failed (rc=$rc), cleaning up"; tail -20 "$STATE/console.log" >&2 2>/dev/null || true; cmd_down; fi' EXIT
    trap 'exit 130' INT TERM

    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$ns" link add "$BRIDGE" type bridge
    ip -n "$ns" addr add "$HOST_ADDR/$PREFIX" dev "$BRIDGE"
    ip -n "$ns" link set "$BRIDGE" up
    for n in $(seq "$guests"); do
        ip -n "$ns" tuntap add dev "$(guest_tap "$n")" mode tap
        ip -n "$ns" link set "$(guest_tap "$n")" master "$BRIDGE"
        ip -n "$ns" link set "$(guest_tap "$n")" up
        # The command channel: qemu opens cmd.in/cmd.out read-write, so neither side
        # blocks on open.  A reader process copies everything the guest writes into
        # cmd.log, so no output is lost between `guest` invocations.
        d="$(guest_dir "$n")"
        mkdir -p "$d"
        rm -f "$d/cmd.in" "$d/cmd.out"
        mkfifo "$d/cmd.in" "$d/cmd.out"
        : > "$d/cmd.log"
    done

    local accel t0 t1
    accel="$(pick_accel)"
    t0=$(date +%s%N)
    if [ "$accel" = kvm-try ]; then
        start_qemu kvm "$ns" 1
        if wait_console '.' 15 1; then
            accel=kvm
        else
            log "KVM guest printed nothing in 15 s; falling back to TCG"
            stop_pid "$(cat "$STATE/qemu.pid")" qemu-system
            accel=tcg
            t0=$(date +%s%N)
            start_qemu tcg "$ns" 1
        fi
        echo "$accel" > "$TARGET/accel"
    else
        [ -s "$TARGET/accel" ] || echo "$accel" > "$TARGET/accel"
        start_qemu "$accel" "$ns" 1
    fi
    # Further guests boot alongside the first.
    for n in $(seq 2 "$guests"); do start_qemu "$accel" "$ns" "$n"; done
    for n in $(seq "$guests"); do
        d="$(guest_dir "$n")"
        setsid cat "$d/cmd.out" >> "$d/cmd.log" 2>/dev/null < /dev/null &
        echo $! > "$d/reader.pid"
    done

    for n in $(seq "$guests"); do
        d="$(guest_dir "$n")"
        wait_console '^RDSINIT (READY|ERROR)' "$BOOT_TIMEOUT" "$n" || die "guest $n not ready within ${BOOT_TIMEOUT}s"
        grep -q '^RDSINIT ERROR' "$d/console.log" && die "guest $n: $(grep '^RDSINIT ERROR' "$d/console.log")"
    done
    t1=$(date +%s%N)
    for n in $(seq "$guests"); do
        GD="$(guest_dir "$n")"
        # The guest's command server says HELLO once its serial line is raw; a request sent before that is echoed
        # by the tty's cooked mode and never read, so wait for it (bounded) before the first request.
        local hello_deadline=$(( $(date +%s) + 30 ))
        until grep -q '^@@RDSCMD-HELLO' "$GD/cmd.log" 2>/dev/null; do
            [ "$(date +%s)" -lt "$hello_deadline" ] || die "guest $n: the command server never said hello"
            pid_is "$(cat "$GD/qemu.pid")" qemu-system || die "guest $n: qemu exited"
            sleep 0.05
        done
        # Prove the command channel end to end before declaring the guest usable.
        local probe
        probe="$(guest_rpc 20 'echo chan-ok' 2>&1)" || die "guest $n: command channel not answering: $probe"
        [ "$probe" = chan-ok ] || die "guest $n: command channel garbled: $probe"
    done
    GD="$(guest_dir "$GUEST")"
    local t2 boot_ms ready_ms
    t2=$(date +%s%N)
    boot_ms=$(( (t1 - t0) / 1000000 ))
    ready_ms=$(( (t2 - t0) / 1000000 ))

    {
        echo "NS=$ns"
        echo "HOST_ADDR=$HOST_ADDR"
        echo "GUEST_ADDR=$GUEST_ADDR"
        [ "$guests" -ge 2 ] && echo "GUEST2_ADDR=$(guest_addr 2)"
        echo "PREFIX=$PREFIX"
        echo "BRIDGE=$BRIDGE"
        echo "TAP=$(guest_tap 1)"
        echo "STATE_DIR=$STATE"
        echo "ACCEL=$accel"
        echo "KERNEL=$KERNEL_GEN"
        echo "KERNEL_VERSION=$(cat "$KTARGET/kernel-version")"
        echo "QEMU_PID=$(cat "$STATE/qemu.pid")"
        echo "CONSOLE_LOG=$STATE/console.log"
        echo "BOOT_MS=$boot_ms"
        echo "READY_MS=$ready_ms"
    } > "$STATE/env"
    touch "$STATE/ready"
    trap - EXIT INT TERM
    cat "$STATE/env"
}

# ----------------------------------------------------------- guest channel

require_up() {
    [ -e "$STATE/ready" ] || die "guest is not up (run: $0 up)"
    [ "$GUEST" -le "$(state_get guests)" ] || die "guest $GUEST was not booted (RDS4J_GUESTS=$GUEST with up)"
    pid_is "$(cat "$GD/qemu.pid" 2>/dev/null || true)" qemu-system || die "qemu of guest $GUEST is not running (see $GD/console.log)"
}

# Sends one request over the serial channel and prints the response body.
# Returns the guest command's exit status (124 if no answer in time).
guest_rpc() {
    local tmo="$1" text="$2"
    case "$text" in *$'\n'*|*$'\r'*) die "guest command must be a single line" ;; esac
    [ -n "$text" ] || die "empty guest command"
    local id="$$-$RANDOM-$(date +%s%N)"
    # One request at a time on the serial line; waiting for the lock is bounded too.
    exec 9>"$GD/cmd.lock"
    flock -w $(( tmo + 60 )) 9 || die "command channel busy for $(( tmo + 60 ))s"
    local off
    off=$(stat -c %s "$GD/cmd.log")
    # Opening the FIFO would block forever if qemu had died; bound it.
    timeout 5 bash -c 'printf "%s %s %s\n" "$1" "$2" "$3" > "$4"' _ "$id" "$tmo" "$text" "$GD/cmd.in" \
        || { flock -u 9; die "cannot write to the command channel"; }
    local deadline=$(( $(date +%s) + tmo + 15 )) done=0
    while [ "$(date +%s)" -lt "$deadline" ]; do
        if tail -c +$(( off + 1 )) "$GD/cmd.log" | grep -q "^@@RDSCMD-END $id rc="; then done=1; break; fi
        pid_is "$(cat "$GD/qemu.pid" 2>/dev/null || true)" qemu-system || break
        sleep 0.05
    done
    flock -u 9
    if [ "$done" != 1 ]; then
        log "no answer from the guest for request $id within $(( tmo + 15 ))s"
        return 124
    fi
    local body rc
    body="$(tail -c +$(( off + 1 )) "$GD/cmd.log" | awk -v id="$id" '
        $0 == "@@RDSCMD-BEGIN " id { on = 1; next }
        index($0, "@@RDSCMD-END " id " rc=") == 1 { exit }
        on { print }')"
    rc="$(tail -c +$(( off + 1 )) "$GD/cmd.log" | grep -m1 "^@@RDSCMD-END $id rc=" | sed 's/.*rc=//')"
    [ -n "$body" ] && printf '%s\n' "$body"
    return "${rc:-125}"
}

cmd_guest() {
    require_up
    guest_rpc "$GUEST_TIMEOUT" "$*"
}

# Single-quotes a string for the guest's sh.
shq() { printf "'%s'" "$(printf '%s' "$1" | sed "s/'/'\\\\''/g")"; }

check_name() { [[ "$1" =~ ^[A-Za-z0-9_.-]+$ ]] || die "bad job name '$1'"; }

cmd_guest_bg() {
    require_up
    [ $# -ge 2 ] || die "usage: guest-bg NAME CMD..."
    local name="$1"; shift
    check_name "$name"
    guest_rpc 20 "bgrun $name $(shq "$*")"
}

cmd_guest_out() {
    require_up
    check_name "${1:?usage: guest-out NAME}"
    guest_rpc 20 "cat /tmp/bg/$1.out"
}

# Polls (bounded) until the job's output has a line matching REGEX (grep -E).
cmd_guest_expect() {
    require_up
    local name="${1:?usage: guest-expect NAME REGEX [TIMEOUT_S]}" regex="${2:?regex}" secs="${3:-30}"
    check_name "$name"
    local deadline=$(( $(date +%s) + secs )) out
    while :; do
        if out="$(guest_rpc 20 "grep -E $(shq "$regex") /tmp/bg/$name.out")"; then
            printf '%s\n' "$out"
            return 0
        fi
        if guest_rpc 20 "test -e /tmp/bg/$name.rc" >/dev/null; then
            log "job $name ended before printing /$regex/"
            guest_rpc 20 "cat /tmp/bg/$name.out" >&2 || true
            return 1
        fi
        [ "$(date +%s)" -lt "$deadline" ] || { log "timeout waiting for /$regex/ from $name"; return 124; }
        sleep 0.2
    done
}

# Waits (bounded, polling without holding the channel) for a job to end, then
# prints its output and exits with its status; 124 on timeout.
cmd_guest_wait() {
    require_up
    local name="${1:?usage: guest-wait NAME [TIMEOUT_S]}" secs="${2:-60}"
    check_name "$name"
    local deadline=$(( $(date +%s) + secs ))
    while ! guest_rpc 20 "test -e /tmp/bg/$name.rc" >/dev/null; do
        guest_rpc 20 "test -e /tmp/bg/$name.pid" >/dev/null || die "no such job: $name"
        if [ "$(date +%s)" -ge "$deadline" ]; then
            log "job $name still running after ${secs}s"
            guest_rpc 20 "cat /tmp/bg/$name.out" || true
            return 124
        fi
        sleep 0.3
    done
    guest_rpc 20 "cat /tmp/bg/$name.out; exit \$(cat /tmp/bg/$name.rc)"
}

cmd_guest_kill() {
    require_up
    local name="${1:?usage: guest-kill NAME [SIGNAL]}" sig="${2:-TERM}"
    check_name "$name"
    # TERM first (agents print their summary on TERM), KILL after 5 s.
    local f="/tmp/bg/$name"
    guest_rpc 20 "p=\$(cat $f.pid 2>/dev/null) || { echo 'no such job: $name'; exit 3; };\
 [ -e $f.rc ] || kill -$sig \$p 2>/dev/null;\
 i=0; while [ ! -e $f.rc ] && [ \$i -lt 50 ]; do sleep 0.1; i=\$((i+1)); done;\
 [ -e $f.rc ] || kill -KILL \$p 2>/dev/null;\
 i=0; while [ ! -e $f.rc ] && [ \$i -lt 20 ]; do sleep 0.1; i=\$((i+1)); done;\
 cat $f.out; exit \$(cat $f.rc 2>/dev/null || echo 137)"
}

cmd_exec() {
    require_up
    [ $# -ge 1 ] || die "usage: exec CMD..."
    exec ip netns exec "$(state_get ns)" "$@"
}

cmd_status() {
    [ -e "$STATE/ready" ] && pid_is "$(cat "$GD/qemu.pid" 2>/dev/null || true)" qemu-system && { cat "$STATE/env"; return 0; }
    echo "DOWN"
    return 1
}

sub="${1:-}"
[ $# -gt 0 ] && shift
case "$sub" in
    up) cmd_up ;;
    down) cmd_down ;;
    guest) [ $# -ge 1 ] || die "usage: guest CMD..."; cmd_guest "$@" ;;
    guest-bg) cmd_guest_bg "$@" ;;
    guest-out) cmd_guest_out "$@" ;;
    guest-expect) cmd_guest_expect "$@" ;;
    guest-wait) cmd_guest_wait "$@" ;;
    guest-kill) cmd_guest_kill "$@" ;;
    exec) cmd_exec "$@" ;;
    dmesg) cmd_guest dmesg ;;
    counters) cmd_guest rdsagent counters ;;
    env) require_up; cat "$STATE/env" ;;
    status) cmd_status ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
