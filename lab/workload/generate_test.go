package workload

import (
	"encoding/binary"
	"hash/fnv"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
)

func mustCDF(t testing.TB, name string) *CDF {
	t.Helper()
	c, err := BuiltinCDF(name)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// bcube41 is the papers' BCube(4,1) at 10 Gb/s, half loaded with WebSearch.
func bcube41(t testing.TB) Config {
	return Config{Hosts: 16, LinkRate: 10e9, LinksPerHost: 2, Load: 0.5, CDF: mustCDF(t, "websearch"), Duration: time.Second, Seed: 1}
}

func generate(t testing.TB, c Config) []Flow {
	t.Helper()
	flows, err := Generate(c)
	if err != nil {
		t.Fatal(err)
	}
	return flows
}

// checkSchedule checks what every schedule promises: IDs are indices,
// starts ascend within the run, pairs are distinct hosts, sizes positive.
func checkSchedule(t *testing.T, c Config, flows []Flow) {
	t.Helper()
	for i, f := range flows {
		if f.ID != i || f.Src == f.Dst || f.Src < 0 || f.Src >= c.Hosts || f.Dst < 0 || f.Dst >= c.Hosts ||
			f.Size < 1 || f.Start < 0 || f.Start >= c.Duration || (i > 0 && f.Start < flows[i-1].Start) {
			t.Fatalf("flow %d: %+v", i, f)
		}
	}
}

func TestLambda(t *testing.T) {
	c := bcube41(t)
	want := 0.5 * 16 * 10e9 / 8 / c.CDF.Mean()
	if got := c.Lambda(); math.Abs(got-want) > 1e-9*want {
		t.Errorf("Lambda = %g, want %g", got, want)
	}
	c.Basis = PerHost
	if got := c.Lambda(); math.Abs(got-2*want) > 1e-9*want {
		t.Errorf("Lambda per host = %g, want %g (two links)", got, 2*want)
	}
	c.Load = 0
	c.Incast = &Incast{Senders: 1, Size: 1, Period: time.Millisecond}
	if c.Lambda() != 0 {
		t.Errorf("Lambda without background = %g", c.Lambda())
	}
}

// TestPoisson generates a long background and checks its arrival rate,
// its inter-arrival times, its offered load and its pairs.
func TestPoisson(t *testing.T) {
	c := bcube41(t)
	c.Duration = 30 * time.Second
	flows := generate(t, c)
	checkSchedule(t, c, flows)

	lam := c.Lambda()
	want := lam * c.Duration.Seconds()
	n := float64(len(flows))
	if math.Abs(n-want) > 4*math.Sqrt(want) {
		t.Errorf("%d flows, want %.0f ± %.0f", len(flows), want, 4*math.Sqrt(want))
	}

	// Exponential inter-arrival times: mean 1/λ, and P(gap <= x/λ) = 1-e^-x.
	var sum float64
	quantiles := []float64{0.1, 0.5, 1, 2, 4}
	counts := make([]int, len(quantiles))
	for i := 1; i < len(flows); i++ {
		gap := (flows[i].Start - flows[i-1].Start).Seconds() * lam
		sum += gap
		for j, x := range quantiles {
			if gap <= x {
				counts[j]++
			}
		}
	}
	gaps := float64(len(flows) - 1)
	if m := sum / gaps; math.Abs(m-1) > 0.01 {
		t.Errorf("mean inter-arrival %.4f/λ, want 1/λ", m)
	}
	for j, x := range quantiles {
		if got, want := float64(counts[j])/gaps, 1-math.Exp(-x); math.Abs(got-want) > 0.005 {
			t.Errorf("P(gap <= %g/λ) = %.4f, want %.4f", x, got, want)
		}
	}

	// Offered load: the bytes offered over the run against one link per host.
	var bytes float64
	src := make([]int, c.Hosts)
	dst := make([]int, c.Hosts)
	for _, f := range flows {
		if f.Kind != KindPoisson || f.Group != 0 || f.Phase != 0 {
			t.Fatalf("background flow %+v", f)
		}
		bytes += float64(f.Size)
		src[f.Src]++
		dst[f.Dst]++
	}
	load := bytes * 8 / (c.Duration.Seconds() * float64(c.Hosts) * float64(c.LinkRate))
	if math.Abs(load-c.Load) > 0.03*c.Load {
		t.Errorf("offered load %.4f, want %.2f", load, c.Load)
	}
	t.Logf("%d flows (λ %.0f/s), offered load %.4f", len(flows), lam, load)

	// Uniform sources and destinations: each host within 5 σ of n/Hosts.
	per := n / float64(c.Hosts)
	for h := range c.Hosts {
		for _, got := range []int{src[h], dst[h]} {
			if math.Abs(float64(got)-per) > 5*math.Sqrt(per) {
				t.Errorf("host %d: %d flows as source, %d as destination, want about %.0f", h, src[h], dst[h], per)
			}
		}
	}
}

func TestIncast(t *testing.T) {
	c := bcube41(t)
	c.Incast = &Incast{Senders: 8, Size: 1_000_000, Period: 10 * time.Millisecond, Start: 5 * time.Millisecond}
	flows := generate(t, c)
	checkSchedule(t, c, flows)
	groups := map[int][]Flow{}
	for _, f := range flows {
		if f.Kind == KindIncast {
			groups[f.Group] = append(groups[f.Group], f)
		}
	}
	if len(groups) != 100 {
		t.Fatalf("%d incast events, want 100 (5 ms, 15 ms, ... 995 ms)", len(groups))
	}
	receivers := map[int]bool{}
	for g := 1; g <= 100; g++ {
		fs := groups[g]
		if len(fs) != 8 {
			t.Fatalf("group %d: %d flows, want 8", g, len(fs))
		}
		at := c.Incast.Start + time.Duration(g-1)*c.Incast.Period
		senders := map[int]bool{}
		for _, f := range fs {
			if f.Dst != fs[0].Dst || f.Start != at || f.Size != 1_000_000 || f.Phase != 0 {
				t.Errorf("group %d: flow %+v, want %v to h%d", g, f, at, fs[0].Dst)
			}
			senders[f.Src] = true
		}
		if len(senders) != 8 || senders[fs[0].Dst] {
			t.Errorf("group %d: senders %v, receiver %d", g, senders, fs[0].Dst)
		}
		receivers[fs[0].Dst] = true
	}
	// A hundred draws among 16 hosts leave none out but by a fluke.
	if len(receivers) < 12 {
		t.Errorf("only %d distinct receivers in 100 events", len(receivers))
	}

	// Every host but the receiver: the largest incast there is.
	c.Load, c.Incast.Senders = 0, 15
	for _, f := range generate(t, c) {
		if f.Kind != KindIncast {
			t.Fatalf("flow %+v without background", f)
		}
	}
}

// Trees: four incasts at each instant, with four distinct roots, none of
// them a sender of any tree; too many trees or senders is refused.
func TestIncastTrees(t *testing.T) {
	c := bcube41(t)
	c.Incast = &Incast{Senders: 3, Size: 100_000, Period: 100 * time.Millisecond, Trees: 4}
	flows := generate(t, c)
	checkSchedule(t, c, flows)
	byStart := map[time.Duration]map[int][]Flow{}
	for _, f := range flows {
		if f.Kind != KindIncast {
			continue
		}
		if byStart[f.Start] == nil {
			byStart[f.Start] = map[int][]Flow{}
		}
		byStart[f.Start][f.Group] = append(byStart[f.Start][f.Group], f)
	}
	if len(byStart) != 10 {
		t.Fatalf("%d incast instants, want 10", len(byStart))
	}
	for at, trees := range byStart {
		if len(trees) != 4 {
			t.Fatalf("%v: %d trees, want 4", at, len(trees))
		}
		roots := map[int]bool{}
		for _, fs := range trees {
			roots[fs[0].Dst] = true
		}
		if len(roots) != 4 {
			t.Errorf("%v: roots %v, want 4 distinct", at, roots)
		}
		for g, fs := range trees {
			senders := map[int]bool{}
			for _, f := range fs {
				if f.Dst != fs[0].Dst || roots[f.Src] {
					t.Errorf("%v tree %d: flow %d -> %d (roots %v)", at, g, f.Src, f.Dst, roots)
				}
				senders[f.Src] = true
			}
			if len(senders) != 3 {
				t.Errorf("%v tree %d: senders %v, want 3 distinct", at, g, senders)
			}
		}
	}
	for _, in := range []Incast{{Senders: 13, Size: 1, Period: time.Second, Trees: 4}, {Senders: 1, Size: 1, Period: time.Second, Trees: 16}} {
		c.Incast = &in
		if err := c.Validate(); err == nil {
			t.Errorf("%+v on 16 hosts: no error", in)
		}
	}
}

// Long flows: started together between distinct hosts, every host at
// most one end, without changing the background.
func TestLongFlows(t *testing.T) {
	c := bcube41(t)
	bare := generate(t, c)
	c.Long = &Long{Flows: 3, Size: 50_000_000, Start: 10 * time.Millisecond}
	flows := generate(t, c)
	checkSchedule(t, c, flows)
	ends := map[int]bool{}
	var long, other []Flow
	for _, f := range flows {
		if f.Kind != KindLong {
			other = append(other, f)
			continue
		}
		long = append(long, f)
		if f.Size != 50_000_000 || f.Start != 10*time.Millisecond || ends[f.Src] || ends[f.Dst] || f.Src == f.Dst {
			t.Errorf("long flow %+v (ends so far %v)", f, ends)
		}
		ends[f.Src], ends[f.Dst] = true, true
	}
	if len(long) != 3 || len(other) != len(bare) {
		t.Fatalf("%d long flows and %d others, want 3 and %d", len(long), len(other), len(bare))
	}
	for i := range other {
		if a, b := other[i], bare[i]; a.Src != b.Src || a.Dst != b.Dst || a.Size != b.Size || a.Start != b.Start {
			t.Fatalf("background flow %d changed: %+v, was %+v", i, a, b)
		}
	}
	c.Long = &Long{Flows: 9, Size: 1}
	if err := c.Validate(); err == nil {
		t.Error("9 long flows on 16 hosts: no error")
	}
}

// phases splits a pattern schedule by group and phase.
func phases(flows []Flow, kind Kind) map[int][2][]Flow {
	m := map[int][2][]Flow{}
	for _, f := range flows {
		if f.Kind == kind {
			g := m[f.Group]
			g[f.Phase] = append(g[f.Phase], f)
			m[f.Group] = g
		}
	}
	return m
}

func TestPatternPS(t *testing.T) {
	c := bcube41(t)
	c.Pattern = &Pattern{Kind: KindPS, Period: 100 * time.Millisecond, Size: 64_000}
	flows := generate(t, c)
	checkSchedule(t, c, flows)
	groups := phases(flows, KindPS)
	if len(groups) != 10 {
		t.Fatalf("%d events, want 10", len(groups))
	}
	for g := 1; g <= 10; g++ {
		push, bcast := groups[g][0], groups[g][1]
		if len(push) != 15 || len(bcast) != 15 {
			t.Fatalf("group %d: %d push and %d broadcast flows, want 15 each", g, len(push), len(bcast))
		}
		at := time.Duration(g-1) * 100 * time.Millisecond
		server := push[0].Dst
		var pushers, receivers []int
		for _, f := range push {
			if f.Dst != server || f.Start != at || f.Size != 64_000 {
				t.Errorf("group %d push: %+v", g, f)
			}
			pushers = append(pushers, f.Src)
		}
		for _, f := range bcast {
			if f.Src != server || f.Start != at+50*time.Millisecond || f.Size != 64_000 {
				t.Errorf("group %d broadcast: %+v", g, f)
			}
			receivers = append(receivers, f.Dst)
		}
		slices.Sort(pushers)
		slices.Sort(receivers)
		var others []int
		for h := range 16 {
			if h != server {
				others = append(others, h)
			}
		}
		if !slices.Equal(pushers, others) || !slices.Equal(receivers, others) {
			t.Errorf("group %d: server %d, pushers %v, broadcast to %v; want every other host", g, server, pushers, receivers)
		}
	}

	// Sharded: 3 servers, 5 workers; a gap past the period.
	c.Load = 0
	c.Pattern = &Pattern{Kind: KindPS, Period: 100 * time.Millisecond, Gap: 150 * time.Millisecond, Size: 1000, Many: 5, Few: 3}
	flows = generate(t, c)
	checkSchedule(t, c, flows)
	groups = phases(flows, KindPS)
	if len(groups) != 9 { // the tenth event's broadcast would start at 1.05 s
		t.Fatalf("%d events, want 9", len(groups))
	}
	for g, ph := range groups {
		servers, workers := map[int]bool{}, map[int]bool{}
		pairs := map[[2]int]bool{}
		for _, f := range ph[0] {
			servers[f.Dst], workers[f.Src] = true, true
			pairs[[2]int{f.Src, f.Dst}] = true
		}
		for _, f := range ph[1] {
			if !pairs[[2]int{f.Dst, f.Src}] {
				t.Errorf("group %d: broadcast %d->%d has no push", g, f.Src, f.Dst)
			}
		}
		if len(servers) != 3 || len(workers) != 5 || len(pairs) != 15 || len(ph[1]) != 15 {
			t.Errorf("group %d: %d servers, %d workers, %d pushes, %d broadcasts", g, len(servers), len(workers), len(pairs), len(ph[1]))
		}
		for s := range servers {
			if workers[s] {
				t.Errorf("group %d: host %d is server and worker", g, s)
			}
		}
	}
}

func TestPatternMoE(t *testing.T) {
	c := bcube41(t)
	c.Load = 0
	c.Pattern = &Pattern{Kind: KindMoE, Period: 10 * time.Millisecond, Size: 32_000}
	if p := c.Pattern.Resolved(16); p.Few != 4 || p.Many != 12 || p.TopK != 2 || p.Gap != 5*time.Millisecond {
		t.Fatalf("defaults for 16 hosts: %+v", p)
	}
	flows := generate(t, c)
	checkSchedule(t, c, flows)
	groups := phases(flows, KindMoE)
	if len(groups) != 100 {
		t.Fatalf("%d events, want 100", len(groups))
	}
	used := map[int]int{} // how often each expert slot is used, over all events
	for g, ph := range groups {
		dispatch, combine := ph[0], ph[1]
		if len(dispatch) != 24 || len(combine) != 24 {
			t.Fatalf("group %d: %d dispatch and %d combine flows, want 24 each", g, len(dispatch), len(combine))
		}
		experts := map[int]bool{}
		perSender := map[int][]int{}
		for i, f := range dispatch {
			experts[f.Dst] = true
			perSender[f.Src] = append(perSender[f.Src], f.Dst)
			// Combine mirrors dispatch, flow by flow, Gap later.
			if b := combine[i]; b.Src != f.Dst || b.Dst != f.Src || b.Start != f.Start+5*time.Millisecond || b.Size != f.Size {
				t.Errorf("group %d: dispatch %+v, combine %+v", g, f, b)
			}
		}
		if len(experts) > 4 || len(perSender) != 12 {
			t.Errorf("group %d: %d experts, %d senders", g, len(experts), len(perSender))
		}
		for s, es := range perSender {
			if experts[s] || len(es) != 2 || es[0] == es[1] {
				t.Errorf("group %d: sender %d (an expert: %v) dispatches to %v", g, s, experts[s], es)
			}
		}
		used[len(experts)]++
	}
	// Twelve senders picking 2 of 4 experts reach all four nearly always.
	if used[4] < 95 {
		t.Errorf("events by number of experts reached: %v", used)
	}
}

func TestDeterminism(t *testing.T) {
	c := bcube41(t)
	c.Incast = &Incast{Senders: 8, Size: 1_000_000, Period: 50 * time.Millisecond}
	c.Pattern = &Pattern{Kind: KindMoE, Period: 100 * time.Millisecond, Size: 10_000}
	a, b := generate(t, c), generate(t, c)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("the same config gave two schedules")
	}
	c.Seed = 2
	if d := generate(t, c); reflect.DeepEqual(a, d) {
		t.Fatal("seeds 1 and 2 gave the same schedule")
	}

	// Each part of the schedule changes with the seed.
	c.Seed = 1
	other := c
	other.Seed = 2
	for _, kind := range []Kind{KindPoisson, KindIncast, KindMoE} {
		if reflect.DeepEqual(strip(generate(t, c), kind), strip(generate(t, other), kind)) {
			t.Errorf("%s flows are the same under seeds 1 and 2", kind)
		}
	}

	// The background does not change when an incast or a pattern joins.
	bare := c
	bare.Incast, bare.Pattern = nil, nil
	if !reflect.DeepEqual(strip(generate(t, bare), KindPoisson), strip(a, KindPoisson)) {
		t.Error("adding an incast and a pattern changed the background")
	}
	// Nor does the incast when the pattern goes.
	noPattern := c
	noPattern.Pattern = nil
	if !reflect.DeepEqual(strip(generate(t, noPattern), KindIncast), strip(a, KindIncast)) {
		t.Error("removing the pattern changed the incast")
	}
}

