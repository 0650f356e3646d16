-- rds.lua: a Wireshark dissector for RDS (Reliable Datagram Sockets) over TCP, as the Linux kernel and rds4j
-- speak it on TCP port 16385. Part of rds4j; see docs/wireshark.md.
--
-- Install: copy this file to ~/.local/lib/wireshark/plugins/ (Wireshark 4.x), or run
--   tshark -X lua_script:rds.lua -r capture.pcap
-- Display filter: rds. Preference: Edit > Preferences > Protocols > RDS > TCP ports (default 16385).
--
-- The byte stream is a sequence of messages, each a 48-byte big-endian header followed by h_len payload bytes,
-- reassembled across TCP segments with Wireshark's TCP PDU reassembly.

local rds = Proto("rds", "Reliable Datagram Sockets over TCP")

local HEADER_SIZE = 48
local EXTHDR_OFFSET = 32
local EXTHDR_SIZE = 16
local MAX_MESSAGE = 1048576          -- senders refuse larger payloads (EMSGSIZE)
local CONG_MAP_BYTES = 8192          -- one bit per port, 65536 ports
local DEFAULT_PORTS = "16385"

local band = (bit32 and bit32.band) or bit.band
local lshift = (bit32 and bit32.lshift) or bit.lshift

-- h_flags
local FLAG_CONG_BITMAP = 0x01
local FLAG_ACK_REQUIRED = 0x02
local FLAG_RETRANSMITTED = 0x04
local FLAG_EXTHDR_EXTENSION = 0x20
local KNOWN_FLAGS = 0x27
local FLAG_NAMES = {
    { FLAG_CONG_BITMAP, "CONG_BITMAP" },
    { FLAG_ACK_REQUIRED, "ACK_REQUIRED" },
    { FLAG_RETRANSMITTED, "RETRANSMITTED" },
    { FLAG_EXTHDR_EXTENSION, "EXTHDR_EXTENSION" },
}

-- extension header types and the payload size each implies (no length byte on the wire); a type below 16 with
-- no known size counts as zero-length, a type of 0 or of 16 or more ends the list
local EXT = { NONE = 0, VERSION = 1, RDMA = 2, RDMA_DEST = 3, RDMA_BYTES = 4, NPATHS = 5, GEN_NUM = 6,
              SPORT_IDX = 8 }
local EXT_MAX = 16
local EXT_SIZE = { [1] = 4, [2] = 4, [3] = 8, [4] = 8, [5] = 2, [6] = 4, [8] = 1 }
local EXT_NAMES = { [0] = "NONE", [1] = "VERSION", [2] = "RDMA", [3] = "RDMA_DEST", [4] = "RDMA_BYTES",
                    [5] = "NPATHS", [6] = "GEN_NUM", [8] = "SPORT_IDX" }

-- what a message is, by the receiver's rules: a congestion map by the exact flag test, then by ports
local KIND_NAMES = {
    CONG_MAP = "Congestion map",
    PROBE_PING = "Probe ping",
    PROBE_PONG = "Probe pong",
    PING = "Ping",
    PONG = "Pong",
    ACK_ONLY = "Ack-only",
    DATA = "Data",
}

local f = rds.fields
f.seq = ProtoField.uint64("rds.seq", "Sequence (h_sequence)", base.DEC)
f.ack = ProtoField.uint64("rds.ack", "Acknowledgement (h_ack)", base.DEC)
f.len = ProtoField.uint32("rds.len", "Payload length (h_len)", base.DEC)
f.sport = ProtoField.uint16("rds.sport", "Source port (h_sport)", base.DEC)
f.dport = ProtoField.uint16("rds.dport", "Destination port (h_dport)", base.DEC)
f.port = ProtoField.uint16("rds.port", "Source or destination port", base.DEC)
f.flags = ProtoField.uint8("rds.flags", "Flags (h_flags)", base.HEX)
f.flag_cong = ProtoField.bool("rds.flags.cong_bitmap", "CONG_BITMAP", 8, nil, FLAG_CONG_BITMAP)
f.flag_ackreq = ProtoField.bool("rds.flags.ack_required", "ACK_REQUIRED", 8, nil, FLAG_ACK_REQUIRED)
f.flag_retrans = ProtoField.bool("rds.flags.retransmitted", "RETRANSMITTED", 8, nil, FLAG_RETRANSMITTED)
f.flag_extext = ProtoField.bool("rds.flags.exthdr_extension", "EXTHDR_EXTENSION", 8, nil, FLAG_EXTHDR_EXTENSION)
f.flag_unknown = ProtoField.uint8("rds.flags.unknown", "Unknown flag bits", base.HEX, nil, 0xFF - KNOWN_FLAGS)
f.flag_names = ProtoField.string("rds.flags.names", "Flag names")
f.credit = ProtoField.uint8("rds.credit", "Credit (h_credit)", base.DEC)
f.padding = ProtoField.uint32("rds.padding", "Padding (h_padding)", base.HEX)
f.csum = ProtoField.uint16("rds.csum", "Checksum (h_csum)", base.HEX)
f.exthdr = ProtoField.bytes("rds.exthdr", "Extension area (h_exthdr)")
f.exthdrs = ProtoField.string("rds.exthdrs", "Extension headers",
        base.NONE, "Each entry as type:payload in hex, in order; none if the area holds no entry")
