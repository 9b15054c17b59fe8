// Command rperf measures RDMA flows between servers of a bcfab lab, as
// iperf3 does TCP and perftest RDMA: run inside a server's namespace, it
// asks that server's hostd (its RDMA NIC) over the control socket in the
// lab's run directory to start reliable-connected flows to another server
// (or, with -R and --bidir, the other server's hostd to start them
// towards this one), reports their progress every interval and a
// summary, one JSON document with -J, or JSON lines with --json-stream;
// -a and --lat run perftest's size sweep and latency test.
//
//	ip netns exec t1-h0 bin/rperf -c 198.18.0.15 -t 5
//	ip netns exec t1-h0 bin/rperf -c h3 -n 100M -P 2 --mode irn -J
//	ip netns exec t1-h0 bin/rperf -c h3 --lat -s 64
//
// The lab and node come from the namespace (<lab>-h<i>), or from --lab
// and --node; --socket names a control socket directly. With the lab
// known, the summary ends with the emulation health of the test (every
// daemon's CPU time, XSK ring drops and lost link time; lab.Health). It
// exits 1 when a flow fails (a lossless flow that met a gap, a flow
// stopped for making no progress) or the NIC cannot be reached, 2 on bad
// usage (a flag, or run outside a server's namespace without --lab and
// --node), 3 when the emulation health is invalid: the daemons did not
// keep up, and the numbers are not the fabric's; 4 when a request failed
// because a process hosting nodes of the lab is not running.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/internal/buildinfo"
	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/model/units"
	"github.com/bcfab/bcfab/node/api"
)

// options are rperf's flags, validated.
type options struct {
	dst      string
	bytes    int64
	duration time.Duration // 0 with bytes; forever: until stopped
	forever  bool          // -t 0: until SIGINT or SIGTERM
	interval time.Duration
	omit     time.Duration
	parallel int
	mode     string
	noDCQCN  bool
	mtu      int
	order    string
	rateBps  uint64 // -b, per flow; 0: the link's
	lose     []int  // --lose: packets of each flow whose first transmission is dropped
	reverse  bool
	bidir    bool
	json     bool
	stream   bool // --json-stream
	logfile  string
	timeout  time.Duration
	lab      string
	node     string
	runRoot  string
	socket   string

	// perftest's modes: a size sweep (-a) or one size (-s), bandwidth or
	// latency (--lat), iters messages per size.
	sweep   bool
	size    int64
	maxSize int64
	iters   int
	lat     bool

	// labUnits reads the text report on the lab's clock (--lab-units).
	labUnits bool
}

// perftest is whether o asks for one of perftest's modes.
func (o *options) perftest() bool { return o.sweep || o.lat || o.size > 0 }

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

// run is rperf with args, writing its report to out and errors to errw;
// it returns the exit status. SIGINT and SIGTERM end the test (see
// runTest).
func run(args []string, out, errw io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return runCtx(ctx, args, out, errw)
}

// runCtx is run, ended early when ctx is.
func runCtx(ctx context.Context, args []string, out, errw io.Writer) int {
	code := 0
	cmd := newCommand(out, errw, func(o *options) { code = runTest(ctx, o, out, errw) })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(errw, "rperf: %v (see rperf -h)\n", err)
		return 2
	}
	return code
}

