#!/bin/bash
# capture-pair.sh GEN OUT_DIR - kernel <-> kernel traffic of one kernel generation, recorded.
#
# Boots two guests with kernel GEN (6.1, 6.12 or 7.2; setup.sh prepares it) on the harness's bridge,
# g2 = 10.213.0.2 and g3 = 10.213.0.3, and records every packet to or from TCP port 16385 with tcpdump
# in the namespace while the agents:
#   1. first contact: g2 sends 16, 100 and 5 bytes from RDS port 4001 to g3:4000 (g3 verifies them);
#   2. the other way: g3 sends the same sizes from 4003 to g2:4002;
#   3. g2 pings g3 three times from an ephemeral RDS port (zero-length messages to port 0, answered from 0);
#   4. reset: g3 aborts every RDS/TCP socket it has (SOCK_DESTROY), then g2 sends 3 more messages
#      (sizes 1, 2, 3) from 4001 to g3:4000 over whatever reconnected.
# Writes OUT_DIR/kernel-pair-GEN.pcap and OUT_DIR/kernel-pair-GEN.log (the agents' output, the
# kernels' connection tables, counters and logs; the steps with their wall-clock times).
# Everything stays in the harness's private namespace; both guests are stopped at the end.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GEN="${1:?usage: capture-pair.sh GEN OUT_DIR}"
OUT_DIR="${2:?usage: capture-pair.sh GEN OUT_DIR}"
mkdir -p "$OUT_DIR"
OUT_DIR="$(cd "$OUT_DIR" && pwd)"
PCAP="$OUT_DIR/kernel-pair-$GEN.pcap"
LOG="$OUT_DIR/kernel-pair-$GEN.log"

export RDS4J_KERNEL="$GEN"
# A state directory of its own, so a capture never collides with a suite run of the same kernel.
export RDS4J_STATE_DIR="$HERE/target/state-pair-$GEN"
H="$HERE/harness.sh"
g2() { RDS4J_GUEST=1 "$H" "$@"; }
g3() { RDS4J_GUEST=2 "$H" "$@"; }
step() { echo "=== $(date -u +%T.%N | cut -c1-12) $*" | tee -a "$LOG" >&2; }

: > "$LOG"
"$HERE/setup.sh" >>"$LOG" 2>&1
TCPDUMP_PID=""
cleanup() {
    if [ -n "$TCPDUMP_PID" ]; then kill -INT "$TCPDUMP_PID" 2>/dev/null || true; wait "$TCPDUMP_PID" 2>/dev/null || true; fi
    "$H" down >>"$LOG" 2>&1 || true
}
trap cleanup EXIT
RDS4J_GUESTS=2 "$H" up >>"$LOG"
NS="$(sed -n 's/^NS=//p' "$RDS4J_STATE_DIR/env")"
rm -f "$PCAP"
ip netns exec "$NS" tcpdump -i rds4jbr0 -U -s 0 -w "$PCAP" tcp port 16385 2>>"$LOG" &
TCPDUMP_PID=$!
# tcpdump writes the file header once it listens; bounded wait for it.
for _ in $(seq 100); do [ -s "$PCAP" ] && break; sleep 0.05; done
[ -s "$PCAP" ] || { echo "capture-pair: tcpdump did not start" >&2; exit 1; }

step "1. g3 receives on 4000; g2 sends 16,100,5 B from 4001 (first contact)"
g3 guest-bg r1 rdsagent sizes-recv 10.213.0.3:4000 16,100,5 30 >>"$LOG"
g3 guest-expect r1 'recv-ready' 20 >>"$LOG"
g2 guest rdsagent sizes-send 10.213.0.2:4001 10.213.0.3:4000 16,100,5 30 >>"$LOG"
g3 guest-wait r1 40 >>"$LOG"

step "2. g2 receives on 4002; g3 sends 16,100,5 B from 4003"
g2 guest-bg r2 rdsagent sizes-recv 10.213.0.2:4002 16,100,5 30 >>"$LOG"
g2 guest-expect r2 'recv-ready' 20 >>"$LOG"
g3 guest rdsagent sizes-send 10.213.0.3:4003 10.213.0.2:4002 16,100,5 30 >>"$LOG"
g2 guest-wait r2 40 >>"$LOG"

step "3. g2 pings g3 3 times (from an ephemeral RDS port)"
g2 guest rdsagent ping 10.213.0.3 3 10.213.0.2 >>"$LOG"

step "conns before the reset"
{ g2 guest rdsagent conns; g3 guest rdsagent conns; } >>"$LOG"

step "4. g3 aborts its RDS/TCP sockets; g2 sends 1,2,3 B from 4001 to g3:4000"
g3 guest-bg r3 rdsagent sizes-recv 10.213.0.3:4000 1,2,3 30 >>"$LOG"
g3 guest-expect r3 'recv-ready' 20 >>"$LOG"
g3 guest rdsagent kill-tcp >>"$LOG"
g2 guest rdsagent sizes-send 10.213.0.2:4001 10.213.0.3:4000 1,2,3 30 >>"$LOG"
g3 guest-wait r3 40 >>"$LOG"

step "conns, counters and kernel logs at the end"
{
    echo "--- g2"; g2 guest 'rdsagent conns; rdsagent counters | grep -v "=0$"; dmesg | grep -i rds'
    echo "--- g3"; g3 guest 'rdsagent conns; rdsagent counters | grep -v "=0$"; dmesg | grep -i rds'
} >>"$LOG" 2>&1 || true
step "done"
kill -INT "$TCPDUMP_PID"; wait "$TCPDUMP_PID" 2>/dev/null || true; TCPDUMP_PID=""
echo "capture-pair: $PCAP ($(stat -c %s "$PCAP") bytes), log $LOG" >&2
