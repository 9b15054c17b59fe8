package ns3

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/wire/roce"
	"github.com/bcfab/bcfab/wire/transport"
)

// The maps an export adds for the way back.
const (
	NodesFile  = "nodes.csv"
	PortsFile  = "ports.csv"
	FlowsFile  = "flows.csv"
	ReadmeFile = "README.md"
)

// File is one file of an export: its name in the directory and its
// contents.
type File struct {
	Name, Data string
}

// Files are the export's files, in the order Write writes them.
func (s *Sim) Files() []File {
	return []File{
		{ConfigFile, s.configText()},
		{TopologyFile, s.topologyText()},
		{FlowFile, s.flowText()},
		{TraceFile, "0\n"}, // no node traced: the sim reads a count and no id
		{NodesFile, s.nodesCSV()},
		{PortsFile, s.portsCSV()},
		{FlowsFile, s.flowsCSV()},
		{ReadmeFile, s.readme()},
	}
}

// Write writes the export into dir, which it creates; a dir that holds
// anything is refused unless overwrite, which replaces the export's
// files and leaves the rest. The sim's outputs of an earlier run there
// are removed with it, so that no fct.txt outlives its export.
func (s *Sim) Write(dir string, overwrite bool) error {
	ents, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("ns3: %w", err)
		}
	case err != nil:
		return fmt.Errorf("ns3: %w", err)
	case len(ents) > 0 && !overwrite:
		return fmt.Errorf("ns3: %s is not empty (--force writes over an export there)", dir)
	}
	for _, out := range []string{FCTFile, PFCFile, QlenFile, TraceOutFile} {
		if err := os.Remove(filepath.Join(dir, out)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("ns3: %w", err)
		}
	}
	for _, f := range s.Files() {
		if err := os.WriteFile(filepath.Join(dir, f.Name), []byte(f.Data), 0o644); err != nil {
			return fmt.Errorf("ns3: %w", err)
		}
	}
	return nil
}

// configText is config.txt: one "KEY value" a line, nothing else (the
// sim reads it a word at a time, so a comment's word that is a key would
// be read as one).
func (s *Sim) configText() string {
	var b strings.Builder
	for _, kv := range s.Settings {
		fmt.Fprintf(&b, "%s %s\n", kv.Key, kv.Value)
	}
	return b.String()
}

// topologyText is topology.txt: nodes, switches and links; the switches'
// ids; then a link a line, "a b rate delay error_rate".
func (s *Sim) topologyText() string {
	var b strings.Builder
	var switches []string
	for _, n := range s.Nodes {
		if n.Role != RoleHost {
			switches = append(switches, strconv.Itoa(n.ID))
		}
	}
	fmt.Fprintf(&b, "%d %d %d\n%s\n", len(s.Nodes), len(switches), len(s.Links), strings.Join(switches, " "))
	for _, l := range s.Links {
		fmt.Fprintf(&b, "%d %d %s %dns %s\n", l.A.Node, l.B.Node, rateText(l.RateBps), l.Delay.Nanoseconds(), strconv.FormatFloat(l.ErrorRate, 'g', -1, 64))
	}
	return b.String()
}

// flowText is flow.txt: the count, then a flow a line, "src dst pg dport
// size start", the start in seconds on the sim's clock.
func (s *Sim) flowText() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%d\n", len(s.Flows))
	for _, f := range s.Flows {
		fmt.Fprintf(&b, "%d %d %d %d %d %s\n", f.SimSrc, f.SimDst, PG, f.DPort, f.Size, seconds(f.SimStart()))
	}
	return b.String()
}

// nodesCSV maps the sim's nodes back: sim_id,node,role.
func (s *Sim) nodesCSV() string {
	var b strings.Builder
	b.WriteString("sim_id,node,role\n")
	for _, n := range s.Nodes {
		fmt.Fprintf(&b, "%d,%s,%s\n", n.ID, n.Name, n.Role)
	}
	return b.String()
}

