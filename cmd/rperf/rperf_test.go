package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/scale"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/wire/transport"
)

func TestParseFlags(t *testing.T) {
	for _, c := range []struct {
		args  []string
		ok    bool
		check func(o *options) bool
	}{
		{[]string{"-c", "h3"}, true, func(o *options) bool {
			return o.duration == 10*time.Second && o.interval == time.Second && o.mode == "lossless"
		}},
		{[]string{"-c", "h3", "-n", "10M", "-P", "4", "--mode", "irn", "--no-dcqcn", "-J", "-i", "0.5"}, true, func(o *options) bool {
			return o.bytes == 10<<20 && o.duration == 0 && o.parallel == 4 && o.mode == "irn" && o.noDCQCN && o.json && o.interval == 500*time.Millisecond
		}},
		{[]string{"-c", "h3", "-t", "2.5", "-i", "0"}, true, func(o *options) bool { return o.duration == 2500*time.Millisecond && o.interval == 0 }},
		{[]string{"-n", "1M"}, false, nil},
		{[]string{"-c", "h3", "-n", "1M", "-t", "3"}, false, nil},
		{[]string{"-c", "h3", "-P", "0"}, false, nil},
		{[]string{"-c", "h3", "-n", "lots"}, false, nil},
		{[]string{"-c", "h3", "extra"}, false, nil},
		{[]string{"-c", "h3", "--bogus"}, false, nil},
		{[]string{"-c", "h3", "-n", "0"}, false, nil},
		{[]string{"-c", "h3", "-n", "1.5g"}, true, func(o *options) bool { return o.bytes == 3<<29 }},
		{[]string{"-c", "h3", "-n", "40K", "--mode", "irn", "--lose", "39,10", "--lose", "20"}, true, func(o *options) bool {
			return slices.Equal(o.lose, []int{39, 10, 20})
		}},
		{[]string{"-c", "h3", "-t", "1500ms", "--timeout", "2"}, true, func(o *options) bool {
			return o.duration == 1500*time.Millisecond && o.timeout == 2*time.Second
		}},
		{[]string{"--client", "h3", "--bytes", "64K", "--parallel", "2", "--json"}, true, func(o *options) bool {
			return o.bytes == 64<<10 && o.parallel == 2 && o.json
		}},
	} {
		var errb bytes.Buffer
		o, err := parseFlags(c.args, &errb)
		if (err == nil) != c.ok || (c.ok && !c.check(o)) {
			t.Errorf("%q: %+v, %v", c.args, o, err)
		}
	}
}