f.ext = ProtoField.bytes("rds.ext", "Extension header")
f.ext_type = ProtoField.uint8("rds.ext.type", "Type", base.DEC, EXT_NAMES)
f.ext_npaths = ProtoField.uint16("rds.ext.npaths", "NPATHS (paths the sender supports)", base.DEC)
f.ext_gen_num = ProtoField.uint32("rds.ext.gen_num", "GEN_NUM (sender's generation)", base.HEX)
f.ext_sport_idx = ProtoField.uint8("rds.ext.sport_idx", "SPORT_IDX (path index in the TCP source port)", base.HEX)
f.ext_version = ProtoField.uint32("rds.ext.version", "VERSION", base.HEX)
f.ext_rdma_rkey = ProtoField.uint32("rds.ext.rdma.rkey", "R_Key", base.HEX)
f.ext_rdma_offset = ProtoField.uint32("rds.ext.rdma.offset", "Offset", base.HEX)
f.ext_rdma_bytes = ProtoField.uint32("rds.ext.rdma_bytes.count", "RDMA bytes", base.DEC)
f.ext_rdma_op = ProtoField.uint8("rds.ext.rdma_bytes.op", "RDMA operation", base.HEX,
        { [1] = "write", [2] = "read" })
f.ext_rdma_pad = ProtoField.bytes("rds.ext.rdma_bytes.pad", "Pad")
f.kind = ProtoField.string("rds.kind", "Message kind")
f.payload = ProtoField.bytes("rds.payload", "Payload")
f.cong_ports = ProtoField.string("rds.cong.ports", "Congested ports")
f.cong_count = ProtoField.uint32("rds.cong.count", "Number of congested ports", base.DEC)
f.cong_port = ProtoField.uint16("rds.cong.port", "Congested port", base.DEC)

local e = {
    len_too_large = ProtoExpert.new("rds.len.too_large", "h_len above the 1 MiB limit of RDS senders",
            expert.group.PROTOCOL, expert.severity.WARN),
    unknown_flags = ProtoExpert.new("rds.flags.unknown.expert", "Flag bits RDS does not define",
            expert.group.PROTOCOL, expert.severity.WARN),
    cong_len = ProtoExpert.new("rds.cong.bad_len",
            "Congestion map whose length is not 8192 bytes (ignored by receivers)",
            expert.group.PROTOCOL, expert.severity.WARN),
    retransmitted = ProtoExpert.new("rds.retransmitted", "Message resent after its path was reset",
            expert.group.SEQUENCE, expert.severity.NOTE),
    ext_unknown = ProtoExpert.new("rds.ext.unknown", "Extension type of unknown size (read as zero-length)",
            expert.group.PROTOCOL, expert.severity.NOTE),
}
rds.experts = { e.len_too_large, e.unknown_flags, e.cong_len, e.retransmitted, e.ext_unknown }

rds.prefs.ports = Pref.range("TCP ports", DEFAULT_PORTS, "TCP ports carrying RDS (default 16385)", 65535)
rds.prefs.reassemble_oversized = Pref.bool("Reassemble messages above 1 MiB", true,
        "Wait for all h_len bytes of a message announcing more than 1 MiB, as the kernel does; off: show its header"
        .. " at once and do not take its payload (the stream cannot be framed after it)")
rds.prefs.max_listed = Pref.uint("Congested ports listed", 64,
        "How many congested ports a congestion map lists in the Info column and the tree")

