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
# Environment: RDS4J_STATE_DIR (default target/state), RDS4J_ACCEL (kvm|tcg, skips
# the probe), RDS4J_BOOT_TIMEOUT (default 90), RDS4J_GUEST_TIMEOUT (default 60 s
# per foreground guest command), RDS4J_QEMU_MEM (default 512M).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
TARGET="$HERE/target"
STATE="${RDS4J_STATE_DIR:-$TARGET/state}"
HOST_ADDR=10.213.0.1
GUEST_ADDR=10.213.0.2
PREFIX=24
BRIDGE=rds4jbr0
TAP=rds4jtap0
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
    stop_pid "$(state_get qemu.pid)" qemu-system
    stop_pid "$(state_get reader.pid)" "cat $STATE/cmd.out"
    if [ -n "$ns" ] && ip netns list | awk '{print $1}' | grep -qx "$ns"; then
        # Stop anything still running inside (e.g. a host peer started by `exec`).
        local p
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -TERM "$p" 2>/dev/null || true; done
        sleep 0.2
        for p in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$p" 2>/dev/null || true; done
        ip -n "$ns" link del "$TAP" 2>/dev/null || true
        ip -n "$ns" link del "$BRIDGE" 2>/dev/null || true
        ip netns del "$ns" 2>/dev/null || log "WARN could not delete namespace $ns"
    fi
    rm -f "$STATE"/qemu.pid "$STATE"/reader.pid "$STATE"/ns "$STATE"/cmd.in "$STATE"/cmd.out \
          "$STATE"/monitor.sock "$STATE"/env "$STATE"/ready
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
    local accel="$1" ns="$2"
    : > "$STATE/console.log"
    local kver
    kver="$(cat "$TARGET/kernel-version")"
    # -display none instead of -nographic: -daemonize refuses -nographic, and
    # both serial ports are redirected anyway (ttyS0 = console log file,
    # ttyS1 = command channel FIFOs).
    ip netns exec "$ns" qemu-system-x86_64 \
        -name rds4j-guest \
        -machine pc -accel "$accel" -cpu max -smp 1 -m "${RDS4J_QEMU_MEM:-512M}" \
        -nodefaults -display none -vga none -no-reboot \
        -kernel "$TARGET/vmlinuz" -initrd "$TARGET/initramfs.gz" \
        -append "console=ttyS0 panic=-1 loglevel=4 mitigations=off 8250.nr_uarts=2 rds4j.ip=$GUEST_ADDR/$PREFIX rds4j.name=rds4j-guest" \
        -serial "file:$STATE/console.log" \
        -serial "pipe:$STATE/cmd" \
        -monitor "unix:$STATE/monitor.sock,server=on,wait=off" \
        -netdev "tap,id=n0,ifname=$TAP,script=no,downscript=no" \
        -device "virtio-net-pci,netdev=n0,mac=52:54:00:d5:00:02" \
        -pidfile "$STATE/qemu.pid" -daemonize \
        >"$STATE/qemu.log" 2>&1 || { cat "$STATE/qemu.log" >&2; return 1; }
    log "qemu pid $(state_get qemu.pid) accel=$accel kernel=$kver"
}

# Bounded wait for a regex in the console log; returns 1 on timeout or qemu exit.
wait_console() {
    local regex="$1" secs="$2" deadline
    deadline=$(( $(date +%s) + secs ))
    while [ "$(date +%s)" -lt "$deadline" ]; do
        grep -qE "$regex" "$STATE/console.log" 2>/dev/null && return 0
        pid_is "$(state_get qemu.pid)" qemu-system || { log "qemu exited"; return 1; }
        sleep 0.1
    done
    return 1
}

