package ns3

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/wire/transport"
)

// Setting is a line of config.txt: a key of the sim and its value.
type Setting struct {
	Key, Value string
}

// The files of an export the sim reads and writes, named in config.txt
// relative to the directory it runs in (scripts/ns3/run.sh runs it in
// the export's).
const (
	TopologyFile = "topology.txt"
	FlowFile     = "flow.txt"
	TraceFile    = "trace.txt"
	ConfigFile   = "config.txt"
	FCTFile      = "fct.txt"
	PFCFile      = "pfc.txt"
	QlenFile     = "qlen.txt"
	TraceOutFile = "mix.tr"
)

// The sim's congestion controls (scratch/third.cc, CC_MODE; its
// mix/config_doc.txt lists 1, 3, 7, 8 and 10).
const (
	// ccModeNone is no mode of the list: rdma-hw.cc then moves no rate
	// and keeps no window, so a flow runs at its NIC's line rate.
	ccModeNone  = 0
	ccModeDCQCN = 1
	ccModeHPCC  = 3
	ccModeDCTCP = 8
)

// QPMaxRateKey is config.txt's key of every flow's starting and highest
// rate (Sim.QPMaxRate), which only a sim from scripts/ns3/qp-rate.sh
// reads; the stock sim skips a key it does not know, value and all.
const QPMaxRateKey = "QP_MAX_RATE"

// ecn is a port's marking as the sim's maps give it: K_min and K_max in
// KB (the sim multiplies them by 1000), P_max.
type ecn struct {
	kminKB, kmaxKB int
	pmax           float64
}

