package main

// One rperf test:
//
//  1. find the NIC's control socket (the lab's state, by --lab and
//     --node or the network namespace, or --socket) and the destination
//     server;
//  2. POST /rdma: hostd starts the flows and names them;
//  3. every interval, GET /rdma?id=...: the flows' counters become an
//     interval line; in between, poll for the end of the test;
//  4. when every flow has ended (done, failed), or has made no progress
//     for --timeout, or the user interrupts (the flows are then stopped
//     with DELETE /rdma), summarise.

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
	"time"

	"github.com/bcfab/bcfab/api"
	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/lab"
)

// errInvalidRun: the test ran, but the emulation's health says its
// numbers are not the fabric's (exit status 3).
var errInvalidRun = errors.New("invalid run: the emulation did not keep up")

// pollEvery is how often rperf looks for the end of the test between
// interval reports.
const pollEvery = 50 * time.Millisecond

type test struct {
	o      *options
	sock   string
	dst    int
	dstIP  string
	client *http.Client
}

func newTest(o *options) (*test, error) {
	t := &test{o: o}
	dst, err := parseDst(o.dst)
	if err != nil {
		return nil, err
	}
	t.dst, t.dstIP = dst, bcube.ServerIP(dst).String()
	t.sock = o.socket
	if t.sock == "" {
		if o.lab == "" || o.node == "" {
			labName, node, err := identify()
			if err != nil {
				return nil, fmt.Errorf("which lab and server is this? %w; give --lab and --node", err)
			}
			if o.lab == "" {
				o.lab = labName
			}
			if o.node == "" {
				o.node = node
			}
		}
		st, err := lab.LoadState(o.runRoot, o.lab)
		if err != nil {
			return nil, err
		}
		n, ok := st.Node(o.node)
		if !ok || n.Kind != lab.KindServer {
			return nil, fmt.Errorf("lab %s has no server %q", o.lab, o.node)
		}
		t.sock = n.Control
	}
	t.client = &http.Client{Transport: &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", t.sock)
		},
	}}
	return t, nil
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

