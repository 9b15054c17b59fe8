package main

import (
	"bytes"
	"encoding/json"
	"net"
	"net/http"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/bcfab/bcfab/api"
	"github.com/bcfab/bcfab/hostd"
	"github.com/bcfab/bcfab/transport"
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
	rate    float64
	fail    bool
	stuck   bool
	deleted []string
}

func (n *fakeNIC) advance(now int64) {
	for i := range n.flows {
		f := &n.flows[i]
		if f.State != api.RDMARunning || n.stuck {
			continue
		}
		el := float64(now-f.StartNs) / 1e9
		size := f.Size
		if f.DurationNs > 0 {
			size = int64(float64(f.DurationNs) / 1e9 * n.rate)
		}
		f.FirstNs = f.StartNs + 1000
		acked := min(int64(el*n.rate), size)
		f.AckedBytes, f.Bytes, f.Packets = acked, uint64(acked), uint64(acked/int64(f.MTU))
		f.RetxPackets = uint64(acked / (100 << 10))
		f.RetxBytes = f.RetxPackets * uint64(f.MTU)
		switch {
		case n.fail && i == len(n.flows)-1 && acked >= size/2:
			f.State, f.Failure, f.EndNs = api.RDMAFailed, "lossless: the receiver saw a PSN gap (packets lost)", now
		case acked >= size:
			f.State, f.EndNs = api.RDMADone, f.StartNs+int64(float64(size)/n.rate*1e9)
			f.Size, f.FCTNs = size, f.EndNs-f.FirstNs
		}
	}
}

func (n *fakeNIC) serve(t *testing.T) string {
	sock := filepath.Join(t.TempDir(), "h0.sock")
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
				State: api.RDMARunning, StartNs: now, RateBps: 100e6}
			n.flows = append(n.flows, f)
			out = append(out, f)
		}
		_ = json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("GET /rdma", func(w http.ResponseWriter, r *http.Request) {
		n.mu.Lock()
		defer n.mu.Unlock()
		now := time.Now().UnixNano()
		n.advance(now)
		rep := api.RDMAReport{NowNs: now, Params: hostd.TransportParams(100e6, 250*time.Microsecond)}
		for _, s := range strings.Split(r.URL.Query().Get("id"), ",") {
			id, _ := strconv.Atoi(s)
			rep.Flows = append(rep.Flows, n.flows[id-1])
		}
		_ = json.NewEncoder(w).Encode(rep)
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
		`(?m)^\[  1\] QP 0x400001, UDP source port 49153, leaves by eth1 \(queue a0\), level order 0,1$`,
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