// configure writes the settings of config.txt from the lab's nodes and
// the scale model, and the notes that say where the sim differs.
func (s *Sim) configure(n *net) error {
	m := s.Model
	t := m.Target
	hostLab := n.hostLabRate
	if hostLab == 0 { // no relays: every host's one port
		for i := range n.host {
			c := n.cfg[n.host[i]]
			hostLab = max(hostLab, c.PortRate(c.FabricPorts()[0]))
		}
	}
	nic := n.targetRate(hostLab)
	// A flow's highest rate: the NIC's, or a port's below it
	// (QP_MAX_RATE, HostLinkPorts).
	flowLab := hostLab
	if s.QPMaxRate > 0 {
		flowLab = n.flowLabRate
	}
	flow := n.targetRate(flowLab)
	// A server's ports of other rates than its flows': bcfab's flows
	// start at their port's rate, the sim's at one rate.
	var others []string
	for i := range n.host {
		c := n.cfg[n.host[i]]
		for _, port := range c.FabricPorts() {
			if r := n.targetRate(c.PortRate(port)); r != flow && !slices.Contains(others, rateText(r)) {
				others = append(others, rateText(r))
			}
		}
	}
	if len(others) > 0 {
		slices.Sort(others)
		s.note("Rates: servers have ports of %s besides %s; the sim's flows, every host's, start at %s, and its congestion control's rate "+
			"steps are at that rate. bcfab's flows start at the rate of the port they leave by, and their steps scale with it.",
			strings.Join(others, ", "), rateText(flow), rateText(flow))
	}

	// ECN, one entry per rate of a switch's port (relays' included):
	// third.cc asserts every rate has its three.
	maps := map[uint64]ecn{}
	marks := false
	for li, l := range n.links {
		for _, e := range []End{l.A, l.B} {
			if n.nodes[e.Node].Role == RoleHost {
				continue
			}
			c := n.cfg[e.Node]
			port := e.Port
			if port == HostPort {
				port = fastestPort(c.FabricPorts(), c.PortRate)
			}
			q := c.PortECN(port)
			if q.KmaxBytes > 0 {
				marks = true
			} else {
				// No marking in the lab: the sim still wants the map,
				// and ENABLE_QCN 0 keeps it from marking.
				d := m.ECN(n.labRate[li])
				q.KminBytes, q.KmaxBytes, q.Pmax = d.KminBytes, d.KmaxBytes, d.Pmax
			}
			k := ecn{kminKB: kb(q.KminBytes), kmaxKB: kb(q.KmaxBytes), pmax: q.Pmax}
			if k.kminKB*1000 != q.KminBytes || k.kmaxKB*1000 != q.KmaxBytes {
				s.note("ECN thresholds are in KB in the sim: K_min %d and K_max %d bytes at %s are written as %d and %d KB.",
					q.KminBytes, q.KmaxBytes, rateText(l.RateBps), k.kminKB, k.kmaxKB)
			}
			if old, ok := maps[l.RateBps]; ok && old != k {
				return fmt.Errorf("ports of %s mark at K_min %d/K_max %d KB and at %d/%d: the sim has one marking per rate",
					rateText(l.RateBps), old.kminKB, old.kmaxKB, k.kminKB, k.kmaxKB)
			}
			maps[l.RateBps] = k
		}
	}
	rates := make([]uint64, 0, len(maps))
	for r := range maps {
		rates = append(rates, r)
	}
	slices.Sort(rates)
	kmap := func(v func(ecn) string) string {
		parts := []string{strconv.Itoa(len(rates))}
		for _, r := range rates {
			parts = append(parts, strconv.FormatUint(r, 10), v(maps[r]))
		}
		return strings.Join(parts, " ")
	}

	// The buffer, in whole MiB.
	buffer := 0
	for _, c := range n.cfg {
		buffer = max(buffer, c.BufferBytes)
	}
	mib := max(1, int(math.Round(float64(buffer)/(1<<20))))
	if mib<<20 != buffer {
		s.note("The sim's buffer is in whole MiB: bcfab's %d bytes per node are %d MiB (%d bytes) per switch and relay in the sim.", buffer, mib, mib<<20)
	}

	// The congestion control's constants: the target's, rate steps at
	// the flows' rate (bcfab scales them with each port's).
	share := float64(flow) / float64(t.LinkRateBps)
	step := func(bps int64) string { return rateSetting(uint64(math.Round(float64(bps) * share))) }
	d := t.DCQCN
	tp := m.Transport(flowLab)
	baseRTT := t.HPCCBaseRTT()
	mode, g, ai, hai := ccModeDCQCN, d.G, step(d.AIRateBps), step(d.HAIRateBps)
	hasWin, varWin, fastReact := 0, 0, 0
	if simWindowed(s.CC) { // DCQCN-win a fixed window of the sim's largest BDP, HPCC and DCTCP a variable one
		hasWin = 1
	}
	switch s.CC {
	case transport.CCNone:
		mode = ccModeNone
	case transport.CCHPCC:
		mode, varWin, fastReact = ccModeHPCC, 1, 1
		// HPCC's additive step W_AI per base RTT T as the sim's rate.
		ai = rateSetting(uint64(math.Round(tp.HPCCWAI * 8 / baseRTT.Seconds())))
		hai = ai
	case transport.CCDCTCP:
		mode, varWin = ccModeDCTCP, 1
		g = t.DCTCPParams().G
	}
	// DCTCP's additive step, one MTU per base RTT (as the sim's run.py
	// derives its own).
	dctcpAI := rateSetting(uint64(math.Round(float64(s.MTU) * 8 / baseRTT.Seconds())))
	intMulti := max(1, int(nic/25e9)) // the sim's run.py: the NIC's rate in 25 Gb/s

	us := func(v time.Duration) string {
		return strconv.FormatFloat(float64(v)/float64(time.Microsecond), 'g', -1, 64)
	}
	qcn := 0
	if marks {
		qcn = 1
	}
	s.Settings = []Setting{
		{"ENABLE_QCN", strconv.Itoa(qcn)},
		{"USE_DYNAMIC_PFC_THRESHOLD", "1"},
		{"PACKET_PAYLOAD_SIZE", strconv.Itoa(s.MTU)},
		{"TOPOLOGY_FILE", TopologyFile},
		{"FLOW_FILE", FlowFile},
		{"TRACE_FILE", TraceFile},
		{"TRACE_OUTPUT_FILE", TraceOutFile},
		{"FCT_OUTPUT_FILE", FCTFile},
		{"PFC_OUTPUT_FILE", PFCFile},
		{"SIMULATOR_STOP_TIME", seconds(s.Stop)},
		{"CC_MODE", strconv.Itoa(mode)},
		{"ALPHA_RESUME_INTERVAL", us(d.AlphaPeriod.D())},
		{"RATE_DECREASE_INTERVAL", us(d.CNPInterval.D())},
		{"CLAMP_TARGET_RATE", "0"},
		{"RP_TIMER", us(d.IncreasePeriod.D())},
		{"EWMA_GAIN", strconv.FormatFloat(g, 'g', -1, 64)},
		{"FAST_RECOVERY_TIMES", strconv.Itoa(d.F)},
		{"RATE_AI", ai},
		{"RATE_HAI", hai},
		{"MIN_RATE", step(d.MinRateBps)},
		{"DCTCP_RATE_AI", dctcpAI},
		{"ERROR_RATE_PER_LINK", "0"},
		{"L2_CHUNK_SIZE", "4000"},
		{"L2_ACK_INTERVAL", "1"},
		{"L2_BACK_TO_ZERO", "0"},
		{"HAS_WIN", strconv.Itoa(hasWin)},
		{"GLOBAL_T", "1"},
		{"VAR_WIN", strconv.Itoa(varWin)},
		{"FAST_REACT", strconv.Itoa(fastReact)},
		{"U_TARGET", strconv.FormatFloat(tp.HPCCEta, 'g', -1, 64)},
		{"MI_THRESH", strconv.Itoa(tp.HPCCMaxStage)},
		{"INT_MULTI", strconv.Itoa(intMulti)},
		{"MULTI_RATE", "0"},
		{"SAMPLE_FEEDBACK", "0"},
		{"PINT_LOG_BASE", "1.05"},
		{"PINT_PROB", "1.0"},
		{"RATE_BOUND", "1"},
		{"ACK_HIGH_PRIO", "1"},
		{"LINK_DOWN", "0 0 0"},
		{"ENABLE_TRACE", "0"},
		{"KMAX_MAP", kmap(func(e ecn) string { return strconv.Itoa(e.kmaxKB) })},
		{"KMIN_MAP", kmap(func(e ecn) string { return strconv.Itoa(e.kminKB) })},
		{"PMAX_MAP", kmap(func(e ecn) string { return strconv.FormatFloat(e.pmax, 'f', 2, 64) })},
		{"BUFFER_SIZE", strconv.Itoa(mib)},
		{"QLEN_MON_FILE", QlenFile},
		{"QLEN_MON_START", strconv.FormatInt(int64(FlowBase), 10)},
		{"QLEN_MON_END", strconv.FormatInt(int64(s.QlenEnd), 10)},
	}
	if s.QPMaxRate > 0 {
		s.Settings = append(s.Settings, Setting{QPMaxRateKey, rateSetting(s.QPMaxRate)})
	}
	s.pfcNotes(n, mib<<20, nic)
	return nil
}

