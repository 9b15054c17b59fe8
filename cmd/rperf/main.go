// Command rperf measures RDMA flows between servers of a bcfab lab, as
// iperf3 does TCP: run inside a server's namespace, it asks that server's
// hostd (its RDMA NIC) over the control socket in the lab's run directory
// to start reliable-connected flows to another server, reports their
// progress every interval and a summary, or one JSON document with -J.
//
//	ip netns exec t1-h0 bin/rperf -c 198.18.0.15 -t 5
//	ip netns exec t1-h0 bin/rperf -c h3 -n 100M -P 2 --mode irn -J
//
// The lab and node come from the namespace (<lab>-h<i>), or from --lab
// and --node; --socket names a control socket directly. With the lab
// known, the summary ends with the emulation health of the test (every
// daemon's CPU time, XSK ring drops and lost link time; lab.Health). It
// exits 1 when a flow fails (a lossless flow that met a gap, a flow
// stopped for making no progress) or the NIC cannot be reached, 2 on bad
// usage, 3 when the emulation health is invalid: the daemons did not
// keep up, and the numbers are not the fabric's.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"
)

const usage = `usage: rperf -c DST [-n BYTES | -t SECONDS] [flags]

Runs RDMA (RoCEv2, reliable connected) flows from this server's NIC
(hostd) to DST and reports them as iperf3 does.

  -c DST          destination server: h<i> or its address (198.18.0.<i>...)
  -n BYTES        bytes per flow (K, M, G suffixes are 1024-based)
  -t SECONDS      send for this long instead (default 10)
  -i SECONDS      interval between reports (default 1; 0: none)
  -P FLOWS        parallel flows, one QP each (default 1)
  --mode MODE     loss recovery: lossless (default), gbn or irn
  --no-dcqcn      no DCQCN rate control
  --mtu BYTES     payload per packet (default 1024)
  --order L,L     fix the flows' level order (e.g. 0,1)
  -J              one JSON document (start, intervals, end) instead of text
  --timeout DUR   give up when no flow makes progress for this long (default 10s)
  --lab NAME      the lab (default: from the network namespace <lab>-h<i>)
  --node h<i>     this server (default: from the network namespace)
  --run-root DIR  where labs keep their run directories (default /run/bcfab)
  --socket PATH   the NIC's control socket, instead of --lab/--node
                  (then without the emulation health)

Exit status: 0 done, 1 a flow failed or an error, 2 bad usage, 3 the
emulation health is invalid (the daemons did not keep up).
`

type options struct {
	dst      string
	bytes    int64
	duration time.Duration
	interval time.Duration
	parallel int
	mode     string
	noDCQCN  bool
	mtu      int
	order    string
	json     bool
	timeout  time.Duration
	lab      string
	node     string
	runRoot  string
	socket   string
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is rperf with args, writing its report to out and errors to errw;
// it returns the exit status.
func run(args []string, out, errw io.Writer) int {
	o, err := parseFlags(args, errw)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintf(errw, "rperf: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	t, err := newTest(o)
	if err != nil {
		fmt.Fprintf(errw, "rperf: %v\n", err)
		return 1
	}
	var text io.Writer = out
	if o.json {
		text = io.Discard
	}
	doc, err := t.run(ctx, text)
	if o.json {
		if err != nil {
			doc.Error = err.Error()
		}
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		if eerr := enc.Encode(doc); eerr != nil && err == nil {
			err = eerr
		}
	}
	if err != nil {
		fmt.Fprintf(errw, "rperf: error - %v\n", err)
		if errors.Is(err, errInvalidRun) {
			return 3
		}
		return 1
	}
	if !o.json {
		fmt.Fprintln(out, "\nrperf Done.")
	}
	return 0
}

func parseFlags(args []string, errw io.Writer) (*options, error) {
	o := &options{}
	fs := flag.NewFlagSet("rperf", flag.ContinueOnError)
	fs.SetOutput(errw)
	fs.Usage = func() { fmt.Fprint(errw, usage) }
	var bytes string
	var secs, interval float64
	fs.StringVar(&o.dst, "c", "", "")
	fs.StringVar(&bytes, "n", "", "")
	fs.Float64Var(&secs, "t", 0, "")
	fs.Float64Var(&interval, "i", 1, "")
	fs.IntVar(&o.parallel, "P", 1, "")
	fs.StringVar(&o.mode, "mode", "lossless", "")
	fs.BoolVar(&o.noDCQCN, "no-dcqcn", false, "")
	fs.IntVar(&o.mtu, "mtu", 1024, "")
	fs.StringVar(&o.order, "order", "", "")
	fs.BoolVar(&o.json, "J", false, "")
	fs.DurationVar(&o.timeout, "timeout", 10*time.Second, "")
	fs.StringVar(&o.lab, "lab", "", "")
	fs.StringVar(&o.node, "node", "", "")
	fs.StringVar(&o.runRoot, "run-root", "/run/bcfab", "")
	fs.StringVar(&o.socket, "socket", "", "")
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if fs.NArg() > 0 {
		return nil, fmt.Errorf("unexpected argument %q (see rperf -h)", fs.Arg(0))
	}
	switch {
	case o.dst == "":
		return nil, errors.New("give the destination with -c (see rperf -h)")
	case bytes != "" && secs != 0:
		return nil, errors.New("give -n or -t, not both")
	case secs < 0 || interval < 0:
		return nil, errors.New("-t and -i must not be negative")
	case o.parallel < 1:
		return nil, fmt.Errorf("-P %d: want at least 1", o.parallel)
	case o.timeout <= 0:
		return nil, fmt.Errorf("--timeout %v: want > 0", o.timeout)
	}
	if bytes != "" {
		n, err := parseBytes(bytes)
		if err != nil {
			return nil, err
		}
		o.bytes = n
	} else {
		if secs == 0 {
			secs = 10
		}
		o.duration = time.Duration(secs * float64(time.Second))
	}
	o.interval = time.Duration(interval * float64(time.Second))
	return o, nil
}

// parseBytes reads "1000", "64K", "10M", "1G" (1024-based, as iperf3).
func parseBytes(s string) (int64, error) {
	mult := int64(1)
	num := s
	if n := len(s); n > 0 {
		switch strings.ToUpper(s[n-1:]) {
		case "K":
			mult, num = 1<<10, s[:n-1]
		case "M":
			mult, num = 1<<20, s[:n-1]
		case "G":
			mult, num = 1<<30, s[:n-1]
		case "T":
			mult, num = 1<<40, s[:n-1]
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 || v*float64(mult) >= 1<<53 {
		return 0, fmt.Errorf("-n %q: want a positive number of bytes, such as 1000, 64K, 10M or 1G", s)
	}
	return int64(v * float64(mult)), nil
}
