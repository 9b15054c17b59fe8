package main

// One rperf test:
//
//  1. find the NICs' control sockets (the lab's state, by --lab and
//     --node or the network namespace, or --socket) and the destination
//     server; a side is a NIC that sends: this server's (to DST), DST's
//     (to this server, -R), or both (--bidir);
//  2. POST /rdma on every side: its hostd starts the flows and names them;
//  3. every interval, GET /rdma?id=... on every side: the flows' counters
//     become an interval (omitted from the summary while -O lasts); in
//     between, poll for the end of the test;
//  4. when every flow has ended (done, failed), or has made no progress
//     for --timeout, summarise; when the user interrupts, timed flows are
//     stopped as their time would stop them (POST /rdma/stop) and the
//     test ends as usual, sized ones are aborted (DELETE /rdma).

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/api"
)

// errInvalidRun: the test ran, but the emulation's health says its
// numbers are not the fabric's (exit status 3).
var errInvalidRun = errors.New("invalid run: the emulation did not keep up")

// pollEvery is how often rperf looks for the end of the test between
// interval reports.
const pollEvery = 50 * time.Millisecond

// stopGrace is how long stopped flows get to have their last bytes
// acknowledged after an interrupt.
const stopGrace = 5 * time.Second

// side is a NIC that sends in the test, its control socket and its flows.
type side struct {
	role   string // "" with one direction; "TX-C" (this server's) or "RX-C" (DST's) with --bidir
	name   string // the server whose NIC it is, h<i>; "" with --socket alone
	sock   string
	client *http.Client
	dst    int // where its flows go
	ids    string
	n      int // its flows
}

type test struct {
	o     *options
	self  int // this server's index; -1 when unknown (--socket alone)
	dst   int
	dstIP string
	local *side // this server's NIC
	sides []*side
	// spec is the lab's (nil: --socket alone, no lab known): its scale
	// model gives the FCTs in the target's time.
	spec *lab.Spec
}

func newSide(sock string, dst int) *side {
	return &side{sock: sock, dst: dst, client: &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
	}}}
}

func newTest(o *options) (*test, error) {
	t := &test{o: o, self: -1}
	dst, err := parseDst(o.dst)
	if err != nil {
		return nil, usageError{err}
	}
	t.dst, t.dstIP = dst, bcube.ServerIP(dst).String()
	sock := o.socket
	var st *lab.State
	if sock == "" || o.reverse || o.bidir {
		if o.lab == "" || o.node == "" {
			labName, node, err := identify()
			if err != nil {
				why := "which lab and server is this?"
				if sock != "" {
					why = "-R and --bidir reach DST's NIC through the lab:"
				}
				// Where to run from was not given: usage, as a missing flag.
				return nil, usageError{fmt.Errorf("%s %w; give --lab and --node", why, err)}
			}
			if o.lab == "" {
				o.lab = labName
			}
			if o.node == "" {
				o.node = node
			}
		}
		if st, err = lab.LoadState(o.runRoot, o.lab); err != nil {
			return nil, err
		}
		n, ok := st.Node(o.node)
		if !ok || n.Kind != lab.KindServer {
			return nil, usageError{fmt.Errorf("--node %q: lab %s has servers h0..h%d", o.node, o.lab, servers(st)-1)}
		}
		if d, ok := st.Node(bcube.HostName(dst)); !ok || d.Kind != lab.KindServer {
			return nil, usageError{fmt.Errorf("-c %s: lab %s has servers h0..h%d", o.dst, o.lab, servers(st)-1)}
		}
		if bcube.HostName(dst) == o.node {
			return nil, usageError{fmt.Errorf("-c %s: that is this server; give another", o.dst)}
		}
		if o.order != "" {
			if t, err := bcube.New(st.Spec.N, st.Spec.K); err == nil {
				if p, err := t.ParsePolicy(o.order); err != nil || p.Fixed == nil {
					return nil, usageError{fmt.Errorf("--order %q: want a permutation of the levels 0..%d, such as 1,0", o.order, t.K())}
				}
			}
		}
		t.spec = &st.Spec
		if sock == "" {
			sock = n.Control
		}
		if t.self, err = parseDst(o.node); err != nil {
			return nil, fmt.Errorf("--node: %w", err)
		}
	}
	t.local = newSide(sock, dst)
	t.local.name = o.node
	if o.reverse || o.bidir {
		rn, ok := st.Node(bcube.HostName(dst))
		if !ok || rn.Kind != lab.KindServer {
			return nil, fmt.Errorf("lab %s has no server h%d", o.lab, dst)
		}
		remote := newSide(rn.Control, t.self)
		remote.name = bcube.HostName(dst)
		if o.reverse {
			t.sides = []*side{remote}
		} else {
			t.local.role, remote.role = "TX-C", "RX-C"
			t.sides = []*side{t.local, remote}
		}
	} else {
		t.sides = []*side{t.local}
	}
	return t, nil
}

