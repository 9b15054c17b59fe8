-- Wireshark/tshark dissector for bcfab's PortFC, BFC and congestion
-- isolation (ICI) signals: EtherType 0x88B5, layout in docs/WIRE.md; and
-- for the INT shim HPCC's RoCEv2 frames carry (bcfab.int, a
-- postdissector: Wireshark's InfiniBand dissector shows the shim as data).
--
--   tshark -X lua_script:scripts/bcfab.lua -r capture.pcap
--   wireshark -X lua_script:scripts/bcfab.lua capture.pcap
--
-- or copy it into ~/.local/lib/wireshark/plugins/. Display filters:
-- bcfab, bcfab.scheme == 1, bcfab.portfc.class == 2, bcfab.flags.relayed,
-- bcfab.bfc.upstreamq == 4, bcfab.ici.src == 198.18.0.1, bcfab.ici.hops > 0,
-- bcfab.int, bcfab.int.hops == 3, bcfab.int.qlen > 0, ...

local ETHERTYPE = 0x88B5
local HEADER_LEN = 24 -- after the Ethernet header

local SCHEME_PORTFC, SCHEME_BFC, SCHEME_PROBE, SCHEME_ICI = 1, 2, 3, 4
local TYPE_PAUSE, TYPE_RESUME, TYPE_STATE = 1, 2, 3
local TYPE_PROBE, TYPE_ECHO = 1, 2
local TYPE_ISOLATE = 1
local FLAG_RELAYED = 0x01

local schemes = { [SCHEME_PORTFC] = "PortFC", [SCHEME_BFC] = "BFC", [SCHEME_PROBE] = "Probe", [SCHEME_ICI] = "ICI" }
local types = { [TYPE_PAUSE] = "Pause", [TYPE_RESUME] = "Resume", [TYPE_STATE] = "State" }
local probe_types = { [TYPE_PROBE] = "Probe", [TYPE_ECHO] = "Echo" }
local ici_types = { [TYPE_ISOLATE] = "Isolate" }
local classes = { [1] = "A", [2] = "B" }

local p = Proto("bcfab", "bcfab flow-control signal")

local f = p.fields
f.version = ProtoField.uint8("bcfab.version", "Version", base.DEC)
f.scheme = ProtoField.uint8("bcfab.scheme", "Scheme", base.DEC, schemes)
f.type = ProtoField.uint8("bcfab.type", "Type", base.DEC, types)
f.flags = ProtoField.uint8("bcfab.flags", "Flags", base.HEX)
f.relayed = ProtoField.bool("bcfab.flags.relayed", "Relayed", 8, nil, FLAG_RELAYED)
f.flags_unknown = ProtoField.uint8("bcfab.flags.unknown", "Unknown flags", base.HEX, nil, 0xFE)
f.seq = ProtoField.uint32("bcfab.seq", "Sequence number", base.DEC)
f.class = ProtoField.uint8("bcfab.portfc.class", "Class", base.DEC, classes)
f.port = ProtoField.uint8("bcfab.portfc.port", "Port", base.DEC)
f.origin_level = ProtoField.uint8("bcfab.portfc.origin_level", "Origin level", base.DEC)
f.origin_index = ProtoField.uint32("bcfab.portfc.origin_index", "Origin index", base.DEC)
f.origin = ProtoField.string("bcfab.portfc.origin", "Origin switch")
f.upstreamq = ProtoField.uint16("bcfab.bfc.upstreamq", "Upstream queue", base.DEC)
f.bitmap = ProtoField.uint64("bcfab.bfc.bitmap", "Paused bitmap", base.HEX)
f.queues = ProtoField.uint16("bcfab.bfc.queues", "Queues", base.DEC)
f.sent = ProtoField.uint64("bcfab.probe.sent", "Sent (monotonic ns, last bit)", base.DEC)
f.forward = ProtoField.int64("bcfab.probe.forward", "Forward one-way delay (ns)", base.DEC)
f.ici_src = ProtoField.ipv4("bcfab.ici.src", "Flow source address")
f.ici_dst = ProtoField.ipv4("bcfab.ici.dst", "Flow destination address")
f.ici_sport = ProtoField.uint16("bcfab.ici.sport", "Flow source port", base.DEC)
f.ici_dport = ProtoField.uint16("bcfab.ici.dport", "Flow destination port", base.DEC)
f.ici_proto = ProtoField.uint8("bcfab.ici.proto", "Flow protocol", base.DEC)
f.ici_pcp = ProtoField.uint8("bcfab.ici.pcp", "Flow priority", base.DEC)
f.ici_hops = ProtoField.uint8("bcfab.ici.hops", "Hops from the congestion root", base.DEC)
f.reserved = ProtoField.bytes("bcfab.reserved", "Reserved")
f.padding = ProtoField.bytes("bcfab.padding", "Padding")

