package experiment

import (
	"cmp"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/scheme"
	"github.com/bcfab/bcfab/wire/transport"
)

// The names people read: every legend, table, title and README names a
// contender, a fabric and a CDF as the papers print them; the files for
// machines (summary.csv's scheme column, the points' IDs) keep the
// names of the experiment file. A contender's name is made of its
// parts' (Config.Label): its flow control with its variants, its
// congestion control, its loss recovery and its routing. The titles of
// the parts are the one table below, which a test holds to every
// registered scheme, congestion control, routing and built-in CDF.
var (
	fcTitles = map[string]string{
		scheme.NameNone:    "No flow control",
		scheme.NamePortFC:  "PortFC",
		scheme.NamePFC:     "PFC",
		scheme.NamePFCStar: "PFC*",
		scheme.NameBFC:     "BFC",
		scheme.NameICI:     "ICI",
		scheme.NameCI:      "CI",
		scheme.NameIdealFQ: "Ideal-FQ",
		scheme.NameSFQ:     "SFQ",
		// The lossy transports, which stand for no flow control.
		scheme.NameIRN: "IRN",
		scheme.NameGBN: "Go-Back-N",
	}
	ccTitles = map[string]string{
		transport.CCDCQCN.String():    "DCQCN",
		transport.CCDCTCP.String():    "DCTCP",
		transport.CCHPCC.String():     "HPCC",
		transport.CCDCQCNWin.String(): "DCQCN+win",
		transport.CCDCQCNMlx.String(): "DCQCN (mlx)",
	}
	routingTitles = map[string]string{
		lab.RoutingECMP:   "ECMP",
		lab.RoutingKSP:    "KSP",
		lab.RoutingDFKSP1: "DF-KSP-1",
		lab.RoutingDFKSP2: "DF-KSP-2",
		lab.RoutingFC:     "FC",
	}
	cdfTitles = map[string]string{"websearch": "WebSearch", "hadoop": "Hadoop", "storage": "Storage", "none": "no background"}
)

// Label is contender's name for people: the file's label for it
// (labels), else its default name (DefaultLabel).
func (c *Config) Label(contender string) string {
	if l := c.Labels[contender]; l != "" {
		return l
	}
	return c.DefaultLabel(contender)
}

// DefaultLabel is contender's name as the papers print it, from its
// parts:
//
//   - a lossy transport is named for its loss recovery (IRN, Go-Back-N),
//     "over" a flow control it runs under (Go-Back-N over PFC);
//   - PFC under a congestion control is named for the congestion control
//     alone (DCQCN, HPCC, DCTCP), as the papers name RDMA's baselines;
//   - any other flow control is named for itself under DCQCN, every
//     scheme's congestion control unless the file says otherwise
//     (PortFC, PFC*, BFC, ICI), and after another one (HPCC+SFQ);
//   - one whose congestion control the file turns off says so (BFC, no
//     CC); where the lab marks nothing DCQCN has nothing to act on, and
//     the loop's and HoL's generated flows have none: the flow control
//     alone (PFC);
//   - a variant follows its scheme (BFC, 1 queue; BFC, hashed queues;
//     PortFC, DRR relay);
//   - a routing of its own names a contender when it is all that sets
//     it apart from the file's others (DF-KSP-1), else follows it (DCQCN
//     on KSP).
func (c *Config) DefaultLabel(contender string) string {
	sc, err := ParseContender(contender)
	if err != nil {
		return contender
	}
	name := contenderTitle(sc, c.contenderCC(sc))
	if sc.Sim != "" {
		name = "ns-3 " + name
	}
	if sc.D != 0 {
		name += ", D = " + dilationText(sc.D)
	}
	for _, k := range sc.Knobs {
		name += ", " + knobText(k)
	}
	if sc.Routing == "" {
		return name
	}
	r := cmp.Or(routingTitles[sc.Routing], sc.Routing)
	if c.onlyRoutingsDiffer() {
		return r
	}
	return name + " on " + r
}

// contenderCC is the congestion control sc's flows run under, as the
// runner sets it (lab.WorkloadOptions.FlowCC), or none where it would
// not act: the loop's and HoL's generated flows, DCQCN on a lab that
// marks nothing.
func (c *Config) contenderCC(sc Contender) transport.CC {
	if c.Kind != KindWorkload || c.Workload == nil {
		return transport.CCNone
	}
	o := lab.WorkloadOptions{NoDCQCN: c.Workload.NoDCQCN || sc.NoCC, CC: sc.CC}
	cc, err := o.FlowCC(c.ContenderLabSpec(sc, "", "").CC)
	if err != nil || (cc.Rate() && !c.Lab.ECN()) {
		return transport.CCNone
	}
	return cc
}

// onlyRoutingsDiffer says every contender of c is one flow control and
// congestion control on routings of their own.
func (c *Config) onlyRoutingsDiffer() bool {
	base := ""
	for i, s := range c.Contenders {
		b, r, _ := strings.Cut(s, "@")
		if r == "" || (i > 0 && b != base) {
			return false
		}
		base = b
	}
	return len(c.Contenders) > 0
}