// usageError is a bad flag or argument found once the lab is known
// (exit status 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// servers is how many servers lab st has.
func servers(st *lab.State) int {
	n := 0
	for _, x := range st.Nodes {
		if x.Kind == lab.KindServer {
			n++
		}
	}
	return n
}

// parseDst reads h<i> or a fabric address.
func parseDst(s string) (int, error) {
	if rest, ok := strings.CutPrefix(s, "h"); ok {
		if i, err := strconv.Atoi(rest); err == nil && i >= 0 {
			return i, nil
		}
	}
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() || !bcube.Prefix.Contains(a) {
		return 0, fmt.Errorf("-c %q: want a server, h<i> or its address in %v", s, bcube.Prefix)
	}
	b, base := a.As4(), bcube.Base.As4()
	return int(uint32(b[2])<<8|uint32(b[3])) + int(b[1]-base[1])<<16, nil
}

// identify reads the lab and node from the network namespace's name,
// <lab>-<node>.
func identify() (string, string, error) {
	ns, err := netnsName()
	if err != nil {
		return "", "", err
	}
	labName, node, ok := strings.Cut(ns, "-")
	if !ok || !strings.HasPrefix(node, "h") {
		return "", "", fmt.Errorf("network namespace %q is not a lab server's (<lab>-h<i>)", ns)
	}
	return labName, node, nil
}

// call performs method path with body (nil: none) on the side's control
// socket and decodes a 200 answer into out.
func (s *side) call(ctx context.Context, method, path string, body, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, "http://hostd"+path, rd)
	if err != nil {
		return err
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("%s does not answer: %w", s.nic(), rootCause(err))
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("%s does not answer: %w", s.nic(), rootCause(err))
	}
	if resp.StatusCode != http.StatusOK {
		// The NIC's own words: what it refused and why.
		return fmt.Errorf("%s refused: %s", s.nic(), strings.TrimSpace(string(b)))
	}
	return json.Unmarshal(b, out)
}

// nic names the side's NIC for the user: the server it belongs to.
func (s *side) nic() string {
	if s.name != "" {
		return s.name + "'s NIC (hostd)"
	}
	return "the NIC (hostd)"
}

// rootCause is the system's reason a call failed (connection refused,
// no such file: the daemon is not running), without net/http's and
// net's wrappers, which name the socket's path.
func rootCause(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return errno
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return context.DeadlineExceeded
	}
	return err
}

// request is what every side's NIC is asked to start.
func (t *test) request(dst int) api.RDMARequest {
	o := t.o
	dcqcn := !o.noDCQCN
	req := api.RDMARequest{Dst: dst, Bytes: o.bytes, Mode: o.mode, DCQCN: &dcqcn, Order: o.order, MTU: o.mtu,
		Flows: o.parallel, RateBps: int64(o.rateBps), Lose: o.lose}
	switch {
	case o.forever:
		req.UntilStopped = true
	case o.bytes == 0:
		req.Duration = int64(o.duration + o.omit)
	}
	return req
}