// strip keeps the flows of one kind without their IDs and groups, which
// depend on the other kinds present.
func strip(flows []Flow, kind Kind) []Flow {
	var out []Flow
	for _, f := range flows {
		if f.Kind == kind {
			f.ID, f.Group = 0, 0
			out = append(out, f)
		}
	}
	return out
}

// TestGolden pins the schedule of one seed: a change here changes every
// experiment that reuses a seed, and must be deliberate.
func TestGolden(t *testing.T) {
	c := bcube41(t)
	c.Duration = 100 * time.Millisecond
	c.CDF = mustCDF(t, "hadoop")
	c.Seed = 42
	c.Incast = &Incast{Senders: 4, Size: 1_000_000, Period: 20 * time.Millisecond}
	c.Pattern = &Pattern{Kind: KindPS, Period: 30 * time.Millisecond, Size: 50_000, Many: 6}
	flows := generate(t, c)
	h := fnv.New64a()
	for _, f := range flows {
		for _, v := range []int64{int64(f.ID), int64(f.Src), int64(f.Dst), f.Size, int64(f.Start), int64(f.Group), int64(f.Phase)} {
			h.Write(binary.LittleEndian.AppendUint64(nil, uint64(v)))
		}
		h.Write([]byte(f.Kind))
	}
	const want = 0x36c58abd26e7b03e
	if got := h.Sum64(); got != want {
		t.Errorf("%d flows hash to %#x, want %#x; first %+v", len(flows), got, uint64(want), flows[0])
	}
}

