#!/bin/sh
# Command server of the rds4j guest, reading the host's requests from a serial
# port (the host side is a pair of FIFOs made by qemu's "pipe" chardev).
#
# Request  (one line):  ID TIMEOUT_S SHELL-TEXT
# Response:             @@RDSCMD-BEGIN ID
#                       ...combined stdout+stderr of `sh -c SHELL-TEXT`...
#                       @@RDSCMD-END ID rc=STATUS
# Requests are handled one at a time; the host serialises them with a lock.
TTY="${1:-/dev/ttyS1}"
# Raw: no echo of the request, no \n -> \r\n translation, no line-length limit.
stty -F "$TTY" raw -echo 2>/dev/null
exec 3<>"$TTY"
echo "@@RDSCMD-HELLO" >&3
while IFS= read -r line <&3; do
    id="${line%% *}"
    rest="${line#* }"
    tmo="${rest%% *}"
    cmd="${rest#* }"
    case "$tmo" in ''|*[!0-9]*) tmo=60 ;; esac
    [ -n "$id" ] || continue
    echo "RDSCMD $id start: $cmd" > /dev/console
    # KILL so a hung agent cannot wedge the channel; the host waits a bit longer.
    timeout -s KILL "$tmo" sh -c "$cmd" </dev/null >/tmp/cmd.out 2>&1
    rc=$?
    {
        echo "@@RDSCMD-BEGIN $id"
        cat /tmp/cmd.out
        # Keep the END marker on a line of its own.
        if [ -s /tmp/cmd.out ] && [ "$(tail -c 1 /tmp/cmd.out | wc -l)" -eq 0 ]; then echo; fi
        echo "@@RDSCMD-END $id rc=$rc"
    } >&3
    echo "RDSCMD $id rc=$rc" > /dev/console
done
