package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcfab/bcfab/internal/testkit/testtool"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/node/scheme"
)

// rperf's iperf3 and perftest modes in one lab, BCube(2,1) at 100 Mb/s
// under PortFC, h0 and h3 four hops apart: -R, --bidir, -b, -O with
// --json-stream and --logfile, -t 0 ended by SIGINT, the -a sweep and
// --lat. Each run is short; the JSON of each parses.
func TestRperfModes(t *testing.T) {
	spec := upLab(t, "rm", lab.Spec{FC: scheme.NamePortFC})

	t.Run("reverse", func(t *testing.T) {
		r := rperf(t, spec, "h0", "-c", "h3", "-R", "-t", "1.5", "-J")
		d := parseDoc(t, r)
		if r.code != 0 || !d.Start.TestStart.Reverse || len(d.Start.Streams) != 1 || d.Start.Streams[0].Dst != 0 || d.End.SumReceived.Bytes < 1<<20 {
			t.Errorf("exit %d: %s\nstart %+v\nend %+v", r.code, r.stderr, d.Start, d.End.SumReceived)
		}
		t.Logf("h3 -> h0: %.1f Mb/s", d.End.SumReceived.BitsPerSecond/1e6)
	})

	t.Run("bidir", func(t *testing.T) {
		r := rperf(t, spec, "h0", "-c", "h3", "--bidir", "-t", "1.5", "-J")
		d := parseDoc(t, r)
		e := &d.End
		if r.code != 0 || len(e.Streams) != 2 || e.SumReceivedBidirReverse == nil || e.SumReceived.Bytes < 1<<20 || e.SumReceivedBidirReverse.Bytes < 1<<20 {
			t.Fatalf("exit %d: %s\nend %+v", r.code, r.stderr, e)
		}
		// Full duplex: each direction near the link rate at once.
		t.Logf("TX-C %.1f Mb/s, RX-C %.1f Mb/s", e.SumReceived.BitsPerSecond/1e6, e.SumReceivedBidirReverse.BitsPerSecond/1e6)
		if e.SumReceived.LinkUtilization < 0.8 || e.SumReceivedBidirReverse.LinkUtilization < 0.8 {
			t.Errorf("utilisation %.2f and %.2f: want both directions near the link rate", e.SumReceived.LinkUtilization, e.SumReceivedBidirReverse.LinkUtilization)
		}
	})

	t.Run("bitrate", func(t *testing.T) {
		r := rperf(t, spec, "h0", "-c", "h3", "-b", "20M", "-t", "1.5", "-J")
		d := parseDoc(t, r)
		bps := d.End.SumReceived.BitsPerSecond
		t.Logf("-b 20M: %.1f Mb/s of payload", bps/1e6)
		if r.code != 0 || bps > 20e6 || bps < 15e6 {
			t.Errorf("exit %d: -b 20M ran at %.1f Mb/s", r.code, bps/1e6)
		}
	})

	t.Run("omit json-stream logfile", func(t *testing.T) {
		log := filepath.Join(t.TempDir(), "rperf.jsonl")
		r := rperf(t, spec, "h0", "-c", "h3", "-t", "1.5", "-O", "0.5", "-i", "0.5", "--json-stream", "--logfile", log)
		b, err := os.ReadFile(log)
		if r.code != 0 || err != nil || r.stdout != "" {
			t.Fatalf("exit %d, %v: %s; stdout %q", r.code, err, r.stderr, r.stdout)
		}
		var events []string
		var kept int64
		var end End
		for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
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
				if iv.Sum.Omitted != (iv.Sum.End <= 0.5) {
					t.Errorf("interval %.2f-%.2f omitted %v", iv.Sum.Start, iv.Sum.End, iv.Sum.Omitted)
				}
				if !iv.Sum.Omitted {
					kept += iv.Sum.Bytes
				}
			case "end":
				if err := json.Unmarshal(ev.Data, &end); err != nil {
					t.Fatal(err)
				}
			}
		}
		t.Logf("events %v; summary %d bytes from %.2fs", events, end.SumReceived.Bytes, end.SumReceived.Start)
		if events[0] != "start" || events[len(events)-1] != "end" || len(events) < 5 || kept != end.SumReceived.Bytes || end.SumReceived.Start < 0.45 {
			t.Errorf("events %v; kept %d, summary %+v", events, kept, end.SumReceived)
		}
	})

	t.Run("until stopped", func(t *testing.T) {
		// A run the machine was late for (exit 3, the emulation behind)
		// runs again, as rperf's others do.
		testtool.RetryLate(t, 0, func(t *testing.T) string {
			cmd, err := lab.Command(spec.Name, "h0", filepath.Join(spec.BinDir, "rperf"), "--run-root", spec.RunRoot, "-c", "h3", "-t", "0", "-i", "0.5")
			if err != nil {
				t.Fatal(err)
			}
			var out, errb bytes.Buffer
			cmd.Stdout, cmd.Stderr = &out, &errb
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(1500 * time.Millisecond)
			// ip netns exec execs rperf in place: the pid is rperf's.
			if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
				t.Fatal(err)
			}
			err = cmd.Wait()
			text := out.String()
			t.Log("\n" + text)
			if late := lateRperf(result{stdout: text, stderr: errb.String(), code: cmd.ProcessState.ExitCode()}); late != "" {
				return late
			}
			if err != nil || !strings.Contains(text, "until stopped") || !strings.Contains(text, "receiver") ||
				!strings.Contains(text, "] done  FCT") || !strings.Contains(text, "rperf Done.") {
				t.Errorf("-t 0 then SIGINT: %v: %s", err, errb.String())
			}
			return ""
		})
	})

	t.Run("sweep", func(t *testing.T) {
		r := rperf(t, spec, "h0", "-c", "h3", "-a", "--max-size", "64K", "--iters", "300", "-J")
		d := parseDoc(t, r)
		pt := d.Perftest
		if r.code != 0 || pt == nil || len(pt.Bandwidth) != 16 {
			t.Fatalf("exit %d: %s\n%+v", r.code, r.stderr, pt)
		}
		for _, row := range pt.Bandwidth {
			t.Logf("%6d B x %4d: peak %6.2f Mb/s, average %6.2f Mb/s, %.4f Mpps", row.Bytes, row.Iterations, row.PeakBps/1e6, row.AvgBps/1e6, row.MsgRate/1e6)
			if row.AvgBps <= 0 || row.PeakBps < row.AvgBps*0.9 || row.MsgRate <= 0 {
				t.Errorf("row %+v", row)
			}
		}
		small, large := pt.Bandwidth[0], pt.Bandwidth[len(pt.Bandwidth)-1]
		if small.MsgRate <= large.MsgRate || small.AvgBps >= large.AvgBps || large.AvgBps < 70e6 {
			t.Errorf("2 B: %+v; 64 KiB: %+v", small, large)
		}
	})

	t.Run("latency", func(t *testing.T) {
		r := rperf(t, spec, "h0", "-c", "h3", "--lat", "--iters", "300")
		if r.code != 0 || !strings.Contains(r.stdout, "t_typical[usec]") {
			t.Fatalf("exit %d: %s\n%s", r.code, r.stderr, r.stdout)
		}
		t.Log("\n" + r.stdout)
		r = rperf(t, spec, "h0", "-c", "h3", "--lat", "-s", "64", "--iters", "300", "-J")
		d := parseDoc(t, r)
		if r.code != 0 || d.Perftest == nil || len(d.Perftest.Latency) != 1 {
			t.Fatalf("exit %d: %s", r.code, r.stderr)
		}
		l := d.Perftest.Latency[0]
		t.Logf("64 B round trips: %+v", l.LatencyStats)
		if l.Samples != 300 || l.MinNs <= 0 || l.MinNs > l.P50Ns || l.P50Ns > l.P99Ns || l.P99Ns > l.P999Ns || l.P999Ns > l.MaxNs {
			t.Errorf("latency %+v", l)
		}
	})
}