// start posts req to every side and returns the flows, in side order.
func (t *test) start(ctx context.Context, req func(s *side) api.RDMARequest) ([]api.RDMAFlow, []string, error) {
	var all []api.RDMAFlow
	var roles []string
	for _, s := range t.sides {
		var flows []api.RDMAFlow
		if err := s.call(ctx, http.MethodPost, "/rdma", req(s), &flows); err != nil {
			t.stop(context.Background(), false)
			return nil, nil, err
		}
		if len(flows) == 0 {
			return nil, nil, errors.New("hostd started no flow")
		}
		ids := make([]string, len(flows))
		for i, f := range flows {
			ids[i] = strconv.Itoa(f.ID)
			roles = append(roles, s.role)
		}
		s.ids, s.n = strings.Join(ids, ","), len(flows)
		all = append(all, flows...)
	}
	return all, roles, nil
}

// snapshot reads every side's flows now.
func (t *test) snapshot(ctx context.Context) (snapshot, *api.RDMAReport, error) {
	var snap snapshot
	var first *api.RDMAReport
	for _, s := range t.sides {
		if s.ids == "" {
			continue
		}
		var rep api.RDMAReport
		if err := s.call(ctx, http.MethodGet, "/rdma?id="+s.ids, nil, &rep); err != nil {
			return snapshot{}, nil, err
		}
		if len(rep.Flows) != s.n {
			return snapshot{}, nil, fmt.Errorf("hostd reports %d of the %d flows it started (restarted?)", len(rep.Flows), s.n)
		}
		snap.at = max(snap.at, rep.NowNs)
		snap.flows = append(snap.flows, rep.Flows...)
		if first == nil {
			first = &rep
		}
	}
	return snap, first, nil
}

// stop ends what still runs on every side: gracefully (POST /rdma/stop:
// timed flows end as their time would) or not (DELETE /rdma: aborted).
func (t *test) stop(ctx context.Context, graceful bool) {
	for _, s := range t.sides {
		if s.ids == "" {
			continue
		}
		var answer map[string]int
		if graceful {
			_ = s.call(ctx, http.MethodPost, "/rdma/stop?id="+s.ids, nil, &answer)
		} else {
			_ = s.call(ctx, http.MethodDelete, "/rdma?id="+s.ids, nil, &answer)
		}
	}
}