// call performs method path with body (nil: none) on the NIC's control
// socket and decodes a 200 answer into out.
func (t *test) call(ctx context.Context, method, path string, body, out any) error {
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
	resp, err := t.client.Do(req)
	if err != nil {
		var ue interface{ Unwrap() error }
		if errors.As(err, &ue) && ue.Unwrap() != nil {
			err = ue.Unwrap()
		}
		return fmt.Errorf("hostd at %s: %w", t.sock, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return fmt.Errorf("hostd at %s: %w", t.sock, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("hostd: %s", strings.TrimSpace(string(b)))
	}
	return json.Unmarshal(b, out)
}

func (t *test) snapshot(ctx context.Context, ids string) (snapshot, *api.RDMAReport, error) {
	var rep api.RDMAReport
	if err := t.call(ctx, http.MethodGet, "/rdma?id="+ids, nil, &rep); err != nil {
		return snapshot{}, nil, err
	}
	if want := strings.Count(ids, ",") + 1; len(rep.Flows) != want {
		return snapshot{}, nil, fmt.Errorf("hostd reports %d of the %d flows it started (restarted?)", len(rep.Flows), want)
	}
	return snapshot{at: rep.NowNs, flows: rep.Flows}, &rep, nil
}

// run runs the test, printing text to w as it goes, and returns the
// document; the error says why the test failed.
func (t *test) run(ctx context.Context, w io.Writer) (*Document, error) {
	o := t.o
	doc := &Document{Intervals: []Interval{}}
	dcqcn := !o.noDCQCN
	req := api.RDMARequest{Dst: t.dst, Bytes: o.bytes, Duration: int64(o.duration), Mode: o.mode, DCQCN: &dcqcn,
		Order: o.order, MTU: o.mtu, Flows: o.parallel}
	// The emulation's health over the test, when the lab is known (not
	// with --socket alone).
	var before *lab.HealthSample
	if o.lab != "" {
		before, _ = lab.SampleHealth(o.runRoot, o.lab)
	}
	var flows []api.RDMAFlow
	if err := t.call(ctx, http.MethodPost, "/rdma", req, &flows); err != nil {
		return doc, err
	}
	if len(flows) == 0 {
		return doc, errors.New("hostd started no flow")
	}
	idList := make([]string, len(flows))
	t0 := flows[0].StartNs
	for i, f := range flows {
		idList[i] = strconv.Itoa(f.ID)
		t0 = min(t0, f.StartNs)
	}
	ids := strings.Join(idList, ",")
	first, rep, err := t.snapshot(ctx, ids)
	if err != nil {
		return doc, err
	}
	first.at = t0
	for i := range first.flows {
		first.flows[i] = api.RDMAFlow{ID: flows[i].ID}
	}
	doc.Start = Start{
		Version:      "rperf (bcfab)",
		Timestamp:    Timestamp{Time: time.Unix(0, t0).UTC().Format(time.RFC1123), Timesecs: t0 / 1e9},
		Lab:          o.lab,
		Node:         o.node,
		ConnectingTo: ConnectingTo{Host: t.dstIP, Server: "h" + strconv.Itoa(t.dst)},
		LinkRateBps:  rep.Params.LineRateBps,
		TestStart: TestStart{Protocol: "RoCEv2", Mode: flows[0].Mode.String(), DCQCN: flows[0].DCQCN, MTU: flows[0].MTU,
			NumStreams: len(flows), Bytes: o.bytes, Duration: o.duration.Seconds(), Interval: o.interval.Seconds(), Order: o.order},
		Params: rep.Params,
	}
	doc.Start.Params.DCQCN.Enabled = flows[0].DCQCN
	for _, f := range flows {
		doc.Start.Streams = append(doc.Start.Streams, StreamInfo{ID: f.ID, QP: f.QP, SPort: f.SPort,
			Port: "eth" + strconv.Itoa(f.Port), Queue: f.Queue, Order: f.Order, StartPSN: f.StartPSN})
	}
	printHeader(w, doc)
	if o.interval > 0 {
		printIntervalHeader(w)
	}

	prev := first  // at the last interval boundary
	last := first  // the latest snapshot
	progress := t0 // when some flow last made progress
	k := int64(1)  // the next boundary is t0 + k x interval
	var runErr error
	for {
		now := time.Now().UnixNano()
		wake := now + int64(pollEvery)
		boundary := int64(-1)
		if o.interval > 0 {
			boundary = t0 + k*int64(o.interval)
			wake = min(wake, boundary)
		}
		select {
		case <-ctx.Done():
			runErr = errors.New("interrupted")
		case <-time.After(time.Duration(wake - now)):
		}
		if runErr != nil {
			break
		}
		snap, _, err := t.snapshot(ctx, ids)
		if err != nil {
			runErr = err
			break
		}
		if moved(last, snap) {
			progress = snap.at
		}
		last = snap
		ended := allEnded(snap)
		if boundary >= 0 && snap.at >= boundary && !(ended && endOfTest(snap) < boundary) {
			// A late poll may have passed several boundaries: one
			// interval covers them.
			kEnd := k
			for t0+(kEnd+1)*int64(o.interval) <= snap.at {
				kEnd++
			}
			iv := intervalOf(prev, snap, float64((k-1)*int64(o.interval))/1e9, float64(kEnd*int64(o.interval))/1e9)
			doc.Intervals = append(doc.Intervals, iv)
			printInterval(w, &iv, len(flows) > 1)
			prev, k = snap, kEnd+1
		}
		if ended {
			if end := endOfTest(snap); o.interval > 0 && end > prev.at {
				from := float64((k-1)*int64(o.interval)) / 1e9
				fin := snap
				fin.at = end
				iv := intervalOf(prev, fin, from, float64(end-t0)/1e9)
				if iv.Sum.Seconds > 0 {
					doc.Intervals = append(doc.Intervals, iv)
					printInterval(w, &iv, len(flows) > 1)
				}
			}
			break
		}
		if snap.at-progress > int64(o.timeout) {
			runErr = fmt.Errorf("no flow made progress for %v", o.timeout)
			break
		}
	}
	if runErr != nil {
		// Stop what still runs; the NIC keeps the flows' state.
		var stopped map[string]int
		_ = t.call(context.Background(), http.MethodDelete, "/rdma?id="+ids, nil, &stopped)
		if s, _, err := t.snapshot(context.Background(), ids); err == nil {
			last = s
		}
	}
	doc.End = endOf(last.flows, t0, doc.Start.LinkRateBps)
	if before != nil {
		if after, err := lab.SampleHealth(o.runRoot, o.lab); err == nil {
			h := after.Since(before, 0, lab.HealthLimits{})
			doc.End.Health = &h
		}
	}
	printSummary(w, doc)
	if runErr != nil {
		return doc, runErr
	}
	if doc.End.Failures > 0 {
		var why []string
		for _, f := range last.flows {
			if f.State != api.RDMADone {
				why = append(why, fmt.Sprintf("flow %d %s: %s", f.ID, f.State, f.Failure))
			}
		}
		return doc, fmt.Errorf("%d of %d flows failed: %s", doc.End.Failures, len(last.flows), strings.Join(why, "; "))
	}
	if h := doc.End.Health; h != nil && !h.Valid {
		return doc, fmt.Errorf("%w: %s", errInvalidRun, strings.Join(h.Problems, "; "))
	}
	return doc, nil
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
