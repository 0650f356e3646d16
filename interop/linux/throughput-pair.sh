#!/bin/bash
# throughput-pair.sh GEN [RUNS] - kernel -> kernel RDS/TCP throughput, for comparison with scenario 11.
#
# Boots two guests with kernel GEN (6.1, 6.12 or 7.2; setup.sh prepares it) on the harness's bridge,
# g2 = 10.213.0.2 and g3 = 10.213.0.3, and measures what scenario 11 of the kernel suite measures
# between rds4j and one guest, here between the two kernels: g2's rdsagent sends 20,000 x 64 B and
# then 4,000 x 8 KiB from a socket with the default send buffer to g3's receiver, which checks every
# message and times its first to its last. RUNS (default 1) repeats both sizes. Prints one line per
# size and run, in scenario 11's units; the agents' output and both kernels' counters at the end go to
# target/throughput-pair-GEN.log. The guests run under the same emulator (and accelerator) as
# the suite's one guest, so the figures are those of the same setup with a kernel at both ends.
# Everything stays in the harness's private namespace; both guests are stopped at the end.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GEN="${1:?usage: throughput-pair.sh GEN [RUNS]}"
RUNS="${2:-1}"
[[ "$RUNS" =~ ^[1-9][0-9]?$ ]] || { echo "throughput-pair: RUNS must be 1 to 99" >&2; exit 2; }

export RDS4J_KERNEL="$GEN"
# A state directory of its own, so this never collides with a suite run of the same kernel.
export RDS4J_STATE_DIR="$HERE/target/state-throughput-$GEN"
H="$HERE/harness.sh"
LOG="$HERE/target/throughput-pair-$GEN.log"
mkdir -p "$HERE/target"
g2() { RDS4J_GUEST=1 "$H" "$@"; }
g3() { RDS4J_GUEST=2 "$H" "$@"; }

: > "$LOG"
"$HERE/setup.sh" >>"$LOG" 2>&1
trap '"$H" down >>"$LOG" 2>&1 || true' EXIT
RDS4J_GUESTS=2 "$H" up >>"$LOG"

port=4960
for run in $(seq "$RUNS"); do
    for size in 64 8192; do
        count=20000
        [ "$size" = 64 ] || count=4000
        g3 guest-bg rx rdsagent recv "10.213.0.3:$port" "$count" 120 >>"$LOG"
        g3 guest-expect rx 'RECV ready' 30 >>"$LOG"
        g2 guest rdsagent send "10.213.0.2:$((port + 1))" "10.213.0.3:$port" "$count" "$size" 120 >>"$LOG"
        out="$(g3 guest-wait rx 150)"
        echo "$out" >>"$LOG"
        grep -q "RECV done ok=$count bad=0" <<<"$out" \
            || { echo "throughput-pair: run $run, $size B: the receiver did not get all $count intact" >&2; exit 1; }
        us="$(sed -n 's/.* us=\([0-9]*\).*/\1/p' <<<"$out" | head -1)"
        [ -n "$us" ] && [ "$us" -gt 0 ] || { echo "throughput-pair: no time in: $out" >&2; exit 1; }
        awk -v gen="$GEN" -v run="$run" -v size="$size" -v n="$count" -v us="$us" 'BEGIN {
            printf "throughput-pair [%s] run %d: %d B x %d: kernel->kernel %d msgs/s (%.1f MB/s)\n",
                gen, run, size, n, n * 1000000 / us, n * size / us }'
        port=$((port + 10))
    done
done
{
    echo "--- g2 (sender) counters"; g2 guest 'rdsagent counters | grep -v "=0$"'
    echo "--- g3 (receiver) counters"; g3 guest 'rdsagent counters | grep -v "=0$"'
} >>"$LOG" 2>&1 || true