// portsCSV maps the sim's devices back to bcfab's ports, for pfc.txt and
// qlen.txt, which name a node and a device: sim_id,if_index,node,port,
// peer_id, peer_port, rate and delay in the target. A node's devices are
// numbered from 1 in the order of topology.txt's links (0 is its
// loopback).
func (s *Sim) portsCSV() string {
	type row struct {
		id, ifIndex int
		line        string
	}
	var rows []row
	count := make([]int, len(s.Nodes))
	for _, l := range s.Links {
		for _, e := range [][2]End{{l.A, l.B}, {l.B, l.A}} {
			me, peer := e[0], e[1]
			count[me.Node]++
			rows = append(rows, row{me.Node, count[me.Node], fmt.Sprintf("%d,%d,%s,%s,%d,%s,%d,%d\n",
				me.Node, count[me.Node], s.Nodes[me.Node].Name, me.Port, peer.Node, peer.Port, l.RateBps, l.Delay.Nanoseconds())})
		}
	}
	slices.SortFunc(rows, func(a, b row) int {
		if a.id != b.id {
			return a.id - b.id
		}
		return a.ifIndex - b.ifIndex
	})
	var b strings.Builder
	b.WriteString("sim_id,if_index,node,port,peer_id,peer_port,rate_bps,delay_ns\n")
	for _, r := range rows {
		b.WriteString(r.line)
	}
	return b.String()
}

// flowsHeader is flows.csv's first line.
const flowsHeader = "id,src,dst,sim_src,sim_dst,sport,dport,size,start_target_ns,sim_start_ns,ideal_target_ns,kind,group,sim_ideal_target_ns"

// flowsCSV maps the flows back: bcfab's id and servers, the sim's hosts
// and ports, size, start on the target's clock and the sim's, ideal
// FCT in bcfab's network, kind, group, and ideal FCT in the sim's; in
// flow.txt's order.
func (s *Sim) flowsCSV() string {
	var b strings.Builder
	b.WriteString(flowsHeader + "\n")
	for _, f := range s.Flows {
		fmt.Fprintf(&b, "%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d,%s,%d,%d\n", f.ID, f.Src, f.Dst, f.SimSrc, f.SimDst, f.SPort, f.DPort,
			f.Size, f.Start.Nanoseconds(), f.SimStart().Nanoseconds(), f.Ideal.Nanoseconds(), f.Kind, f.Group, f.SimIdeal.Nanoseconds())
	}
	return b.String()
}

// readme says what wrote the export, what is in it, how to run it, and
// what differs between the tools.
func (s *Sim) readme() string {
	var b strings.Builder
	fmt.Fprintf(&b, "# ns-3 input for lab %s\n\n", s.Lab)
	build := s.build
	if build == "" {
		build = "bcfab"
	}
	fmt.Fprintf(&b, "Written by %s", build)
	if s.command != "" {
		fmt.Fprintf(&b, " with\n\n    %s\n\n", s.command)
	} else {
		b.WriteString(".\n\n")
	}
	roles := map[Role]int{}
	for _, n := range s.Nodes {
		roles[n.Role]++
	}
	fmt.Fprintf(&b, "The lab is %s, flow control %s, emulating %s. The sim gets the target: %d hosts, %d relays and %d switches, %d links; %d flows",
		s.Topology, s.FC, s.Model, roles[RoleHost], roles[RoleRelay], roles[RoleSwitch], len(s.Links), len(s.Flows))
	if len(s.Flows) > 0 {
		fmt.Fprintf(&b, " starting from %s to %s of the sim's clock", seconds(s.Flows[0].SimStart()), seconds(s.Flows[len(s.Flows)-1].SimStart()))
	}
	fmt.Fprintf(&b, " (the run's start is %s), due to end by %s; the sim stops at %s. Congestion control %s (CC_MODE %s), %d-byte payloads.\n\n",
		seconds(FlowBase), seconds(s.End), seconds(s.Stop), s.CC, s.setting("CC_MODE"), s.MTU)
	b.WriteString(`## Files

| file | what |
| --- | --- |
| config.txt | the sim's configuration (scratch/third.cc reads it; the files it names are in this directory) |
| topology.txt | nodes, switches, links at the target's rates and delays |
| flow.txt | the flows in the order the sim starts them: src dst pg dport size start |
| trace.txt | the nodes whose packets the sim traces: none |
| nodes.csv | every sim node: the bcfab node it stands for, and its role (host, relay, switch) |
| ports.csv | every device of a sim node (pfc.txt and qlen.txt name them): bcfab's node and port, the peer, rate and delay |
| flows.csv | every flow: bcfab's id, servers, size; the sim's hosts and source port (fct.txt names them); start and ideal FCT in the target |

The sim writes fct.txt, pfc.txt, qlen.txt and mix.tr here.

## Run and compare

    scripts/ns3/run.sh SIM_DIR THIS_DIR     # see scripts/ns3/README.md
    lab ns3 compare --sim THIS_DIR --bcfab RECORDS

RECORDS is lab workload's --records file (CSV or JSON lines) or its --json report of the same
schedule. Times in fct.txt and flows.csv are the target's, in ns; each tool's slowdown is against
the flow's ideal FCT in its own network: bcfab's against ideal_target_ns, the sim's against
sim_ideal_target_ns (the flow alone on its path in the sim, with the sim's headers and ACKs).

## What differs

`)
	for _, d := range s.differences() {
		fmt.Fprintf(&b, "- %s\n", d)
	}
	return b.String()
}