func TestValidate(t *testing.T) {
	ws := mustCDF(t, "websearch")
	ok := Config{Hosts: 16, LinkRate: 1e9, LinksPerHost: 2, Load: 0.3, CDF: ws, Duration: time.Second}
	for _, tc := range []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"one host", func(c *Config) { c.Hosts = 1 }, "hosts 1"},
		{"no links", func(c *Config) { c.LinksPerHost = 0 }, "links per host"},
		{"no duration", func(c *Config) { c.Duration = 0 }, "duration"},
		{"load above 1", func(c *Config) { c.Load = 1.5 }, "load 1.5"},
		{"negative load", func(c *Config) { c.Load = -0.1 }, "load -0.1"},
		{"NaN load", func(c *Config) { c.Load = math.NaN() }, "load NaN"},
		{"no cdf", func(c *Config) { c.CDF = nil }, "flow-size distribution"},
		{"no rate", func(c *Config) { c.LinkRate = 0 }, "link rate"},
		{"no traffic", func(c *Config) { c.Load = 0 }, "no traffic"},
		{"bad basis", func(c *Config) { c.Basis = 7 }, "load basis"},
		{"incast too wide", func(c *Config) { c.Incast = &Incast{Senders: 16, Size: 1, Period: time.Millisecond} }, "incast senders 16"},
		{"incast no size", func(c *Config) { c.Incast = &Incast{Senders: 2, Period: time.Millisecond} }, "incast size"},
		{"incast no period", func(c *Config) { c.Incast = &Incast{Senders: 2, Size: 1} }, "incast period"},
		{"incast after the run", func(c *Config) { c.Incast = &Incast{Senders: 2, Size: 1, Period: 1, Start: time.Second} }, "incast start"},
		{"pattern kind", func(c *Config) { c.Pattern = &Pattern{Kind: KindIncast, Period: 1, Size: 1} }, "pattern \"incast\""},
		{"pattern no period", func(c *Config) { c.Pattern = &Pattern{Kind: KindPS, Size: 1} }, "pattern period"},
		{"pattern no size", func(c *Config) { c.Pattern = &Pattern{Kind: KindPS, Period: 1} }, "pattern size"},
		{"pattern too many", func(c *Config) { c.Pattern = &Pattern{Kind: KindPS, Period: 1, Size: 1, Many: 15, Few: 2} }, "15 and 2 hosts"},
		{"pattern top-k", func(c *Config) { c.Pattern = &Pattern{Kind: KindMoE, Period: 1, Size: 1, Few: 2, TopK: 3} }, "top-k 3"},
		{"pattern never", func(c *Config) { c.Pattern = &Pattern{Kind: KindPS, Period: 1, Size: 1, Gap: time.Second} }, "no event fits"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.Validate()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Validate = %v, want an error with %q", err, tc.want)
			}
			if _, gerr := Generate(c); gerr == nil {
				t.Fatal("Generate accepted it")
			}
		})
	}
	if err := ok.Validate(); err != nil {
		t.Fatalf("Validate(ok) = %v", err)
	}
}