cmd_up() {
    need_root
    [ -s "$TARGET/initramfs.gz" ] && [ -s "$TARGET/vmlinuz" ] || die "run setup.sh first"
    # `up` always starts fresh: a previous instance from this STATE_DIR goes first.
    cmd_down 2>/dev/null || true
    mkdir -p "$STATE"
    local ns="rds4j-$$"
    echo "$ns" > "$STATE/ns"
    # Any failure from here on tears everything down again.
    trap 'rc=$?; if [ $rc -ne 0 ]; then log "up failed (rc=$rc), cleaning up"; tail -20 "$STATE/console.log" >&2 2>/dev/null || true; cmd_down; fi' EXIT
    trap 'exit 130' INT TERM

    ip netns add "$ns"
    ip -n "$ns" link set lo up
    ip -n "$ns" link add "$BRIDGE" type bridge
    ip -n "$ns" tuntap add dev "$TAP" mode tap
    ip -n "$ns" link set "$TAP" master "$BRIDGE"
    ip -n "$ns" addr add "$HOST_ADDR/$PREFIX" dev "$BRIDGE"
    ip -n "$ns" link set "$BRIDGE" up
    ip -n "$ns" link set "$TAP" up

    # The command channel: qemu opens cmd.in/cmd.out read-write, so neither side
    # blocks on open.  A reader process copies everything the guest writes into
    # cmd.log, so no output is lost between `guest` invocations.
    rm -f "$STATE/cmd.in" "$STATE/cmd.out"
    mkfifo "$STATE/cmd.in" "$STATE/cmd.out"
    : > "$STATE/cmd.log"

    local accel t0 t1
    accel="$(pick_accel)"
    t0=$(date +%s%N)
    if [ "$accel" = kvm-try ]; then
        start_qemu kvm "$ns"
        if wait_console '.' 15; then
            accel=kvm
        else
            log "KVM guest printed nothing in 15 s; falling back to TCG"
            stop_pid "$(state_get qemu.pid)" qemu-system
            accel=tcg
            t0=$(date +%s%N)
            start_qemu tcg "$ns"
        fi
        echo "$accel" > "$TARGET/accel"
    else
        [ -s "$TARGET/accel" ] || echo "$accel" > "$TARGET/accel"
        start_qemu "$accel" "$ns"
    fi
    setsid cat "$STATE/cmd.out" >> "$STATE/cmd.log" 2>/dev/null < /dev/null &
    echo $! > "$STATE/reader.pid"

    wait_console '^RDSINIT (READY|ERROR)' "$BOOT_TIMEOUT" || die "guest not ready within ${BOOT_TIMEOUT}s"
    grep -q '^RDSINIT ERROR' "$STATE/console.log" && die "guest: $(grep '^RDSINIT ERROR' "$STATE/console.log")"
    t1=$(date +%s%N)
    # The guest's command server says HELLO once its serial line is raw; a request sent before that is echoed by
    # the tty's cooked mode and never read, so wait for it (bounded) before the first request.
    local hello_deadline=$(( $(date +%s) + 30 ))
    until grep -q '^@@RDSCMD-HELLO' "$STATE/cmd.log" 2>/dev/null; do
        [ "$(date +%s)" -lt "$hello_deadline" ] || die "the guest's command server never said hello"
        pid_is "$(state_get qemu.pid)" qemu-system || die "qemu exited"
        sleep 0.05
    done
    # Prove the command channel end to end before declaring the guest usable.
    local probe
    probe="$(guest_rpc 20 'echo chan-ok' 2>&1)" || die "command channel not answering: $probe"
    [ "$probe" = chan-ok ] || die "command channel garbled: $probe"
    local t2 boot_ms ready_ms
    t2=$(date +%s%N)
    boot_ms=$(( (t1 - t0) / 1000000 ))
    ready_ms=$(( (t2 - t0) / 1000000 ))

    cat > "$STATE/env" <<ENV
NS=$ns
HOST_ADDR=$HOST_ADDR
GUEST_ADDR=$GUEST_ADDR
PREFIX=$PREFIX
BRIDGE=$BRIDGE
TAP=$TAP
STATE_DIR=$STATE
ACCEL=$accel
KERNEL_VERSION=$(cat "$TARGET/kernel-version")
QEMU_PID=$(state_get qemu.pid)
CONSOLE_LOG=$STATE/console.log
BOOT_MS=$boot_ms
READY_MS=$ready_ms
ENV
    touch "$STATE/ready"
    trap - EXIT INT TERM
    cat "$STATE/env"
}

# ----------------------------------------------------------- guest channel

require_up() {
    [ -e "$STATE/ready" ] || die "guest is not up (run: $0 up)"
    pid_is "$(state_get qemu.pid)" qemu-system || die "qemu is not running (see $STATE/console.log)"
}

# Sends one request over the serial channel and prints the response body.
# Returns the guest command's exit status (124 if no answer in time).
guest_rpc() {
    local tmo="$1" text="$2"
    case "$text" in *$'\n'*|*$'\r'*) die "guest command must be a single line" ;; esac
    [ -n "$text" ] || die "empty guest command"
    local id="$$-$RANDOM-$(date +%s%N)"
    # One request at a time on the serial line; waiting for the lock is bounded too.
    exec 9>"$STATE/cmd.lock"
    flock -w $(( tmo + 60 )) 9 || die "command channel busy for $(( tmo + 60 ))s"
    local off
    off=$(stat -c %s "$STATE/cmd.log")
    # Opening the FIFO would block forever if qemu had died; bound it.
    timeout 5 bash -c 'printf "%s %s %s\n" "$1" "$2" "$3" > "$4"' _ "$id" "$tmo" "$text" "$STATE/cmd.in" \
        || { flock -u 9; die "cannot write to the command channel"; }
    local deadline=$(( $(date +%s) + tmo + 15 )) done=0
    while [ "$(date +%s)" -lt "$deadline" ]; do
        if tail -c +$(( off + 1 )) "$STATE/cmd.log" | grep -q "^@@RDSCMD-END $id rc="; then done=1; break; fi
        pid_is "$(state_get qemu.pid)" qemu-system || break
        sleep 0.05
    done
    flock -u 9
    if [ "$done" != 1 ]; then
        log "no answer from the guest for request $id within $(( tmo + 15 ))s"
        return 124
    fi
    local body rc
    body="$(tail -c +$(( off + 1 )) "$STATE/cmd.log" | awk -v id="$id" '
        $0 == "@@RDSCMD-BEGIN " id { on = 1; next }
        index($0, "@@RDSCMD-END " id " rc=") == 1 { exit }
        on { print }')"
    rc="$(tail -c +$(( off + 1 )) "$STATE/cmd.log" | grep -m1 "^@@RDSCMD-END $id rc=" | sed 's/.*rc=//')"
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
    [ -e "$STATE/ready" ] && pid_is "$(state_get qemu.pid)" qemu-system && { cat "$STATE/env"; return 0; }
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