local e_malformed = ProtoExpert.new("bcfab.malformed", "Malformed bcfab signal",
	expert.group.MALFORMED, expert.severity.ERROR)
p.experts = { e_malformed }

-- hex without leading zeros, as the Go side prints it (%#x).
local function hex64(r)
	local hi, lo = r:range(0, 4):uint(), r:range(4, 4):uint()
	if hi == 0 then
		return string.format("0x%x", lo)
	end
	return string.format("0x%x%08x", hi, lo)
end

local function all_zero(r)
	for i = 0, r:len() - 1 do
		if r:range(i, 1):uint() ~= 0 then
			return false
		end
	end
	return true
end

-- reserved adds a reserved range and flags it when not zero.
local function reserved(tree, r)
	local item = tree:add(f.reserved, r)
	if not all_zero(r) then
		item:add_proto_expert_info(e_malformed, "reserved bytes are not zero")
	end
end

function p.dissector(tvb, pinfo, tree)
	pinfo.cols.protocol = "bcfab"
	local t = tree:add(p, tvb:range(0, math.min(tvb:len(), HEADER_LEN)))
	if tvb:len() < HEADER_LEN then
		t:add_proto_expert_info(e_malformed, string.format("signal shorter than %d bytes", HEADER_LEN))
		pinfo.cols.info = "malformed signal: truncated"
		return tvb:len()
	end

	local version, scheme, typ, flags = tvb:range(0, 1):uint(), tvb:range(1, 1):uint(),
		tvb:range(2, 1):uint(), tvb:range(3, 1):uint()
	local seq = tvb:range(4, 4):uint()
	local bad = nil

	local vi = t:add(f.version, tvb:range(0, 1))
	if version ~= 1 then
		vi:add_proto_expert_info(e_malformed, "version is not 1")
		bad = "version " .. version
	end
	local si = t:add(f.scheme, tvb:range(1, 1))
	if not schemes[scheme] then
		si:add_proto_expert_info(e_malformed, "unknown scheme")
		bad = bad or ("scheme " .. scheme)
	end
	local tnames = types
	if scheme == SCHEME_PROBE then
		tnames = probe_types
	elseif scheme == SCHEME_ICI then
		tnames = ici_types
	end
	local ti = t:add(f.type, tvb:range(2, 1))
	if scheme == SCHEME_PROBE or scheme == SCHEME_ICI then
		ti:append_text(" (" .. (tnames[typ] or "unknown") .. ")")
	end
	if not tnames[typ] then
		ti:add_proto_expert_info(e_malformed, "unknown type")
		bad = bad or ("type " .. typ)
	end
	local fi = t:add(f.flags, tvb:range(3, 1))
	fi:add(f.relayed, tvb:range(3, 1))
	if bit.band(flags, 0xFE) ~= 0 then
		fi:add(f.flags_unknown, tvb:range(3, 1)):add_proto_expert_info(e_malformed, "unknown flag bits set")
		bad = bad or string.format("flags 0x%02x", flags)
	elseif (scheme == SCHEME_PROBE or scheme == SCHEME_ICI) and flags ~= 0 then
		fi:add_proto_expert_info(e_malformed, "a probe or an isolation has no flags")
		bad = bad or string.format("flags 0x%02x", flags)
	end
	t:add(f.seq, tvb:range(4, 4))

	local body = tvb:range(8, 16)
	local desc = (schemes[scheme] or ("scheme(" .. scheme .. ")")) .. " " ..
		string.lower(tnames[typ] or ("type(" .. typ .. ")"))
	if scheme == SCHEME_PORTFC then
		local class, port, level = body:range(0, 1):uint(), body:range(1, 1):uint(), body:range(2, 1):uint()
		local index = body:range(4, 4):uint()
		local ci = t:add(f.class, body:range(0, 1))
		if not classes[class] then
			ci:add_proto_expert_info(e_malformed, "class is not A (1) or B (2)")
			bad = bad or ("class " .. class)
		end
		t:add(f.port, body:range(1, 1))
		t:add(f.origin_level, body:range(2, 1))
		reserved(t, body:range(3, 1))
		t:add(f.origin_index, body:range(4, 4))
		local origin = string.format("s%d.%d", level, index)
		t:add(f.origin, body:range(2, 6), origin):set_generated()
		reserved(t, body:range(8, 8))
		if not all_zero(body:range(3, 1)) or not all_zero(body:range(8, 8)) then
			bad = bad or "reserved bytes"
		end
		desc = desc .. string.format(" class=%s port=%d origin=%s",
			classes[class] or ("class(" .. class .. ")"), port, origin)
	elseif scheme == SCHEME_ICI then
		t:add(f.ici_src, body:range(0, 4))
		t:add(f.ici_dst, body:range(4, 4))
		t:add(f.ici_sport, body:range(8, 2))
		t:add(f.ici_dport, body:range(10, 2))
		t:add(f.ici_proto, body:range(12, 1))
		local pcp = body:range(13, 1):uint()
		local pi = t:add(f.ici_pcp, body:range(13, 1))
		if pcp > 7 then
			pi:add_proto_expert_info(e_malformed, "priority above 7")
			bad = bad or ("priority " .. pcp)
		end
		t:add(f.ici_hops, body:range(14, 1))
		reserved(t, body:range(15, 1))
		if not all_zero(body:range(15, 1)) then
			bad = bad or "reserved bytes"
		end
		desc = "ICI isolate" .. string.format(" flow=%s:%d>%s:%d/%d pcp=%d hops=%d",
			tostring(body:range(0, 4):ipv4()), body:range(8, 2):uint(), tostring(body:range(4, 4):ipv4()),
			body:range(10, 2):uint(), body:range(12, 1):uint(), pcp, body:range(14, 1):uint())
	elseif scheme == SCHEME_PROBE then
		t:add(f.sent, body:range(0, 8))
		t:add(f.forward, body:range(8, 8))
		if typ == TYPE_ECHO then
			desc = desc .. string.format(" forward=%dns", body:range(8, 8):int64():tonumber())
		end
	elseif scheme == SCHEME_BFC and typ == TYPE_STATE then
		local queues = body:range(8, 2):uint()
		t:add(f.bitmap, body:range(0, 8))
		local qi = t:add(f.queues, body:range(8, 2))
		if queues > 64 then
			qi:add_proto_expert_info(e_malformed, "a bitmap covers at most 64 queues")
			bad = bad or ("queues " .. queues)
		end
		reserved(t, body:range(10, 6))
		if not all_zero(body:range(10, 6)) then
			bad = bad or "reserved bytes"
		end
		desc = desc .. string.format(" bitmap=%s queues=%d", hex64(body:range(0, 8)), queues)
	elseif scheme == SCHEME_BFC then
		t:add(f.upstreamq, body:range(0, 2))
		reserved(t, body:range(2, 14))
		if not all_zero(body:range(2, 14)) then
			bad = bad or "reserved bytes"
		end
		desc = desc .. string.format(" upstreamQ=%d", body:range(0, 2):uint())
	else
		t:add(tvb:range(8, 16), "Body (unknown scheme)")
	end

	desc = desc .. string.format(" seq=%d", seq)
	if bit.band(flags, FLAG_RELAYED) ~= 0 then
		desc = desc .. " relayed"
	end
	if bad then
		desc = "malformed (" .. bad .. "): " .. desc
	end
	pinfo.cols.info = desc
	t:append_text(", " .. desc)
	-- Up to 60 bytes it is Ethernet's minimum-length padding; the Go
	-- decoder accepts frames up to 1514 bytes and ignores the rest too.
	if tvb:len() > HEADER_LEN then
		t:add(f.padding, tvb:range(HEADER_LEN))
	end
	return tvb:len()
end

DissectorTable.get("ethertype"):add(ETHERTYPE, p)

-- INT (HPCC): bit 0x20 of BTH byte 4 says a shim follows the BTH's
-- extension header (data: before the payload; ACK: after the AETH):
-- hops (1), slots (1), reserved (2), then slots records of 16 bytes:
-- timestamp (ns), tx bytes, queue length (bytes), rate (kbit/s).
local ROCE_PORT = 4791
local INT_BIT = 0x20
local INT_HEADER, INT_RECORD = 4, 16

local pi = Proto("bcfab.int", "bcfab INT (HPCC)")
local fi = pi.fields
fi.hops = ProtoField.uint8("bcfab.int.hops", "Hops", base.DEC)
fi.slots = ProtoField.uint8("bcfab.int.slots", "Slots", base.DEC)
fi.reserved = ProtoField.bytes("bcfab.int.reserved", "Reserved")
fi.hop = ProtoField.uint8("bcfab.int.hop", "Hop", base.DEC)
fi.ts = ProtoField.uint32("bcfab.int.ts", "Timestamp (ns, mod 2^32)", base.DEC)
fi.txbytes = ProtoField.uint32("bcfab.int.txbytes", "Tx bytes (mod 2^32)", base.DEC)
fi.qlen = ProtoField.uint32("bcfab.int.qlen", "Queue length (bytes)", base.DEC)
fi.rate = ProtoField.uint32("bcfab.int.rate", "Link rate (kbit/s)", base.DEC)
local e_int = ProtoExpert.new("bcfab.int.malformed", "Malformed INT shim",
	expert.group.MALFORMED, expert.severity.ERROR)
pi.experts = { e_int }

-- ext_len is the extension header before the shim, by BTH opcode.
local function ext_len(op)
	if op == 0x11 then
		return 4 -- AETH
	elseif op == 0x06 or op == 0x0A then
		return 16 -- RETH
	end
	return 0
end

function pi.dissector(tvb, pinfo, tree)
	local n = tvb:len()
	if n < 14 then
		return
	end
	local off, et = 14, tvb:range(12, 2):uint()
	if et == 0x8100 and n >= 18 then
		off, et = 18, tvb:range(16, 2):uint()
	end
	if et ~= 0x0800 or n < off + 20 then
		return
	end
	local ihl = bit.band(tvb:range(off, 1):uint(), 0x0F) * 4
	local total = tvb:range(off + 2, 2):uint()
	if tvb:range(off + 9, 1):uint() ~= 17 or n < off + ihl + 8 + 12 then
		return
	end
	if tvb:range(off + ihl + 2, 2):uint() ~= ROCE_PORT then
		return
	end
	local bth = off + ihl + 8
	if bit.band(tvb:range(bth + 4, 1):uint(), INT_BIT) == 0 then
		return
	end
	local at = bth + 12 + ext_len(tvb:range(bth, 1):uint())
	local last = math.min(n, off + total) - 4 -- before the ICRC
	local t = tree:add(pi, tvb:range(at, math.max(0, math.min(INT_HEADER, last - at))))
	if last - at < INT_HEADER then
		t:add_proto_expert_info(e_int, "shorter than its header")
		return
	end
	local hops, slots = tvb:range(at, 1):uint(), tvb:range(at + 1, 1):uint()
	t:add(fi.hops, tvb:range(at, 1))
	t:add(fi.slots, tvb:range(at + 1, 1))
	t:add(fi.reserved, tvb:range(at + 2, 2))
	if at + INT_HEADER + slots * INT_RECORD > last or hops > slots then
		t:add_proto_expert_info(e_int, string.format("%d hops in %d slots do not fit", hops, slots))
		return
	end
	t:set_len(INT_HEADER + slots * INT_RECORD)
	local desc = {}
	for i = 0, hops - 1 do
		local r = tvb:range(at + INT_HEADER + i * INT_RECORD, INT_RECORD)
		local h = t:add(r, string.format("Hop %d", i))
		h:add(fi.hop, r:range(0, 0), i):set_generated()
		h:add(fi.ts, r:range(0, 4))
		h:add(fi.txbytes, r:range(4, 4))
		h:add(fi.qlen, r:range(8, 4))
		h:add(fi.rate, r:range(12, 4))
		desc[#desc + 1] = string.format("q=%d", r:range(8, 4):uint())
	end
	local s = string.format("INT %d/%d hops", hops, slots)
	if hops > 0 then
		s = s .. " " .. table.concat(desc, ",")
	end
	t:append_text(", " .. s)
	pinfo.cols.info:append(" [" .. s .. "]")
end

register_postdissector(pi)