func TestMaxFlows(t *testing.T) {
	c := bcube41(t)
	c.MaxFlows = 100
	if _, err := Generate(c); err == nil || !strings.Contains(err.Error(), "limit of 100") {
		t.Fatalf("Generate = %v, want the limit", err)
	}
	c.MaxFlows = int(c.Expected() * 2)
	generate(t, c)
}

func TestParseNames(t *testing.T) {
	for _, k := range []Kind{KindPoisson, KindIncast, KindPS, KindMoE} {
		if got, err := ParseKind(string(k)); got != k || err != nil {
			t.Errorf("ParseKind(%q) = %q, %v", k, got, err)
		}
	}
	if _, err := ParseKind("mesh"); err == nil {
		t.Error("ParseKind(mesh) accepted")
	}
	for _, b := range []Basis{PerLink, PerHost} {
		if got, err := ParseBasis(b.String()); got != b || err != nil {
			t.Errorf("ParseBasis(%q) = %v, %v", b, got, err)
		}
	}
	if _, err := ParseBasis("nic"); err == nil {
		t.Error("ParseBasis(nic) accepted")
	}
}

func TestStreams(t *testing.T) {
	// intN is uniform: 600k draws over 6 values within 5 σ of 100k each.
	s := newStream(7, streamPoisson)
	counts := make([]int, 6)
	for range 600_000 {
		counts[s.intN(6)]++
	}
	for v, n := range counts {
		if math.Abs(float64(n)-100_000) > 5*math.Sqrt(100_000*5.0/6) {
			t.Errorf("intN(6) gave %d %d times", v, n)
		}
	}
	// Streams of neighbouring seeds and components start apart.
	seen := map[uint64]bool{}
	for seed := range uint64(4) {
		for comp := range uint64(4) {
			v := newStream(seed, comp).r.Uint64()
			if seen[v] {
				t.Fatalf("seed %d component %d repeats a first value", seed, comp)
			}
			seen[v] = true
		}
	}
}