// run runs an iperf-like test, reporting to rep as it goes; the error
// says why the test failed.
func (t *test) run(ctx context.Context, rep reporter) (err error) {
	o := t.o
	doc := &Document{Intervals: []Interval{}}
	defer func() {
		if err != nil {
			doc.Error = err.Error()
		}
		rep.finish(doc, err)
	}()
	// The emulation's health over the test, when the lab is known (not
	// with --socket alone).
	var before *lab.HealthSample
	if o.lab != "" {
		before, _ = lab.SampleHealth(o.runRoot, o.lab)
	}
	flows, roles, err := t.start(ctx, func(s *side) api.RDMARequest { return t.request(s.dst) })
	if err != nil {
		return err
	}
	t0 := flows[0].StartNs
	for _, f := range flows {
		t0 = min(t0, f.StartNs)
	}
	first, rep0, err := t.snapshot(ctx)
	if err != nil {
		return err
	}
	first.at = t0
	for i := range first.flows {
		first.flows[i] = api.RDMAFlow{ID: flows[i].ID}
	}
	doc.Start = t.startSection(flows, roles, t0, rep0)
	rep.start(doc)

	iv := o.interval
	omitEnd := t0 + int64(o.omit)
	prev := first // at the last interval boundary
	last := first // the latest snapshot
	base := first // where the summary counts from: the end of -O
	omitted := o.omit > 0
	progress := t0 // when some flow last made progress
	k := int64(1)  // the next boundary is t0 + k x interval
	var runErr error
	stopping, stopAt := false, int64(0) // interrupted: flows told to stop, at
	interrupted := ctx.Done()           // nil once handled
	// A timed test's flows stop at planned, and their last bytes are
	// acknowledged a little after: the boundary at (or within a tenth of
	// an interval before) it is not reported on its own, so the last
	// interval runs to the flows' real end instead of leaving a sliver
	// of a few milliseconds whose rate means nothing.
	planned := int64(-1)
	if o.bytes == 0 && !o.forever {
		planned = t0 + int64(o.duration+o.omit)
	}
	for {
		now := time.Now().UnixNano()
		wake := now + int64(pollEvery)
		boundary := int64(-1)
		if iv > 0 {
			boundary = t0 + k*int64(iv)
			if planned >= 0 && boundary >= planned-int64(iv)/10 && !stopping {
				boundary = -1 // the end reports it
			} else {
				wake = min(wake, boundary)
			}
		}
		if omitted {
			wake = min(wake, max(omitEnd, now))
		}
		select {
		case <-interrupted:
			interrupted = nil
			stopping, stopAt = true, time.Now().UnixNano()
			sized := o.bytes > 0
			t.stop(context.Background(), !sized)
			if sized {
				runErr = errors.New("interrupted")
			}
		case <-time.After(time.Duration(wake - now)):
		}
		if runErr != nil {
			break
		}
		snap, _, err := t.snapshot(context.Background())
		if err != nil {
			runErr = err
			break
		}
		if moved(last, snap) {
			progress = snap.at
		}
		last = snap
		ended := allEnded(snap)
		if omitted && snap.at >= omitEnd {
			base, omitted = snap, false
			base.at = omitEnd
		}
		if boundary >= 0 && snap.at >= boundary && !(ended && endOfTest(snap) < boundary) {
			// A late poll may have passed several boundaries: one
			// interval covers them.
			kEnd := k
			for t0+(kEnd+1)*int64(iv) <= snap.at {
				kEnd++
			}
			x := intervalOf(prev, snap, roles, float64((k-1)*int64(iv))/1e9, float64(kEnd*int64(iv))/1e9)
			x.setOmitted(t0+kEnd*int64(iv) <= omitEnd)
			x.setTarget(doc.Start.Model)
			doc.Intervals = append(doc.Intervals, x)
			rep.interval(doc, &doc.Intervals[len(doc.Intervals)-1])
			prev, k = snap, kEnd+1
		}
		if ended {
			if end := endOfTest(snap); iv > 0 && end > prev.at {
				from := float64((k-1)*int64(iv)) / 1e9
				fin := snap
				fin.at = end
				x := intervalOf(prev, fin, roles, from, float64(end-t0)/1e9)
				x.setOmitted(end <= omitEnd)
				x.setTarget(doc.Start.Model)
				if x.Sum.Seconds > 0 {
					doc.Intervals = append(doc.Intervals, x)
					rep.interval(doc, &doc.Intervals[len(doc.Intervals)-1])
				}
			}
			break
		}
		if snap.at-progress > int64(o.timeout) {
			runErr = fmt.Errorf("no flow made progress for %v", o.timeout)
			break
		}
		if stopping && time.Now().UnixNano()-stopAt > int64(stopGrace) {
			runErr = fmt.Errorf("stopped flows did not end within %v", stopGrace)
			break
		}
	}
	if runErr != nil {
		// Stop what still runs; the NICs keep the flows' state.
		t.stop(context.Background(), false)
		if s, _, err := t.snapshot(context.Background()); err == nil {
			last = s
		}
	}
	if omitted { // the test ended within -O: nothing to leave out
		base = first
	}
	doc.End = endOf(last.flows, roles, base, t0, doc.Start.LinkRateBps)
	doc.End.setTarget(doc.Start.Model)
	if before != nil {
		if after, err := lab.SampleHealth(o.runRoot, o.lab); err == nil {
			h := after.Since(before, 0, lab.HealthLimits{})
			doc.End.Health = &h
		}
	}
	rep.end(doc)
	// A failed flow on an invalid run is the emulator's doing (its rings
	// dropped frames a lossless flow then missed): say so, exit 3.
	if err := invalid(doc.End.Health); err != nil && (runErr != nil || doc.End.Failures > 0) {
		return err
	}
	if runErr != nil {
		return runErr
	}
	if doc.End.Failures > 0 {
		var why []string
		for _, f := range last.flows {
			if f.State != api.RDMADone {
				why = append(why, fmt.Sprintf("flow %d %s: %s", f.ID, f.State, f.Failure))
			}
		}
		return fmt.Errorf("%d of %d flows failed: %s", doc.End.Failures, len(last.flows), strings.Join(why, "; "))
	}
	return invalid(doc.End.Health)
}