local function flag_names(flags)
    local names = {}
    for _, fl in ipairs(FLAG_NAMES) do
        if band(flags, fl[1]) ~= 0 then
            names[#names + 1] = fl[2]
        end
    end
    local unknown = band(flags, 0xFF - KNOWN_FLAGS)
    if unknown ~= 0 then
        names[#names + 1] = string.format("0x%02x", unknown)
    end
    return table.concat(names, "|")
end

local function kind_of(flags, sport, dport)
    if flags == FLAG_CONG_BITMAP then
        return "CONG_MAP"
    end
    if sport == 0 and dport == 0 then
        return "ACK_ONLY"         -- rds4j's acknowledgement to an rds4j peer; a kernel ignores it
    end
    if dport == 0 then
        return sport == 1 and "PROBE_PING" or "PING"
    end
    if sport == 0 then
        return dport == 1 and "PROBE_PONG" or "PONG"
    end
    return "DATA"
end

-- Extension area: entries added to the tree; returns the summary string and a short text for the Info column.
local function dissect_exthdrs(area, tree)
    local summary, info = {}, {}
    local pos = 0
    while pos < EXTHDR_SIZE do
        local t = area(pos, 1):uint()
        if t == EXT.NONE or t >= EXT_MAX then
            break
        end
        local size = EXT_SIZE[t] or 0
        if pos + 1 + size > EXTHDR_SIZE then
            break
        end
        local name = EXT_NAMES[t] or ("TYPE" .. t)
        local item = tree:add(f.ext, area(pos, 1 + size))
        item:set_text(name)
        item:add(f.ext_type, area(pos, 1))
        local p = size > 0 and area(pos + 1, size) or nil
        local hex = p and tostring(p:bytes()):lower() or ""
        if t == EXT.NPATHS then
            item:add(f.ext_npaths, p)
            item:append_text(" = " .. p:uint())
            info[#info + 1] = "NPATHS=" .. p:uint()
        elseif t == EXT.GEN_NUM then
            item:add(f.ext_gen_num, p)
            item:append_text(string.format(" = 0x%08x", p:uint()))
            info[#info + 1] = string.format("GEN_NUM=0x%08x", p:uint())
        elseif t == EXT.SPORT_IDX then
            item:add(f.ext_sport_idx, p)
            info[#info + 1] = "SPORT_IDX"
        elseif t == EXT.VERSION then
            item:add(f.ext_version, p)
            info[#info + 1] = "VERSION=0x" .. hex
        elseif t == EXT.RDMA then
            item:add(f.ext_rdma_rkey, p)
            info[#info + 1] = "RDMA"
        elseif t == EXT.RDMA_DEST then
            item:add(f.ext_rdma_rkey, p(0, 4))
            item:add(f.ext_rdma_offset, p(4, 4))
            info[#info + 1] = "RDMA_DEST"
        elseif t == EXT.RDMA_BYTES then
            item:add(f.ext_rdma_bytes, p(0, 4))
            item:add(f.ext_rdma_op, p(4, 1))
            item:add(f.ext_rdma_pad, p(5, 3))
            info[#info + 1] = "RDMA_BYTES=" .. p(0, 4):uint()
        else
            item:add_proto_expert_info(e.ext_unknown)
            info[#info + 1] = name
        end
        summary[#summary + 1] = t .. ":" .. hex
        pos = pos + 1 + size
    end
    if #summary == 0 then
        return "none", nil
    end
    return table.concat(summary, " "), table.concat(info, " ")
end

-- Congestion map: the congested ports, port p being bit p % 8 (least significant first) of byte p / 8.
local function congested_ports(tvb, offset, len)
    local raw = tvb:raw(offset, len)
    local ports = {}
    for i = 1, #raw do
        local b = raw:byte(i)
        if b ~= 0 then
            for bit = 0, 7 do
                if band(b, lshift(1, bit)) ~= 0 then
                    ports[#ports + 1] = (i - 1) * 8 + bit
                end
            end
        end
    end
    return ports
end

local function ports_text(ports, limit)
    if #ports == 0 then
        return "none"
    end
    local shown = {}
    for i = 1, math.min(#ports, limit) do
        shown[i] = tostring(ports[i])
    end
    local s = table.concat(shown, ",")
    if #ports > limit then
        s = s .. string.format(",... (%d in all)", #ports)
    end
    return s
end

-- The length of the message at offset, header included. Like the kernel's receiver, the dissector reads as many
-- payload bytes as h_len says, however many; the preference below shows an oversized header at once instead.
local function message_len(tvb, pinfo, offset)
    local len = tvb(offset + 16, 4):uint()
    if len > MAX_MESSAGE and not rds.prefs.reassemble_oversized then
        return HEADER_SIZE
    end
    return math.min(HEADER_SIZE + len, 0x7FFFFFFF)   -- Wireshark counts PDU lengths in signed 32 bits
end

local function dissect_message(tvb, pinfo, tree)
    local seq = tvb(0, 8):uint64()
    local ack = tvb(8, 8):uint64()
    local len = tvb(16, 4):uint()
    local sport = tvb(20, 2):uint()
    local dport = tvb(22, 2):uint()
    local flags = tvb(24, 1):uint()
    local kind = kind_of(flags, sport, dport)

    local have = tvb:len() - HEADER_SIZE
    local root = tree:add(rds, tvb(0, HEADER_SIZE + math.min(len, have)))
    root:add(f.seq, tvb(0, 8))
    root:add(f.ack, tvb(8, 8))
    local len_item = root:add(f.len, tvb(16, 4))
    if len > MAX_MESSAGE then
        len_item:add_proto_expert_info(e.len_too_large,
                string.format("h_len %d is above the 1 MiB (%d) limit of RDS senders", len, MAX_MESSAGE))
    end
    local shown = math.min(len, have)   -- less than h_len only for an oversized message not reassembled
    root:add(f.sport, tvb(20, 2))
    root:add(f.dport, tvb(22, 2))
    local hidden = root:add(f.port, tvb(20, 2))
    hidden:set_hidden()
    hidden = root:add(f.port, tvb(22, 2))
    hidden:set_hidden()

    local names = flag_names(flags)
    local flags_item = root:add(f.flags, tvb(24, 1))
    if names ~= "" then
        flags_item:append_text(" (" .. names .. ")")
    end
    flags_item:add(f.flag_cong, tvb(24, 1))
    flags_item:add(f.flag_ackreq, tvb(24, 1))
    flags_item:add(f.flag_retrans, tvb(24, 1))
    flags_item:add(f.flag_extext, tvb(24, 1))
    flags_item:add(f.flag_unknown, tvb(24, 1))
    local names_item = flags_item:add(f.flag_names, tvb(24, 1), names ~= "" and names or "none")
    names_item:set_generated()
    if band(flags, 0xFF - KNOWN_FLAGS) ~= 0 then
        flags_item:add_proto_expert_info(e.unknown_flags,
                string.format("Unknown flag bits 0x%02x", band(flags, 0xFF - KNOWN_FLAGS)))
    end
    if band(flags, FLAG_RETRANSMITTED) ~= 0 then
        flags_item:add_proto_expert_info(e.retransmitted)
    end

    root:add(f.credit, tvb(25, 1))
    root:add(f.padding, tvb(26, 4))
    root:add(f.csum, tvb(30, 2))
    local area = tvb(EXTHDR_OFFSET, EXTHDR_SIZE)
    local ext_item = root:add(f.exthdr, area)
    local summary, ext_info = dissect_exthdrs(area, ext_item)
    local summary_item = root:add(f.exthdrs, area, summary)
    summary_item:set_generated()
    local kind_item = root:add(f.kind, tvb(20, 5), kind)
    kind_item:set_generated()

    local info = KIND_NAMES[kind]
    if kind == "CONG_MAP" then
        if len == CONG_MAP_BYTES then
            local ports = congested_ports(tvb, HEADER_SIZE, len)
            local text = ports_text(ports, rds.prefs.max_listed)
            local map = root:add(f.cong_ports, tvb(HEADER_SIZE, len), text)
            map:add(f.cong_count, tvb(HEADER_SIZE, len), #ports):set_generated()
            for i = 1, math.min(#ports, rds.prefs.max_listed) do
                local p = ports[i]
                map:add(f.cong_port, tvb(HEADER_SIZE + math.floor(p / 8), 1), p):set_generated()
            end
            info = info .. ": congested " .. text
        else
            root:add_proto_expert_info(e.cong_len)
            if shown > 0 then
                root:add(f.payload, tvb(HEADER_SIZE, shown))
            end
            info = info .. string.format(" of %d bytes", len)
        end
    else
        if shown > 0 then
            root:add(f.payload, tvb(HEADER_SIZE, shown))
        end
        if kind == "ACK_ONLY" then
            info = info .. " ack=" .. tostring(ack)
        else
            info = info .. string.format(" %d \226\134\146 %d seq=%s len=%d", sport, dport, tostring(seq), len)
            if ack ~= UInt64(0) then
                info = info .. " ack=" .. tostring(ack)
            end
        end
    end
    if names ~= "" and kind ~= "CONG_MAP" then
        info = info .. " [" .. names .. "]"
    end
    if ext_info then
        info = info .. " {" .. ext_info .. "}"
    end
    root:append_text(string.format(", %s, Seq: %s, Len: %d", KIND_NAMES[kind], tostring(seq), len))

    pinfo.cols.protocol = "RDS"
    -- the first message of a packet replaces the TCP text in the Info column, later ones append; the mark lives
    -- in the packet's private table, which is fresh for every dissection of a packet
    if pinfo.private.rds_info == nil then
        pinfo.cols.info:set(info)
        pinfo.private.rds_info = "1"
    else
        pinfo.cols.info:append(", " .. info)
    end
    return HEADER_SIZE + shown
end

function rds.dissector(tvb, pinfo, tree)
    dissect_tcp_pdus(tvb, tree, HEADER_SIZE, message_len, dissect_message, true)
    return tvb:len()
end

local tcp_port_table = DissectorTable.get("tcp.port")
local registered_ports = DEFAULT_PORTS
tcp_port_table:add(registered_ports, rds)

function rds.prefs_changed()
    if rds.prefs.ports ~= registered_ports then
        tcp_port_table:remove(registered_ports, rds)
        registered_ports = rds.prefs.ports
        tcp_port_table:add(registered_ports, rds)
    end
end
