#!/bin/bash
# describe-capture.sh PCAP - the RDS/TCP content of a capture as Markdown: its TCP connections on port 16385
# (who opened each, when, with which source port and that port modulo 8), then one table per direction listing
# every RDS message's 48-byte header, decoded by tshark with the project's dissector (rds-wireshark's rds.lua).
# Used for the descriptions beside the golden captures (rds-core/src/test/resources/golden/kernel-pair-*.md);
# the golden tests decode the same captures with rds4j's codec and compare with these tables.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
PCAP="${1:?usage: describe-capture.sh PCAP}"
LUA="$HERE/../../rds-wireshark/src/main/lua/rds.lua"
command -v tshark >/dev/null || { echo "describe-capture: needs tshark" >&2; exit 1; }
ts() { tshark -X "lua_script:$LUA" -r "$PCAP" "$@" 2>/dev/null; }

echo "## TCP connections (port 16385)"
echo
echo "| opened at t(s) | by | connection | source port mod 8 | ended by |"
echo "|---|---|---|---|---|"
# SYNs (not SYN-ACKs) open a connection; the first FIN or RST of either side ends it.
ts -Y 'tcp.flags.syn == 1 && tcp.flags.ack == 0' -T fields -E separator=' ' \
    -e frame.time_relative -e ip.src -e tcp.srcport -e ip.dst -e tcp.dstport -e tcp.stream |
while read -r t src sp dst dp stream; do
    end="$(ts -Y "tcp.stream == $stream && (tcp.flags.fin == 1 || tcp.flags.reset == 1)" -T fields -E separator=' ' \
        -e ip.src -e tcp.flags.fin -e tcp.flags.reset -e frame.time_relative | head -1 |
        awk '{ printf "%s from %s at %.3f", ($2 == "1" || $2 == "True") ? "FIN" : "RST", $1, $4 }')"
    printf '| %.3f | %s | %s:%s -> %s:%s | %d | %s |\n' "$t" "$src" "$src" "$sp" "$dst" "$dp" $(( sp % 8 )) "${end:-open at the end}"
done
echo

# Every message: one line per RDS header (a packet can carry several; tshark joins their fields with '|').
ts -Y rds -T fields -E separator=$'\t' -E aggregator='|' \
    -e frame.number -e frame.time_relative -e ip.src -e tcp.srcport -e ip.dst -e tcp.dstport \
    -e rds.seq -e rds.ack -e rds.len -e rds.sport -e rds.dport -e rds.flags -e rds.credit -e rds.padding \
    -e rds.csum -e rds.exthdr |
awk -F'\t' '
function num(s,    i, v, c) {   # a decimal or 0x-prefixed number (plain POSIX awk: no strtonum)
    if (substr(s, 1, 2) != "0x") return s + 0
    v = 0
    for (i = 3; i <= length(s); i++) { c = index("0123456789abcdef", tolower(substr(s, i, 1))) - 1; v = v * 16 + c }
    return v
}
function kind(len, sp, dp, fl) {
    if (num(fl) % 2 == 1) return "CONG_MAP"
    if (dp == 0) return sp == 1 ? "PROBE_PING" : "PING"
    if (sp == 0) return dp == 1 ? "PROBE_PONG" : "PONG"
    return "DATA"
}
function exts(hex,    pos, t, n, out, v) {
    # [type][payload] entries, sizes fixed by type; a 0 type or the end of the 16 bytes ends the list
    size[1] = 4; size[2] = 4; size[3] = 8; size[4] = 8; size[5] = 2; size[6] = 4; size[8] = 1
    name[1] = "VERSION"; name[2] = "RDMA"; name[3] = "RDMA_DEST"; name[4] = "RDMA_BYTES"; name[5] = "NPATHS"
    name[6] = "GEN_NUM"; name[8] = "SPORT_IDX"
    out = ""; pos = 0
    while (pos < 16) {
        t = num("0x" substr(hex, 2 * pos + 1, 2)); pos++
        if (t == 0 || t >= 16) break
        n = (t in size) ? size[t] : 0
        if (pos + n > 16) break
        v = substr(hex, 2 * pos + 1, 2 * n)
        out = out (out == "" ? "" : " ") ((t in name) ? name[t] : "type" t) (n ? "=0x" v : "")
        pos += n
    }
    return out == "" ? "none" : out
}
{
    dir = $3 ":" $4 " -> " $5 ":" $6
    n = split($7, seq, "|"); split($8, ack, "|"); split($9, len, "|"); split($10, sp, "|"); split($11, dp, "|")
    split($12, fl, "|"); split($13, cr, "|"); split($14, pad, "|"); split($15, cs, "|"); split($16, ex, "|")
    for (i = 1; i <= n; i++) {
        if (!(dir in count)) { order[++dirs] = dir }
        k = ++count[dir]
        fl[i] = sprintf("0x%02x", num(fl[i]))
        cs[i] = sprintf("0x%04x", num(cs[i]))
        row[dir, k] = sprintf("| %d | %d | %.4f | %s | %s | %s | %s | %s | %s | %s | %s | %s | `%s` | %s; ext: %s |",
            k - 1, $1, $2, seq[i], ack[i], len[i], sp[i], dp[i], fl[i], cr[i], pad[i], cs[i], ex[i],
            kind(len[i], sp[i], dp[i], fl[i]), exts(ex[i]))
    }
}
END {
    for (d = 1; d <= dirs; d++) {
        dir = order[d]
        printf "## Stream %s\n\n%d messages\n\n", dir, count[dir]
        print "| # | frame | t(s) | h_sequence | h_ack | h_len | h_sport | h_dport | h_flags | h_credit | h_padding | h_csum | h_exthdr | kind; extensions |"
        print "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"
        for (k = 1; k <= count[dir]; k++) print row[dir, k]
        print ""
    }
}'