func TestParseDst(t *testing.T) {
	for s, want := range map[string]int{"h0": 0, "h15": 15, "198.18.0.15": 15, "198.18.1.2": 258, "198.19.0.0": 65536} {
		if got, err := parseDst(s); err != nil || got != want {
			t.Errorf("parseDst(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	for _, s := range []string{"10.0.0.1", "hx", "h-1", "s0.0", "::1"} {
		if _, err := parseDst(s); err == nil {
			t.Errorf("parseDst(%q) accepted", s)
		}
	}
}

func TestFormat(t *testing.T) {
	for _, c := range []struct {
		got, want string
	}{
		{formatBytes(0), "0.00 Bytes"},
		{formatBytes(11.9 * (1 << 20)), "11.9 MBytes"},
		{formatBytes(112 * (1 << 20)), " 112 MBytes"},
		{formatBytes(1.1 * (1 << 30)), "1.10 GBytes"},
		{formatBits(99.8e6), "99.8 Mbits/sec"},
		{formatBits(940e6), " 940 Mbits/sec"},
		{formatBits(1.5e9), "1.50 Gbits/sec"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// fakeNIC serves /rdma as hostd does, with flows that progress at rate
// bytes per second from their start; fail makes the last flow fail half
// way, and stuck makes nothing progress.
type fakeNIC struct {
	mu      sync.Mutex
	flows   []api.RDMAFlow
	reqs    []api.RDMARequest // by flow
	rate    float64
	fail    bool
	stuck   bool
	deleted []string
	stopped []string
}

func (n *fakeNIC) advance(now int64) {
	for i := range n.flows {
		f := &n.flows[i]
		if f.State != api.RDMARunning || n.stuck {
			continue
		}
		el := float64(now-f.StartNs) / 1e9
		size := f.Size
		req := n.reqs[i]
		switch {
		case f.DurationNs > 0:
			size = int64(float64(f.DurationNs) / 1e9 * n.rate)
		case req.UntilStopped && f.Size == 0:
			size = 1 << 62 // until POST /rdma/stop sets it
		}
		f.FirstNs = f.StartNs + 1000
		acked := min(int64(el*n.rate), size)
		f.AckedBytes, f.Bytes, f.Packets = acked, uint64(acked), uint64(acked/int64(f.MTU))
		f.RetxPackets = uint64(acked / (100 << 10))
		f.RetxBytes = f.RetxPackets * uint64(f.MTU)
		f.Injected = uint64(len(req.Lose))
		switch {
		case n.fail && i == len(n.flows)-1 && acked >= size/2:
			f.State, f.Failure, f.EndNs = api.RDMAFailed, "lossless: the receiver saw a PSN gap (packets lost)", now
		case acked >= size:
			f.State, f.EndNs = api.RDMADone, f.StartNs+int64(float64(size)/n.rate*1e9)
			f.Size, f.FCTNs = size, f.EndNs-f.FirstNs
			if req.MsgBytes > 0 {
				f.Messages, f.PeakBps = size/req.MsgBytes, n.rate*8*1.1
				if req.Latency {
					f.Latency = &api.LatencyStats{Samples: int(f.Messages), MinNs: 100e3, MaxNs: 900e3, AvgNs: 200e3, StdevNs: 50e3,
						P50Ns: 180e3, P99Ns: 500e3, P999Ns: 800e3}
				}
			}
		}
	}
}

func (n *fakeNIC) serve(t *testing.T) string {
	sock := filepath.Join(t.TempDir(), "h.sock")
	ln, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /rdma", func(w http.ResponseWriter, r *http.Request) {
		var req api.RDMARequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		if req.Dst == 7 {
			http.Error(w, "rdma: destination h7: want another server of BCube(2,1)", http.StatusBadRequest)
			return
		}
		n.mu.Lock()
		defer n.mu.Unlock()
		now := time.Now().UnixNano()
		var out []api.RDMAFlow
		for range req.Flows {
			id := len(n.flows) + 1
			mode, _ := transport.ParseMode(req.Mode)
			f := api.RDMAFlow{ID: id, QP: uint32(mode+1)<<22 | uint32(id), Dst: req.Dst, Mode: mode, DCQCN: *req.DCQCN, MTU: req.MTU,
				Size: req.Bytes, DurationNs: req.Duration, SPort: uint16(49152 + id), Port: id % 2, Queue: "a0", Order: "0,1",
				State: api.RDMARunning, StartNs: now, RateBps: 100e6, RateLimitBps: req.RateBps, MsgBytes: req.MsgBytes}
			n.flows = append(n.flows, f)
			n.reqs = append(n.reqs, req)
			out = append(out, f)
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("GET /rdma", func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		defer n.mu.Unlock()
		now := time.Now().UnixNano()
		n.advance(now)
		rep := api.RDMAReport{NowNs: now, Params: hostd.TransportParams(scale.Model{Target: scale.Native(100e6), D: 1}, 100e6)}
		if ids := r.URL.Query().Get("id"); ids != "" {
			for _, s := range strings.Split(ids, ",") {
				id, _ := strconv.Atoi(s)
				rep.Flows = append(rep.Flows, n.flows[id-1])
			}
		}
		_ = json.NewEncoder(w).Encode(rep)
	})
	mux.HandleFunc("POST /rdma/stop", func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		defer n.mu.Unlock()
		now := time.Now().UnixNano()
		n.stopped = append(n.stopped, r.URL.Query().Get("id"))
		for i := range n.flows {
			if f := &n.flows[i]; f.State == api.RDMARunning && f.Size == 0 {
				f.Size, f.DurationNs = int64(float64(now-f.StartNs)/1e9*n.rate)+1, 0
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]int{"stopping": 1})
	})
	mux.HandleFunc("DELETE /rdma", func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		defer n.mu.Unlock()
		n.deleted = append(n.deleted, r.URL.Query().Get("id"))
		for i := range n.flows {
			if n.flows[i].State == api.RDMARunning {
				n.flows[i].State, n.flows[i].EndNs = api.RDMAAborted, time.Now().UnixNano()
			}
		}
		_ = json.NewEncoder(w).Encode(map[string]int{"stopped": 1})
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	t.Cleanup(func() { srv.Close() })
	return sock
}

// The text report: a header naming the flows, interval lines with a
// [SUM] line for parallel flows, sender and receiver summaries, and
// "rperf Done.".
func TestTextReport(t *testing.T) {
	n := &fakeNIC{rate: 10 << 20}
	sock := n.serve(t)
	var out, errb bytes.Buffer
	code := run([]string{"--socket", sock, "-c", "198.18.0.3", "-n", "4M", "-P", "2", "-i", "0.1"}, &out, &errb)
	text := out.String()
	t.Log("\n" + text)
	if code != 0 || errb.Len() != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	for _, re := range []string{
		`(?m)^Connecting to host 198\.18\.0\.3 \(h3\) .* mode lossless, DCQCN on, MTU 1024, 2 flows, 4\.00 MBytes per flow$`,
		`(?m)^\[  1\] flow 1, QP 0x400001, UDP source port 49153, leaves by eth1 \(queue a0\), level order 0,1$`,
		`(?m)^\[ ID\] Interval +Transfer +Bitrate +Retr`,
		`(?m)^\[  2\]   0\.00-0\.10   sec  +[0-9.]+ [KM]Bytes +[0-9.]+ Mbits/sec +\d+ +\d+ +100 Mbits/sec$`,
		`(?m)^\[SUM\]   0\.10-0\.20   sec `,
		`(?m)^\[  1\]   0\.00-0\.4\d   sec  4\.00 MBytes +[0-9.]+ Mbits/sec +\d+  sender$`,
		`(?m)^\[SUM\]   0\.00-0\.4\d   sec  8\.00 MBytes .* receiver$`,
		`(?m)^\[  2\] done  FCT [34]\d\d\.\d+ms  retransmitted 40 packets \(40\.0 KBytes\)`,
		`(?m)^Link 100 Mbits/sec: goodput .* of 2 links$`,
		`(?m)^rperf Done\.$`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("no line matches %s", re)
		}
	}
}

// --lose reaches every flow's request, and the packets the NICs dropped
// show in the summary and the document.
func TestLose(t *testing.T) {
	n := &fakeNIC{rate: 10 << 20}
	sock := n.serve(t)
	var out, errb bytes.Buffer
	code := run([]string{"--socket", sock, "-c", "h3", "-n", "1M", "-P", "2", "-i", "0", "--mode", "gbn", "--lose", "3,7"}, &out, &errb)
	if code != 0 || len(n.reqs) != 2 || !slices.Equal(n.reqs[0].Lose, []int{3, 7}) || !slices.Equal(n.reqs[1].Lose, []int{3, 7}) {
		t.Fatalf("exit %d (%s); requests %+v", code, errb.String(), n.reqs)
	}
	if text := out.String(); !strings.Contains(text, "injected losses 2") || !strings.Contains(text, ", injected losses 4") {
		t.Errorf("the report does not say what was injected:\n%s", text)
	}
	out.Reset()
	if code := run([]string{"--socket", sock, "-c", "h3", "-n", "1M", "-i", "0", "--mode", "irn", "--lose", "5", "-J"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var d Document
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if d.End.Injected != 1 || d.End.Streams[0].Injected != 1 {
		t.Errorf("end: injected %d, stream %d", d.End.Injected, d.End.Streams[0].Injected)
	}
}

// -J: one document with start, intervals and end, whose intervals add up
// to the end's bytes.
func TestJSONReport(t *testing.T) {
	n := &fakeNIC{rate: 20 << 20}
	sock := n.serve(t)
	var out, errb bytes.Buffer
	code := run([]string{"--socket", sock, "-c", "h3", "-t", "0.35", "-i", "0.1", "--mode", "irn", "--no-dcqcn", "-J"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var d Document
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatalf("%v\n%s", err, out.String())
	}
	ts := d.Start.TestStart
	if ts.Mode != "irn" || ts.DCQCN || ts.Duration != 0.35 || ts.NumStreams != 1 || d.Start.Params.DCQCN.Enabled || d.Start.LinkRateBps != 100e6 {
		t.Errorf("start: %+v", d.Start)
	}
	if len(d.Intervals) != 4 {
		t.Errorf("%d intervals, want 4 (the last 0.30-0.35)", len(d.Intervals))
	}
	var sum int64
	for _, iv := range d.Intervals {
		sum += iv.Sum.Bytes
		if len(iv.Streams) != 1 || iv.Streams[0].Bytes != iv.Sum.Bytes {
			t.Errorf("interval %+v", iv)
		}
	}
	e := d.End
	if sum != e.SumReceived.Bytes || e.SumReceived.Bytes == 0 || e.Failures != 0 || e.Streams[0].State != "done" || d.Error != "" {
		t.Errorf("intervals add up to %d; end %+v", sum, e)
	}
	if last := d.Intervals[len(d.Intervals)-1]; last.Sum.Start != 0.3 || last.Sum.End < 0.34 || last.Sum.End > 0.36 {
		t.Errorf("last interval %+v", last.Sum)
	}
}

// A failed flow makes rperf exit 1 saying why, in the summary and the
// JSON document's error; a flow that makes no progress is stopped after
// --timeout; a request hostd refuses is an error with hostd's reason.
func TestFailures(t *testing.T) {
	n := &fakeNIC{rate: 10 << 20, fail: true}
	sock := n.serve(t)
	var out, errb bytes.Buffer
	code := run([]string{"--socket", sock, "-c", "h3", "-n", "1M", "-P", "2", "-i", "0"}, &out, &errb)
	if code != 1 || !strings.Contains(errb.String(), "1 of 2 flows failed: flow 2 failed: lossless: the receiver saw a PSN gap") ||
		!strings.Contains(out.String(), "failures 1") {
		t.Errorf("exit %d\n%s\n%s", code, out.String(), errb.String())
	}

	n = &fakeNIC{rate: 10 << 20, stuck: true}
	sock = n.serve(t)
	out.Reset()
	errb.Reset()
	code = run([]string{"--socket", sock, "-c", "h3", "-n", "1M", "-J", "--timeout", "300ms"}, &out, &errb)
	var d Document
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if code != 1 || !strings.Contains(d.Error, "no flow made progress for 300ms") || len(n.deleted) != 1 || d.End.Streams[0].State != api.RDMAAborted {
		t.Errorf("stuck: exit %d, deleted %v, doc %+v", code, n.deleted, d)
	}

	out.Reset()
	errb.Reset()
	if code := run([]string{"--socket", sock, "-c", "h7", "-n", "1M"}, &out, &errb); code != 1 || !strings.Contains(errb.String(), "destination h7") {
		t.Errorf("refused: exit %d: %s", code, errb.String())
	}
	if code := run([]string{"--socket", filepath.Join(t.TempDir(), "none.sock"), "-c", "h1", "-n", "1M"}, &out, &errb); code != 1 {
		t.Errorf("no hostd: exit %d", code)
	}
	if code := run([]string{"-c", "h1", "-n", "1M", "-t", "1"}, &out, &errb); code != 2 {
		t.Errorf("bad usage: exit %d", code)
	}
}

// fakeLab writes the state of a lab cx whose h0 and h3 are the fake NICs
// nics[0] and nics[1], under a temporary run root, and returns the root.
func fakeLab(t *testing.T, nics ...*fakeNIC) string {
	t.Helper()
	root := t.TempDir()
	st := lab.State{Lab: "cx", Spec: lab.Spec{Name: "cx", N: 2, K: 1}, Phase: lab.PhaseUp}
	for i, name := range []string{"h0", "h3"} {
		st.Nodes = append(st.Nodes, lab.NodeState{Name: name, Kind: lab.KindServer, Control: nics[i].serve(t)})
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Join(root, "cx"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(lab.StatePath(root, "cx"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	return root
}

// -O: the first intervals are marked omitted and left out of the
// summary, which the other intervals add up to; the flows run -t plus
// -O; -b reaches the NIC.
func TestOmitAndRate(t *testing.T) {
	n := &fakeNIC{rate: 10 << 20}
	sock := n.serve(t)
	var out, errb bytes.Buffer
	code := run([]string{"--socket", sock, "-c", "h3", "-t", "0.3", "-O", "0.2", "-i", "0.1", "-b", "50M", "-J"}, &out, &errb)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var d Document
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if n.reqs[0].Duration != int64(500*time.Millisecond) || n.reqs[0].RateBps != 50e6 || d.Start.TestStart.Omit != 0.2 {
		t.Errorf("request %+v, start %+v", n.reqs[0], d.Start.TestStart)
	}
	var kept int64
	omitted := 0
	for _, iv := range d.Intervals {
		if iv.Sum.Omitted {
			omitted++
			if iv.Sum.End > 0.2+1e-9 {
				t.Errorf("interval %v-%v omitted", iv.Sum.Start, iv.Sum.End)
			}
			continue
		}
		kept += iv.Sum.Bytes
	}
	if omitted != 2 || kept != d.End.SumReceived.Bytes || kept == 0 {
		t.Errorf("%d intervals omitted; kept %d bytes, the summary %d", omitted, kept, d.End.SumReceived.Bytes)
	}
	if s := d.End.SumReceived.Start; s < 0.19 || s > 0.21 {
		t.Errorf("the summary starts at %v, want 0.2", s)
	}
}

// --json-stream: a JSON line per event, start first and end last; the
// intervals add up to the end. --logfile takes the report.
func TestJSONStream(t *testing.T) {
	n := &fakeNIC{rate: 10 << 20}
	sock := n.serve(t)
	log := filepath.Join(t.TempDir(), "rperf.log")
	var out, errb bytes.Buffer
	if code := run([]string{"--socket", sock, "-c", "h3", "-t", "0.25", "-i", "0.1", "--json-stream", "--logfile", log}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if out.Len() != 0 {
		t.Errorf("stdout has %d bytes with --logfile", out.Len())
	}
	b, _ := os.ReadFile(log)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var events []string
	var sum int64
	var end End
	for _, l := range lines {
		var ev struct {
			Event string          `json:"event"`
			Data  json.RawMessage `json:"data"`
		}
		if err := json.Unmarshal([]byte(l), &ev); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		events = append(events, ev.Event)
		switch ev.Event {
		case "interval":
			var iv Interval
			if err := json.Unmarshal(ev.Data, &iv); err != nil {
				t.Fatal(err)
			}
			sum += iv.Sum.Bytes
		case "end":
			if err := json.Unmarshal(ev.Data, &end); err != nil {
				t.Fatal(err)
			}
		}
	}
	if len(events) < 4 || events[0] != "start" || events[len(events)-1] != "end" || sum != end.SumReceived.Bytes {
		t.Errorf("events %v; intervals add up to %d, the end says %d", events, sum, end.SumReceived.Bytes)
	}
}

// -t 0 runs until interrupted, then stops the flows as their time would
// and prints the summary, exit 0.
func TestUntilStopped(t *testing.T) {
	n := &fakeNIC{rate: 10 << 20}
	sock := n.serve(t)
	ctx, cancel := context.WithTimeout(context.Background(), 400*time.Millisecond)
	defer cancel()
	var out, errb bytes.Buffer
	code := runCtx(ctx, []string{"--socket", sock, "-c", "h3", "-t", "0", "-i", "0.1"}, &out, &errb)
	text := out.String()
	if code != 0 || !n.reqs[0].UntilStopped || len(n.stopped) != 1 || len(n.deleted) != 0 ||
		!strings.Contains(text, "until stopped") || !strings.Contains(text, "receiver") || !strings.Contains(text, "rperf Done.") {
		t.Errorf("exit %d, stopped %v, deleted %v\n%s\n%s", code, n.stopped, n.deleted, text, errb.String())
	}
}

// -R: DST's NIC sends to this server; --bidir: both, streams and sums
// tagged TX-C and RX-C. (The fake lab has no daemons, so the emulation
// health is invalid: exit 3.)
func TestReverseAndBidir(t *testing.T) {
	h0, h3 := &fakeNIC{rate: 10 << 20}, &fakeNIC{rate: 5 << 20}
	root := fakeLab(t, h0, h3)
	var out, errb bytes.Buffer
	code := run([]string{"--run-root", root, "--lab", "cx", "--node", "h0", "-c", "h3", "-R", "-n", "1M"}, &out, &errb)
	if code != 3 || len(h0.reqs) != 0 || len(h3.reqs) != 1 || h3.reqs[0].Dst != 0 || !strings.Contains(out.String(), "Reverse mode, remote host 198.18.0.3 is sending") {
		t.Fatalf("-R: exit %d, h0 %d requests, h3 %+v\n%s%s", code, len(h0.reqs), h3.reqs, out.String(), errb.String())
	}
	out.Reset()
	code = run([]string{"--run-root", root, "--lab", "cx", "--node", "h0", "-c", "h3", "--bidir", "-n", "1M", "-i", "0.1", "-J"}, &out, &errb)
	var d Document
	if err := json.Unmarshal(out.Bytes(), &d); err != nil || code != 3 {
		t.Fatalf("--bidir: exit %d, %v\n%s", code, err, errb.String())
	}
	if h0.reqs[0].Dst != 3 || h3.reqs[1].Dst != 0 || len(d.End.Streams) != 2 || d.End.Streams[0].Role != "TX-C" || d.End.Streams[1].Role != "RX-C" ||
		d.End.SumReceivedBidirReverse == nil || d.End.SumReceived.Bytes != 1<<20 || d.End.SumReceivedBidirReverse.Bytes != 1<<20 {
		t.Errorf("--bidir: %+v", d.End)
	}
	if len(d.Intervals) == 0 || d.Intervals[0].SumBidirReverse == nil || d.Intervals[0].Sum.Role != "TX-C" {
		t.Errorf("--bidir intervals: %+v", d.Intervals)
	}
	// -R reaches DST's NIC through the lab, which --socket does not name:
	// --lab and --node are missing (usage).
	if code := run([]string{"--socket", h0.serve(t), "-c", "h3", "-R", "-n", "1M"}, &out, &errb); code != 2 {
		t.Errorf("-R with --socket alone: exit %d, want 2", code)
	}
}

// -a: perftest's sweep, a row per size with its iterations; --lat the
// round trips; -J carries the rows.
func TestPerftest(t *testing.T) {
	n := &fakeNIC{rate: 50 << 20}
	sock := n.serve(t)
	var out, errb bytes.Buffer
	if code := run([]string{"--socket", sock, "-c", "h3", "-a", "--max-size", "64K", "--iters", "100"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	text := out.String()
	t.Log("\n" + text)
	for _, re := range []string{
		`(?m)^ #bytes +#iterations +BW peak\[Mb/sec\] +BW average\[Mb/sec\] +MsgRate\[Mpps\]$`,
		`(?m)^ 2 +100 +[0-9.]+ +[0-9.]+ +[0-9.]+$`,
		`(?m)^ 65536 +100 +[0-9.]+ +[0-9.]+ +[0-9.]+$`,
	} {
		if !regexp.MustCompile(re).MatchString(text) {
			t.Errorf("no line matches %s", re)
		}
	}
	if len(n.reqs) != 16 || n.reqs[0].MsgBytes != 2 || n.reqs[0].Bytes != 200 || n.reqs[15].MsgBytes != 64<<10 {
		t.Errorf("%d requests: %+v", len(n.reqs), n.reqs[0])
	}
	out.Reset()
	if code := run([]string{"--socket", sock, "-c", "h3", "--lat", "-s", "64", "--iters", "50", "-J"}, &out, &errb); code != 0 {
		t.Fatalf("--lat: exit %d: %s", code, errb.String())
	}
	var d Document
	if err := json.Unmarshal(out.Bytes(), &d); err != nil {
		t.Fatal(err)
	}
	if pt := d.Perftest; pt == nil || pt.Test != "latency" || len(pt.Latency) != 1 || pt.Latency[0].P99Ns != 500e3 || pt.Latency[0].Iterations != 50 {
		t.Errorf("--lat: %+v", d.Perftest)
	}
	if r := n.reqs[len(n.reqs)-1]; !r.Latency || r.MsgBytes != 64 || r.Bytes != 64*50 {
		t.Errorf("--lat request %+v", r)
	}
}