// contenderTitle is sc's name under congestion control cc (see
// DefaultLabel), its routing left out.
func contenderTitle(sc Contender, cc transport.CC) string {
	fc := fcTitle(sc.FC)
	base, _, _ := strings.Cut(sc.FC, ":")
	switch {
	case sc.Mode != transport.Lossless.String():
		t := cmp.Or(fcTitles[sc.Mode], sc.Mode)
		if base != scheme.NameNone {
			t += " over " + fc
		}
		return t
	case sc.NoCC:
		return fc + ", no CC"
	case cc == transport.CCNone:
		return fc
	case base == scheme.NamePFC:
		return ccTitle(cc)
	case cc == transport.CCDCQCN:
		return fc
	}
	return ccTitle(cc) + "+" + fc
}

func ccTitle(cc transport.CC) string { return cmp.Or(ccTitles[cc.String()], cc.String()) }

// fcTitle is a flow control's name with its variants' words: bfc:2 is
// "BFC, 1 queue" (the HQ is not a data queue), bfc:hash "BFC, hashed
// queues", portfc:drr "PortFC, DRR relay".
func fcTitle(fc string) string {
	base, _, _ := strings.Cut(fc, ":")
	t := cmp.Or(fcTitles[base], base)
	n, err := scheme.ParseName(fc)
	if err != nil {
		return t
	}
	k := n.Knobs
	hashed := ""
	if k.BFCAssign == scheme.BFCAssignHash {
		hashed = "hashed "
	}
	switch {
	case k.BFCQueues == 2:
		t += ", 1 " + hashed + "queue"
	case k.BFCQueues > 2:
		t += ", " + strconv.Itoa(k.BFCQueues-1) + " " + hashed + "queues"
	case hashed != "":
		t += ", hashed queues"
	}
	if k.RelayQueue == scheme.RelayDRR {
		t += ", DRR relay"
	}
	return t
}

// cdfTitle is a CDF's name as the papers print it (WebSearch).
func cdfTitle(cdf string) string { return cmp.Or(cdfTitles[cdf], cdf) }

// FabricWords names c's fabric for a plot's title, in words: "BCube(4,1)",
// "leaf-spine, 2 leaves x 8 hosts, 1 spine"; the exact parameters (lab
// up's flags) are TopologyText's, in the README.
func (c *Config) FabricWords() string {
	if c.Kind == KindConformance {
		return conformanceFabrics
	}
	if c.Fabric == nil {
		if r := c.Lab.Rates(); c.Topology.K == 1 && len(r) == 2 && r[0] > r[1] {
			// Level 0, the high-bandwidth domain, faster than the rails.
			return fmt.Sprintf("Rail-only NDC(%d,1), HBD %gx the rails", c.Topology.N, float64(r[0])/float64(r[1]))
		}
		return fmt.Sprintf("BCube(%d,%d)", c.Topology.N, c.Topology.K)
	}
	f := c.Fabric
	count := func(n int, one, many string) string {
		if n == 1 {
			return "1 " + one
		}
		return strconv.Itoa(n) + " " + many
	}
	var s string
	switch f.Kind {
	case lab.TopologyLeafSpine:
		s = fmt.Sprintf("leaf-spine, %s x %s, %s", count(f.Leaves, "leaf", "leaves"), count(f.Hosts, "host", "hosts"), count(f.Spines, "spine", "spines"))
		if f.Oversubscription > 1 {
			s += fmt.Sprintf(", %g:1 oversubscribed", f.Oversubscription)
		}
	case lab.TopologyFatTree:
		s = fmt.Sprintf("fat-tree, k = %d", f.K)
	case lab.TopologyExpander:
		s = fmt.Sprintf("expander, %s x %s, degree %d", count(f.ToRs, "ToR", "ToRs"), count(f.Hosts, "host", "hosts"), f.Degree)
	case lab.TopologyFCPlus:
		s = fmt.Sprintf("FC+, %s x %s, s = %d, v = %d", count(f.ToRs, "ToR", "ToRs"), count(f.Hosts, "host", "hosts"), f.Ports, f.Virtual)
		if f.Scenario != "" {
			s = "FC+ " + f.Scenario
		}
	default:
		s = f.Kind
	}
	// The routing, unless the schemes name theirs (the legend does).
	if r := f.Routing; r != "" && r != lab.RoutingECMP && c.routings() == nil {
		s += ", " + cmp.Or(routingTitles[r], r) + " routing"
	}
	return s
}

// dilationText prints D for a title: whole from 1,000 on, with commas
// ("5,000", "20,000"), else three significant digits.
func dilationText(d float64) string {
	if d < 1000 {
		return strconv.FormatFloat(d, 'g', 3, 64)
	}
	s := strconv.FormatInt(int64(d+0.5), 10)
	var b strings.Builder
	for i, ch := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(ch)
	}
	return b.String()
}

// knobTitles are lab knobs as the papers name their parameters.
var knobTitles = map[string]string{
	"xoff": "X_off", "xon": "X_on", "buffer": "buffer",
	"ecn-kmin": "K_min", "ecn-kmax": "K_max", "ecn-pmax": "P_max",
}

// quantityRE is a number and its unit as a knob's value writes them.
var quantityRE = regexp.MustCompile(`^([0-9.]+)([A-Za-z%]+)$`)

// knobText is a contender's own knob in a label: X_off 12 KB.
func knobText(k KnobValue) string {
	v := k.Value
	if m := quantityRE.FindStringSubmatch(v); m != nil {
		v = m[1] + " " + m[2]
	}
	return cmp.Or(knobTitles[k.Key], k.Key) + " " + v
}