func BenchmarkGenerate(b *testing.B) {
	for _, name := range BuiltinCDFs() {
		b.Run(name, func(b *testing.B) {
			c := bcube41(b)
			c.CDF = mustCDF(b, name)
			c.Incast = &Incast{Senders: 8, Size: 1_000_000, Period: 10 * time.Millisecond}
			b.ReportAllocs()
			var n int
			for b.Loop() {
				n = len(generate(b, c))
			}
			b.ReportMetric(float64(n), "flows/op")
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/flow")
		})
	}
}

func TestDefaultIncastPeriod(t *testing.T) {
	for _, c := range []struct {
		rate    uint64
		senders int
		size    int64
		want    time.Duration
	}{
		{100_000_000, 8, 1_000_000, 2560 * time.Millisecond},
		{10_000_000, 8, 1_000_000, 25600 * time.Millisecond},
		{1_000_000_000, 1, 1000, time.Millisecond}, // 32 us, rounded up
		{0, 8, 1_000_000, 0},
	} {
		if got := DefaultIncastPeriod(c.rate, c.senders, c.size); got != c.want {
			t.Errorf("DefaultIncastPeriod(%d, %d, %d) = %v, want %v", c.rate, c.senders, c.size, got, c.want)
		}
	}
}

// MoE with skewed experts and a combine that waits for the dispatch:
// every sender still uses TopK distinct experts, the schedule is the
// same for the same seed, the most popular expert of an event takes a
// larger share of the dispatch than under uniform choice, and every
// combine flow names its event's group as the one it waits for (its
// Start is the dispatch's: Gap 0).
func TestPatternMoESkewWait(t *testing.T) {
	c := bcube41(t)
	c.Load = 0
	p := Pattern{Kind: KindMoE, Period: 10 * time.Millisecond, Size: 32_000, TopK: 2, Skew: 1.5, Wait: true}
	c.Pattern = &p
	if r := p.Resolved(16); r.Gap != 0 || r.Few != 4 {
		t.Fatalf("resolved: %+v", r)
	}
	flows := generate(t, c)
	checkSchedule(t, c, flows)
	if !reflect.DeepEqual(flows, generate(t, c)) {
		t.Fatal("the same config gave two schedules")
	}
	hottest := func(flows []Flow) float64 { // mean share of an event's dispatch its busiest expert takes
		groups := phases(flows, KindMoE)
		sum := 0.0
		for g, ph := range groups {
			per := map[int]int{}
			perSender := map[int]map[int]bool{}
			for _, f := range ph[0] {
				per[f.Dst]++
				if perSender[f.Src] == nil {
					perSender[f.Src] = map[int]bool{}
				}
				perSender[f.Src][f.Dst] = true
				if f.After != 0 {
					t.Fatalf("group %d: dispatch %+v waits", g, f)
				}
			}
			for s, es := range perSender {
				if len(es) != 2 {
					t.Fatalf("group %d: sender %d uses experts %v, want 2 distinct", g, s, es)
				}
			}
			for i, f := range ph[1] {
				d := ph[0][i]
				if wantAfter := map[bool]int{true: g, false: 0}[p.Wait]; f.After != wantAfter || f.Src != d.Dst || f.Dst != d.Src {
					t.Fatalf("group %d: combine %+v for dispatch %+v", g, f, d)
				}
				if p.Wait && f.Start != d.Start {
					t.Fatalf("group %d: combine starts %v, dispatch %v", g, f.Start, d.Start)
				}
			}
			most := 0
			for _, n := range per {
				most = max(most, n)
			}
			sum += float64(most) / float64(len(ph[0]))
		}
		return sum / float64(len(groups))
	}
	skewed := hottest(flows)
	p.Skew, p.Wait = 0, false
	uniform := hottest(generate(t, c))
	// Weights 1, 0.35, 0.19, 0.13: the top expert is among the two of
	// about 87% of the senders (a share of 0.435 of the 2 x 12 flows;
	// 0.5 at most); uniformly each expert is among half of them, and the
	// busiest of four about a third.
	if skewed < 0.41 || uniform > 0.37 {
		t.Fatalf("busiest expert's share of the dispatch: %.3f skewed, %.3f uniform", skewed, uniform)
	}
}

// zipf draws rank r with probability 1/r^s over the sum, and k distinct
// ranks when asked for k.
func TestZipf(t *testing.T) {
	z := newZipf(4, 1)
	s := newStream(7, streamPattern)
	ranked := []int{10, 11, 12, 13}
	count := map[int]int{}
	const n = 200_000
	for range n {
		count[z.choose(s, ranked, 1)[0]]++
	}
	total := 1 + 0.5 + 1.0/3 + 0.25
	for r, x := range ranked {
		want := 1 / float64(r+1) / total
		if got := float64(count[x]) / n; math.Abs(got-want) > 0.01 {
			t.Errorf("rank %d drawn %.3f of the time, want %.3f", r+1, got, want)
		}
	}
	for range 1000 {
		got := z.choose(s, ranked, 3)
		if len(got) != 3 || got[0] == got[1] || got[1] == got[2] || got[0] == got[2] {
			t.Fatalf("choose 3: %v", got)
		}
	}
	if !slices.Equal(ranked, []int{10, 11, 12, 13}) {
		t.Fatalf("the ranking changed: %v", ranked)
	}
}