// runTest runs the test o describes and returns the exit status. When ctx
// ends (Ctrl-C), timed flows and -t 0's are stopped as their time would
// stop them, and the test ends as usual; sized ones are aborted (exit 1).
func runTest(ctx context.Context, o *options, out, errw io.Writer) int {
	if o.logfile != "" {
		f, err := os.OpenFile(o.logfile, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
		if err != nil {
			fmt.Fprintf(errw, "rperf: %v\n", err)
			return 1
		}
		defer f.Close()
		out = f
	}
	t, err := newTest(o)
	if err != nil {
		fmt.Fprintf(errw, "rperf: %v\n", err)
		if errors.As(err, new(usageError)) {
			return 2
		}
		return 1
	}
	var rep reporter = &textReporter{w: out, labUnits: o.labUnits}
	switch {
	case o.stream:
		rep = &streamReporter{w: out}
	case o.json:
		rep = &docReporter{w: out}
	}
	if o.perftest() {
		err = t.perftest(ctx, rep)
	} else {
		err = t.run(ctx, rep)
	}
	if err != nil && !errors.Is(err, errInvalidRun) && o.lab != "" {
		// A request that failed because the worker or daemon hosting a
		// node died is that one fact, not what the request met.
		if d := lab.NotRunning(o.runRoot, o.lab); d != nil {
			fmt.Fprintf(errw, "rperf: error - %v\n", d)
			return 4
		}
	}
	if err != nil {
		fmt.Fprintf(errw, "rperf: error - %v\n", err)
		if errors.Is(err, errInvalidRun) {
			return 3
		}
		return 1
	}
	return 0
}

// newCommand is rperf's command line; do runs with the validated
// options (not on -h or a usage error).
func newCommand(stdout, stderr io.Writer, do func(*options)) *cobra.Command {
	o := &options{}
	var (
		size, msgSize, maxSize units.Size
		rate                   units.Rate
		secs, interval         = units.Duration(0), units.Duration(time.Second)
		omit                   units.Duration
		timeout                = units.Duration(10 * time.Second)
	)
	maxSize = 1 << 20
	cmd := &cobra.Command{
		Use:   "rperf -c DST [-n BYTES | -t SECONDS] [flags]",
		Short: "measure RDMA flows between servers of a bcfab lab, as iperf3 and perftest do",
		Long: `Runs RDMA (RoCEv2, reliable connected) flows between this server's NIC
(hostd) and DST and reports them as iperf3 does: from this server to DST,
from DST to it (-R), or both at once (--bidir). Run it inside a server's
namespace: the lab and node come from the namespace (<lab>-h<i>), or from
--lab and --node; --socket names the NIC's control socket directly (then
neither -R, --bidir nor the emulation health).

perftest's modes: -a sweeps message sizes from 2 bytes to --max-size,
-s runs one size, each --iters messages (fewer for large ones: at most
about a second of the link), and prints perftest's columns (#bytes,
#iterations, BW peak, BW average, MsgRate); --lat sends one message at a
time and prints its round trip (posted to acknowledged): min, max, p50,
average, stdev, p99, p99.9.

--lose 10,39 makes each flow's NIC drop the first transmission of its
packets 10 and 39 (counted from 0; a sized test, -n, in --mode gbn or
irn): a loss placed rather than drawn, recovered as any other and
counted as an injected loss.

A lab is a scale model of a target network at a dilation D (lab up
--rate 20M: the papers' 100 Gb/s network at D = 5,000). The report reads
every time and rate on the target's clock, labelled "target" or "in the
target" (the lab's time / D, its rate x D: a 3.02 s flow of the lab is
604 µs of the target, 18.3 Mbit/s is 91.5 Gbit/s); --lab-units reads them
on the lab's clock instead. What rperf is given is the lab's: -t, -i and
-O are lab time (-t 3 at D = 5,000 is 600 µs of the target), -b a lab
rate; the header says both. JSON keeps iperf3's keys with the lab's
values and adds the target's beside them (fct_target_ns,
bits_per_second_target, round_trip_target, ...). Without a lab (--socket alone) there is
no model, and the report is what the NIC measured.

Sizes are iperf3's (K, M, G: 1024-based), rates too (-b 100M: 1000-based
bits/s); durations are seconds (2.5) or Go's syntax (2500ms). -t 0 runs
until Ctrl-C (SIGINT or SIGTERM), which stops the flows and prints the
summary.

Exit status: 0 done, 1 a flow failed or an error, 2 bad usage (a flag,
or run outside a server's namespace without --lab and --node), 3 the
emulation health is invalid (the daemons did not keep up), 4 a request
failed because a process hosting nodes of the lab (a worker, or a
node's daemon) is not running; one line names it and its nodes.`,
		Example: `  ip netns exec t1-h0 rperf -c 198.18.0.15 -t 5
  ip netns exec t1-h0 rperf -c h3 -n 100M -P 2 --mode irn -J
  ip netns exec t1-h0 rperf -c h3 -R -b 50M -O 1 -t 5
  ip netns exec t1-h0 rperf -c h3 --bidir --json-stream
  ip netns exec t1-h0 rperf -c h3 -a
  ip netns exec t1-h0 rperf -c h3 --lat -s 64 --iters 2000`,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.finish(cmd, size, secs, interval, omit, timeout, rate, msgSize, maxSize); err != nil {
				return err
			}
			do(o)
			return nil
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	cmd.Version = buildinfo.Read().Line("rperf") // -v, --version, as iperf3's -v
	cmd.SetVersionTemplate("{{.Version}}\n")
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVarP(&o.dst, "client", "c", "", "destination server: h<i> or its address (198.18.0.<i>...)")
	fs.VarP(&size, "bytes", "n", "bytes per flow (K, M, G: 1024-based)")
	fs.VarP(&secs, "time", "t", "send for this long instead, in lab time (default 10; 0: until Ctrl-C)")
	fs.VarP(&interval, "interval", "i", "time between reports, in lab time (0: none)")
	fs.VarP(&omit, "omit", "O", "leave the first SECONDS of lab time out of the summary (the test runs that much longer; its intervals say omitted)")
	fs.IntVarP(&o.parallel, "parallel", "P", 1, "parallel flows, one QP each")
	fs.VarP(&rate, "bitrate", "b", "cap each flow at this rate of the lab, bit/s (1000-based: 50M); 0: the link's")
	fs.BoolVarP(&o.reverse, "reverse", "R", false, "reverse: DST's NIC sends to this server")
	fs.BoolVar(&o.bidir, "bidir", false, "both directions at once")
	fs.StringVar(&o.mode, "mode", "lossless", "loss recovery: lossless, gbn or irn")
	fs.BoolVar(&o.noDCQCN, "no-dcqcn", false, "no DCQCN rate control")
	fs.IntVar(&o.mtu, "mtu", 1024, "payload per packet in `bytes`")
	fs.StringVar(&o.order, "order", "", "fix the flows' level `order` (e.g. 0,1)")
	fs.IntSliceVar(&o.lose, "lose", nil, "drop the first transmission of these `packets` of each flow, counted from 0 (e.g. 10,39; with -n and --mode gbn or irn): a loss placed, not drawn")
	fs.BoolVarP(&o.json, "json", "J", false, "one JSON document (start, intervals, end) instead of text")
	fs.BoolVar(&o.stream, "json-stream", false, "JSON lines as the test goes: {\"event\": \"start\"|\"interval\"|\"end\"|\"error\", \"data\": ...}")
	fs.StringVar(&o.logfile, "logfile", "", "append the report to this `file` instead of stdout")
	fs.BoolVarP(&o.sweep, "all", "a", false, "perftest: sweep message sizes 2, 4, ... --max-size")
	fs.VarP(&msgSize, "size", "s", "perftest: message size (default 2 with --lat, 64K without)")
	fs.Var(&maxSize, "max-size", "perftest: the largest size -a sweeps")
	fs.IntVar(&o.iters, "iters", 1000, "perftest: messages per size")
	fs.BoolVar(&o.lat, "lat", false, "perftest: latency, one message at a time, round trips")
	fs.Var(&timeout, "timeout", "give up when no flow makes progress for this long (lab time)")
	fs.BoolVar(&o.labUnits, "lab-units", false, "report times and rates on the lab's clock, not the target's")
	fs.StringVar(&o.lab, "lab", "", "the lab (default: from the network namespace <lab>-h<i>)")
	fs.StringVar(&o.node, "node", "", "this server, h<i> (default: from the network namespace)")
	fs.StringVar(&o.runRoot, "run-root", "/run/bcfab", "where labs keep their run directories")
	fs.StringVar(&o.socket, "socket", "", "the NIC's control socket, instead of --lab/--node")
	_ = cmd.RegisterFlagCompletionFunc("mode", cobra.FixedCompletions([]string{"lossless", "gbn", "irn"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	return cmd
}

// finish validates the flags and fills in o.
func (o *options) finish(cmd *cobra.Command, size units.Size, secs, interval, omit, timeout units.Duration, rate units.Rate,
	msgSize, maxSize units.Size) error {
	fs := cmd.Flags()
	o.size, o.maxSize, o.rateBps = int64(msgSize), int64(maxSize), uint64(rate)
	switch {
	case o.dst == "":
		return errors.New("give the destination with -c")
	case fs.Changed("bytes") && fs.Changed("time"):
		return errors.New("give -n or -t, not both")
	case fs.Changed("bytes") && size <= 0:
		return fmt.Errorf("-n %v: want a positive number of bytes", size)
	case o.parallel < 1 || o.parallel > api.MaxRDMAParallel:
		return fmt.Errorf("-P %d: want 1..%d flows", o.parallel, api.MaxRDMAParallel)
	case o.mode != "lossless" && o.mode != "gbn" && o.mode != "irn":
		return fmt.Errorf("--mode %q: want lossless, gbn or irn (rperf runs RDMA flows; for TCP, run iperf3 in the namespace)", o.mode)
	case o.mtu < api.MinRDMAMTU || o.mtu > api.MaxRDMAMTU:
		return fmt.Errorf("--mtu %d: want %d..%d bytes of payload per packet", o.mtu, api.MinRDMAMTU, api.MaxRDMAMTU)
	case timeout <= 0:
		return fmt.Errorf("--timeout %v: want > 0", timeout)
	case o.reverse && o.bidir:
		return errors.New("give -R or --bidir, not both")
	case o.json && o.stream:
		return errors.New("give -J or --json-stream, not both")
	case omit > 0 && fs.Changed("bytes"):
		return errors.New("-O needs a timed test (-t), not -n")
	case o.perftest() && (fs.Changed("bytes") || fs.Changed("time") || omit > 0 || o.bidir):
		return errors.New("-a, -s and --lat run perftest's tests: they take neither -n, -t, -O nor --bidir")
	case o.perftest() && (o.iters < 1 || o.iters > api.MaxRDMAMessages):
		return fmt.Errorf("--iters %d: want 1..%d", o.iters, api.MaxRDMAMessages)
	case o.perftest() && (fs.Changed("size") && o.size < 1 || o.maxSize < 2 || o.maxSize > 8<<20):
		return errors.New("-s and --max-size: want 1 byte to 8M")
	}
	if err := o.checkLose(fs.Changed("bytes"), int64(size)); err != nil {
		return err
	}
	if o.lab != "" {
		if err := lab.CheckName(o.lab); err != nil {
			return fmt.Errorf("--lab: %w", err)
		}
	}
	if fs.Changed("bytes") {
		o.bytes = int64(size)
	} else {
		o.duration = secs.D()
		switch {
		case fs.Changed("time") && secs == 0:
			o.forever = true
		case o.duration == 0:
			o.duration = 10 * time.Second
		}
	}
	if o.perftest() && o.size == 0 {
		o.size = 64 << 10
		if o.lat {
			o.size = 2
		}
	}
	o.interval, o.omit, o.timeout = interval.D(), omit.D(), timeout.D()
	return nil
}

// checkLose checks --lose as each flow's NIC will, in rperf's words: a
// sized test (-n bytes) of a lossy mode, each packet within a flow, none
// twice.
func (o *options) checkLose(sized bool, bytes int64) error {
	if len(o.lose) == 0 {
		return nil
	}
	switch {
	case !sized:
		return errors.New("--lose needs a sized test (-n): its flows' packets are numbered in advance")
	case o.mode != "gbn" && o.mode != "irn":
		return fmt.Errorf("--lose with --mode %s: a lossless flow fails at a lost packet; give --mode gbn or irn", o.mode)
	case len(o.lose) > api.MaxRDMALose:
		return fmt.Errorf("--lose: %d packets, at most %d", len(o.lose), api.MaxRDMALose)
	}
	packets := (bytes + int64(o.mtu) - 1) / int64(o.mtu)
	seen := map[int]bool{}
	for _, i := range o.lose {
		switch {
		case i < 0 || int64(i) >= packets:
			return fmt.Errorf("--lose %d: each flow has packets 0..%d (-n over --mtu)", i, packets-1)
		case seen[i]:
			return fmt.Errorf("--lose: packet %d twice", i)
		}
		seen[i] = true
	}
	return nil
}

// flagError is a flag's error in rperf's words: iperf3's habits that
// mean something else here are explained.
func flagError(err error) error {
	msg := err.Error()
	switch {
	case strings.Contains(msg, `for "--lose" flag: strconv.`):
		// pflag's int list says how strconv failed.
		arg, _, _ := strings.Cut(msg, ": strconv.")
		return fmt.Errorf("%s: want packet numbers from 0, such as 10,39", arg)
	case strings.Contains(msg, "flag needs an argument: 's' in -s"):
		return errors.New("-s is perftest's message size here (-s 64K), not iperf3's server: every server's NIC (hostd) already answers; run rperf -c DST on the sending side")
	case strings.HasPrefix(msg, "flag needs an argument: "):
		flag := strings.TrimPrefix(msg, "flag needs an argument: ")
		if _, short, ok := strings.Cut(flag, " in "); ok {
			flag = short
		}
		return fmt.Errorf("%s takes a value", flag)
	}
	return err
}

// parseFlags parses args as run does, without running anything (tests).
func parseFlags(args []string, errw io.Writer) (*options, error) {
	var got *options
	cmd := newCommand(io.Discard, errw, func(o *options) { got = o })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		return nil, err
	}
	if got == nil {
		return nil, errHelp
	}
	return got, nil
}

// errHelp: -h was given.
var errHelp = errors.New("help")
