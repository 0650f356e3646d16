#!/bin/bash
# stress-pair.sh GEN [RUNS] [ABORT] - the kernel world's rds-stress between two kernels, for comparison with the
# suite's rds-stress scenarios (14a to 14d) between a kernel and ./rds4j rds-stress.
#
# Boots two guests with kernel GEN (6.1, 6.12 or 7.2; setup.sh prepares it, with the kernel world's rds-tools,
# oracle/rds-tools 2.0.7: see README.md) on the harness's bridge, g2 = 10.213.0.2 and g3 = 10.213.0.3, and runs
# rds-stress passive on g3 and active on g2 with the suite's options (-v -t 2 -d 8 -T 10). ABORT=abort (default
# none) aborts every RDS/TCP connection of g3 (rdsagent kill-tcp, as the suite does) 8 s into the run, that is about
# 2 s into its measured seconds. RUNS (default 1) repeats it. Prints, per run, both sides' closing average lines and
# whether both exited 0; the whole output of both goes to target/stress-pair-GEN.log. Everything stays in the
# harness's private namespace; both guests are stopped at the end.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
GEN="${1:?usage: stress-pair.sh GEN [RUNS] [abort]}"
RUNS="${2:-1}"
ABORT="${3:-none}"
[[ "$RUNS" =~ ^[1-9][0-9]?$ ]] || { echo "stress-pair: RUNS must be 1 to 99" >&2; exit 2; }
case "$ABORT" in none|abort) ;; *) echo "stress-pair: the third argument is 'abort' or nothing" >&2; exit 2 ;; esac

export RDS4J_KERNEL="$GEN"
# A state directory of its own, so this never collides with a suite run of the same kernel.
export RDS4J_STATE_DIR="$HERE/target/state-stress-$GEN"
H="$HERE/harness.sh"
LOG="$HERE/target/stress-pair-$GEN.log"
mkdir -p "$HERE/target"
g2() { RDS4J_GUEST=1 "$H" "$@"; }
g3() { RDS4J_GUEST=2 "$H" "$@"; }

: > "$LOG"
CI=true "$HERE/setup.sh" >>"$LOG" 2>&1 || { tail -3 "$LOG" >&2; exit 1; }
trap '"$H" down >>"$LOG" 2>&1 || true' EXIT
RDS4J_GUESTS=2 "$H" up >>"$LOG"

failed=0
label=
[ "$ABORT" = none ] || label=" (abort)"
port=4000
for run in $(seq "$RUNS"); do
    g3 guest-bg "p$run" rds-stress -r 10.213.0.3 -p "$port" >>"$LOG"
    g3 guest "i=0; until netstat -ltn | grep -q ':$port '; do i=\$((i+1)); [ \$i -le 300 ] || exit 1; sleep 0.1; done" \
        >>"$LOG" || { echo "stress-pair: g3's rds-stress never listened" >&2; exit 1; }
    g2 guest-bg "a$run" rds-stress -r 10.213.0.2 -s 10.213.0.3 -p "$port" -v -t 2 -d 8 -T 10 >>"$LOG"
    if [ "$ABORT" = abort ]; then
        # 2 s to start the tasks, 4 s of burn-in, then 2 s of measured traffic
        g3 guest "sleep 8; rdsagent kill-tcp | tail -1" >>"$LOG" 2>&1
    fi
    set +e
    act="$(g2 guest-wait "a$run" 120)"; arc=$?
    pas="$(g3 guest-wait "p$run" 60)"; prc=$?
    set -e
    { echo "--- run $run active (g2, exit $arc)"; echo "$act"; echo "--- run $run passive (g3, exit $prc)"; echo "$pas"; } >>"$LOG"
    [ "$arc" = 0 ] && [ "$prc" = 0 ] || failed=1
    echo "stress-pair [$GEN] run $run$label: active exit $arc: $(grep '(average)' <<<"$act" | tr -s ' ')"
    echo "stress-pair [$GEN] run $run$label: passive exit $prc: $(grep '(average)' <<<"$pas" | tr -s ' ')"
    port=$((port + 10))
done
exit "$failed"