// kb is a byte count in whole KB (1000 bytes), rounded.
func kb(b int) int { return int(math.Round(float64(b) / 1000)) }

// fastestPort is the port of ports with the highest rate (the first of
// them).
func fastestPort(ports []string, rate func(string) uint64) string {
	best := ports[0]
	for _, p := range ports[1:] {
		if rate(p) > rate(best) {
			best = p
		}
	}
	return best
}

// rateSetting writes a rate as the sim's config reads it (ns-3's
// DataRate): whole Mb/s where it is one, else b/s.
func rateSetting(bps uint64) string {
	if bps%1e6 == 0 {
		return strconv.FormatUint(bps/1e6, 10) + "Mb/s"
	}
	return strconv.FormatUint(bps, 10) + "b/s"
}

// rateText writes a link's rate as topology.txt does: whole Gbps where
// it is one, whole Mbps, else bps.
func rateText(bps uint64) string {
	switch {
	case bps%1e9 == 0:
		return strconv.FormatUint(bps/1e9, 10) + "Gbps"
	case bps%1e6 == 0:
		return strconv.FormatUint(bps/1e6, 10) + "Mbps"
	}
	return strconv.FormatUint(bps, 10) + "bps"
}

// seconds writes a time of the sim's clock in seconds to the
// nanosecond, as its flow file has starts.
func seconds(d time.Duration) string {
	return fmt.Sprintf("%d.%09d", d/time.Second, d%time.Second)
}

// note adds a difference to the README, once.
func (s *Sim) note(format string, a ...any) {
	text := fmt.Sprintf(format, a...)
	if !slices.Contains(s.Notes, text) {
		s.Notes = append(s.Notes, text)
	}
}