// setting is the value of config.txt's key.
func (s *Sim) setting(key string) string {
	for _, kv := range s.Settings {
		if kv.Key == key {
			return kv.Value
		}
	}
	return ""
}

// differences are the README's list: what this export models otherwise
// than the lab runs, with its numbers.
func (s *Sim) differences() []string {
	var out []string
	t := s.Model.Target
	if s.HostRate > 0 {
		pkt := time.Duration(float64(s.packet()*8) / float64(s.HostRate) * 1e9)
		link := fmt.Sprintf("Hosts: the sim's hosts have one NIC and forward nothing, so every server is two nodes: a relay "+
			"switch with its fabric ports and one more, and behind it a host, joined by a link of %s and %v. A packet crosses that link at "+
			"both ends of its path: %v more each way than in bcfab for a full data packet (%v of serialization and %v of delay, twice). ",
			rateText(s.HostRate), s.HostDelay, 2*(pkt+s.HostDelay), pkt, s.HostDelay)
		if s.QPMaxRate > 0 {
			link += fmt.Sprintf("The rate is the sum of the server's ports' (host link %s), so a host sends and receives on all of them "+
				"at once, as bcfab's NIC does; every flow starts at and stays under %s, one port's rate, by %s, which only a sim "+
				"from scripts/ns3/qp-rate.sh reads. ", HostLinkPorts, rateText(s.QPMaxRate), QPMaxRateKey)
		} else {
			link += fmt.Sprintf("The rate is the server's fastest port's and no more (host link %s), because the sim's NIC rate is also "+
				"every flow's starting and highest rate (rdma-hw.cc) and HPCC's INT names 25 to 400 Gb/s only; so a host sends and "+
				"receives at most %s in all, where bcfab's NIC uses its fabric ports at once (host link %s, with a sim from "+
				"scripts/ns3/qp-rate.sh, gives it their sum). ", HostLinkPort, rateText(s.HostRate), HostLinkPorts)
		}
		out = append(out, link+"The delay is the least at which the relay's PFC headroom (3 x rate x delay) holds the two "+
			"packets and the round trip a paused host still sends: with less the sim drops them.")
	}
	hdr, over, intNote := simHeader, transport.DefaultWireOverhead, ""
	if s.CC == transport.CCHPCC {
		hdr += simINT
		over += roce.INTLen
		intNote = ", INT included"
	}
	longer := float64(s.MTU+over)/float64(s.MTU+hdr) - 1
	word := "longer"
	if longer < 0 {
		word, longer = "shorter", -longer
	}
	out = append(out, fmt.Sprintf("Headers: a data packet of %d payload bytes is %d bytes on the sim's links and %d on bcfab's%s "+
		"(bcfab's: Ethernet, 802.1Q, IPv4, UDP, BTH, ICRC, and the preamble, FCS and gap its shapers count): bcfab serializes a flow %.1f%% %s.",
		s.MTU, s.MTU+hdr, s.MTU+over, intNote, 100*longer, word))
	if q := t.NICQueue(); q < 2*int64(s.MTU) { // a flow then queues one packet at most
		out = append(out, "NIC: both tools' NICs serve their flows a packet each in turn (the sim's QPs; bcfab's flows each queue one "+
			"packet, the target's nic-queue-bytes).")
	} else {
		out = append(out, fmt.Sprintf("NIC: the sim's NIC serves its QPs a packet each in turn; bcfab's lets each flow queue up to %d bytes "+
			"in its port's egress FIFO (the target's nic-queue-bytes), where a new flow's packets wait behind the others' "+
			"(a target file's nic-queue-bytes: 1 serves them in turn).", q))
	}
	if t.ECNAtDequeue {
		out = append(out, "ECN: both tools mark a packet by the queue it leaves behind (at dequeue; the target's ecn-at-dequeue).")
	} else {
		out = append(out, "ECN: the sim marks a packet by the queue it leaves behind (at dequeue); bcfab by the queue it joins (at enqueue), "+
			"so the sim's marks tell of a queue sooner, by about the time the queue takes to drain (a target file's ecn-at-dequeue: true "+
			"marks as the sim does).")
	}
	switch {
	case s.HostRate > 0:
		out = append(out, "Routing: the sim's switches, relays included, spread flows by ECMP over every shortest path, hashing the 5-tuple "+
			"at every hop (one path per flow, chosen hop by hop); bcfab's servers take one of BCube's level orders by the flow's hash: the "+
			"same paths, drawn otherwise.")
	case s.Routing == lab.RoutingECMP:
		out = append(out, "Routing: both tools spread flows by ECMP over every shortest path, each hashing the 5-tuple its own way.")
	default:
		out = append(out, fmt.Sprintf("Routing: the sim's switches spread flows by ECMP over every shortest path; bcfab's route by the lab's %s.", s.Routing))
	}
	out = append(out, fmt.Sprintf("ACKs: the sim's receiver acknowledges every packet, bcfab's every %d packets or %v after the oldest "+
		"unacknowledged. ACK_HIGH_PRIO 1 sends the sim's ACKs ahead of data and unpaused at the NICs, but third.cc sets no switch's "+
		"AckHighPrio: in its switches ACKs share priority group %d, and its pauses, with data. bcfab's take the high-priority queue at every hop.",
		t.AckEvery, t.AckDelay.D(), PG))
	switch s.CC {
	case transport.CCDCQCN, transport.CCDCQCNWin, transport.CCDCQCNMlx:
		note := fmt.Sprintf("DCQCN: the sim's is Mellanox's: a marked packet sets the CNP flag of its ACK and the sender cuts its rate at most "+
			"once per RATE_DECREASE_INTERVAL (set to bcfab's CNP interval, %v, at which bcfab's receivers send one CNP); with "+
			"CLAMP_TARGET_RATE 0 a cut lowers the target rate only after an increase event, and the timer alone raises the rate: "+
			"F events of fast recovery, one additive, then hyper increase.", t.DCQCN.CNPInterval.D())
		if s.CC == transport.CCDCQCNMlx {
			note += " bcfab's flows run the same variant (dcqcn-mlx)."
		} else {
			note += fmt.Sprintf(" bcfab's flows run the paper's (%s): every cut sets the target to the rate it cuts, and hyper increase "+
				"needs the byte counter's stages (every %d bytes) past F as well as the timer's; --cc dcqcn-mlx runs the sim's variant.", s.CC, t.DCQCN.ByteCounter)
		}
		out = append(out, note)
	case transport.CCHPCC:
		out = append(out, fmt.Sprintf("HPCC: the sim's base RTT T is its longest path's (GLOBAL_T 1, computed by the sim over this topology); "+
			"bcfab's is %v. RATE_AI is bcfab's W_AI per %v. The sim's INT counts every byte its links carry; bcfab's counts each frame's "+
			"bytes against the wire's rate, which carries preamble, FCS and gap too, so at the same eta its HPCC holds a link's wire "+
			"about 2%% busier. The sim's NICs stamp no INT record; bcfab's switches stamp, and so do a BCube server's ports (its relay's "+
			"egress, as the sim's relay switch), while a graph fabric's server stamps none.", t.HPCCBaseRTT(), t.HPCCBaseRTT()))
	case transport.CCDCTCP:
		out = append(out, fmt.Sprintf("DCTCP: the sim's paces a rate that grows by DCTCP_RATE_AI per window of data (set to one MTU per %v); "+
			"bcfab's keeps a window that grows by one MTU per window.", t.HPCCBaseRTT()))
	case transport.CCNone:
		out = append(out, "No congestion control: CC_MODE 0 is none of the sim's documented modes; rdma-hw.cc then changes no rate, "+
			"so the flows run at the NIC's rate, as bcfab's do.")
	}
	out = append(out, "Pauses: the sim's pause holds until its resume; bcfab's is refreshed and expires (its hold time).")
	return append(out, s.Notes...)
}