// invalid is errInvalidRun with the health's problems when h says the
// emulation did not keep up, else nil (also when the lab is not known).
func invalid(h *lab.Health) error {
	if h == nil || h.Valid {
		return nil
	}
	return fmt.Errorf("%w: %s", errInvalidRun, strings.Join(h.Problems, "; "))
}

// pathRate is the link rate a test's utilisation counts: the slowest of
// its flows' paths' slowest links (a Rail-only fabric's levels differ),
// or the NIC's line rate when the NIC does not say.
func pathRate(flows []api.RDMAFlow, line int64) int64 {
	rate := int64(0)
	for _, f := range flows {
		if f.PathRateBps > 0 && (rate == 0 || f.PathRateBps < rate) {
			rate = f.PathRateBps
		}
	}
	if rate == 0 {
		return line
	}
	return rate
}

// startSection describes the test and its flows.
func (t *test) startSection(flows []api.RDMAFlow, roles []string, t0 int64, rep *api.RDMAReport) Start {
	o := t.o
	s := Start{
		Version:      "rperf (bcfab)",
		Timestamp:    Timestamp{Time: time.Unix(0, t0).UTC().Format(time.RFC1123), Timesecs: t0 / 1e9},
		Lab:          o.lab,
		Node:         o.node,
		ConnectingTo: ConnectingTo{Host: t.dstIP, Server: bcube.HostName(t.dst)},
		LinkRateBps:  pathRate(flows, rep.Params.LineRateBps),
		TestStart: TestStart{Protocol: "RoCEv2", Mode: flows[0].Mode.String(), DCQCN: flows[0].DCQCN, MTU: flows[0].MTU,
			NumStreams: len(flows), Bytes: o.bytes, Duration: o.duration.Seconds(), Interval: o.interval.Seconds(), Order: o.order,
			Omit: o.omit.Seconds(), Reverse: o.reverse, Bidir: o.bidir, RateLimitBps: int64(o.rateBps), UntilStopped: o.forever},
		Params: rep.Params,
	}
	if t.spec != nil && t.spec.Dilation > 0 {
		m := t.spec.Model()
		s.Model = &m
		if o.bytes > 0 && t.self >= 0 {
			if tp, err := bcube.New(t.spec.N, t.spec.K); err == nil {
				ideal := lab.WorkloadIdeal(*t.spec, tp, flows[0].MTU)
				s.IdealFCTNs = int64(ideal(t.self, t.dst, o.bytes))
			}
		}
	}
	if o.forever {
		s.TestStart.Duration = 0
	}
	s.setTarget()
	s.Params.DCQCN.Enabled = flows[0].DCQCN
	for i, f := range flows {
		s.Streams = append(s.Streams, StreamInfo{ID: f.ID, Role: roles[i], QP: f.QP, SPort: f.SPort,
			Port: "eth" + strconv.Itoa(f.Port), Queue: f.Queue, Order: f.Order, StartPSN: f.StartPSN, Dst: f.Dst})
	}
	return s
}

// moved reports whether any flow sent or had bytes acknowledged between
// a and b.
func moved(a, b snapshot) bool {
	for i := range b.flows {
		if b.flows[i].AckedBytes != a.flows[i].AckedBytes || b.flows[i].Packets != a.flows[i].Packets {
			return true
		}
	}
	return false
}

func allEnded(s snapshot) bool {
	for _, f := range s.flows {
		if f.State == api.RDMARunning {
			return false
		}
	}
	return true
}

// endOfTest is when the last flow ended (Unix ns).
func endOfTest(s snapshot) int64 {
	end := int64(0)
	for _, f := range s.flows {
		end = max(end, f.EndNs)
	}
	return end
}