// The sim's switch buffer (switch-mmu.cc): every port reserves 4 KB per
// queue before it counts against the shared buffer, and a pause ends
// 3 KB below the threshold that started it.
const (
	mmuReserve      = 4 * 1024
	mmuResumeOffset = 3 * 1024
)

// pfcNotes says what the sim's PFC does where bcfab's pauses at X_off:
// the sim has no fixed threshold; switch-mmu.cc pauses an ingress queue
// once it holds (buffer - headroom of every port - reserve of every port
// - shared bytes in use) >> shift of the shared buffer, shift 3 (1/8) at
// the NIC's rate and one less per doubling above it, and resumes it 3 KB
// below that. The note gives the threshold of an empty switch's ports,
// the largest it gets, over every switch and relay of the export.
func (s *Sim) pfcNotes(n *net, buffer int, nic uint64) {
	type port struct {
		rate, delay uint64
	}
	ports := make([][]port, len(n.nodes))
	for _, l := range n.links {
		for _, e := range []End{l.A, l.B} {
			ports[e.Node] = append(ports[e.Node], port{l.RateBps, uint64(l.Delay.Nanoseconds())})
		}
	}
	lo, hi := -1, -1
	for id, ps := range ports {
		if n.nodes[id].Role == RoleHost {
			continue
		}
		var hdrm, rsrv uint64
		for _, p := range ps {
			hdrm += p.rate * p.delay / 8 / 1e9 * 3 // third.cc's headroom, its integer arithmetic
			rsrv += mmuReserve
		}
		for _, p := range ps {
			shift := 3
			for r := p.rate; r > nic && shift > 0; r /= 2 {
				shift--
			}
			free := int64(buffer) - int64(hdrm) - int64(rsrv)
			th := int(max(0, free) >> shift)
			if lo < 0 || th < lo {
				lo = th
			}
			hi = max(hi, th)
		}
	}
	if hi < 0 {
		return
	}
	// bcfab's thresholds, per rate of a switch's port: static, or
	// dynamic (alpha above 0) with an empty switch's X_off.
	type limits struct {
		xoff, xon int
		alpha     float64
	}
	byRate := map[uint64]limits{}
	for _, l := range n.links {
		for _, e := range []End{l.A, l.B} {
			if n.nodes[e.Node].Role == RoleSwitch {
				c := n.cfg[e.Node]
				pfc := c.PortPFC(e.Port)
				x := limits{pfc.Xoff, pfc.Xon, 0}
				if pool := c.PFCPool(1); pfc.Alpha > 0 && pool > 0 {
					x = limits{pfc.XoffAt(pool), pfc.Xoff - pfc.Xon, pfc.Alpha}
				}
				if o, ok := byRate[l.RateBps]; !ok || x.xoff < o.xoff {
					byRate[l.RateBps] = x
				}
			}
		}
	}
	rates := make([]uint64, 0, len(byRate))
	for r := range byRate {
		rates = append(rates, r)
	}
	slices.Sort(rates)
	var ours []string
	for _, r := range rates {
		x := byRate[r]
		at := ""
		if len(rates) > 1 {
			at = " on ports of " + rateText(r)
		}
		if x.alpha > 0 {
			ours = append(ours, fmt.Sprintf("a dynamic X_off, %.4g of its free shared buffer (%d bytes on an empty switch), resuming it %d bytes below%s",
				x.alpha, x.xoff, x.xon, at))
			continue
		}
		ours = append(ours, fmt.Sprintf("X_off %d bytes, resuming it at X_on %d%s", x.xoff, x.xon, at))
	}
	span := fmt.Sprintf("%d bytes", hi)
	if lo != hi {
		span = fmt.Sprintf("%d to %d bytes", lo, hi)
	}
	s.note("PFC: bcfab pauses an ingress queue at %s; the sim's threshold is dynamic "+
		"(switch-mmu.cc: the free shared buffer >> 3 at the NIC's rate), %s on an empty switch of this export, falling as its buffer fills, "+
		"and it resumes %d bytes below it. USE_DYNAMIC_PFC_THRESHOLD is read but the sim's switch has no other threshold.",
		strings.Join(ours, "; "), span, mmuResumeOffset)
	if s.FC != scheme.NamePFC {
		s.note("Flow control: the lab runs %s; the sim runs PFC, its only one, whatever the lab's.", s.FC)
	}
}
