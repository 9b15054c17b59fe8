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
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/units"
)

// options are rperf's flags, validated.
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
	code := 0
	cmd := newCommand(out, errw, func(o *options) { code = runTest(o, out, errw) })
	cmd.SetArgs(args)
	if err := cmd.Execute(); err != nil {
		fmt.Fprintf(errw, "rperf: %v (see rperf -h)\n", err)
		return 2
	}
	return code
}

// runTest runs the test o describes and returns the exit status.
func runTest(o *options, out, errw io.Writer) int {
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

// newCommand is rperf's command line; do runs with the validated
// options (not on -h or a usage error).
func newCommand(stdout, stderr io.Writer, do func(*options)) *cobra.Command {
	o := &options{}
	var (
		size           units.Size
		secs, interval = units.Duration(0), units.Duration(time.Second)
		timeout        = units.Duration(10 * time.Second)
	)
	cmd := &cobra.Command{
		Use:   "rperf -c DST [-n BYTES | -t SECONDS] [flags]",
		Short: "measure RDMA flows between servers of a bcfab lab, as iperf3 does TCP",
		Long: `Runs RDMA (RoCEv2, reliable connected) flows from this server's NIC (hostd)
to DST and reports them as iperf3 does. Run it inside a server's namespace:
the lab and node come from the namespace (<lab>-h<i>), or from --lab and
--node; --socket names the NIC's control socket directly (then without the
emulation health).

Sizes are iperf3's (K, M, G: 1024-based); durations are seconds (2.5) or
Go's syntax (2500ms).

Exit status: 0 done, 1 a flow failed or an error, 2 bad usage, 3 the
emulation health is invalid (the daemons did not keep up).`,
		Example: `  ip netns exec t1-h0 rperf -c 198.18.0.15 -t 5
  ip netns exec t1-h0 rperf -c h3 -n 100M -P 2 --mode irn -J`,
		Args:          cobra.NoArgs,
		SilenceErrors: true,
		SilenceUsage:  true,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := o.finish(cmd, size, secs, interval, timeout); err != nil {
				return err
			}
			do(o)
			return nil
		},
	}
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	fs := cmd.Flags()
	fs.SortFlags = false
	fs.StringVarP(&o.dst, "client", "c", "", "destination server: h<i> or its address (198.18.0.<i>...)")
	fs.VarP(&size, "bytes", "n", "bytes per flow (K, M, G: 1024-based)")
	fs.VarP(&secs, "time", "t", "send for this long instead (default 10)")
	fs.VarP(&interval, "interval", "i", "time between reports (0: none)")
	fs.IntVarP(&o.parallel, "parallel", "P", 1, "parallel flows, one QP each")
	fs.StringVar(&o.mode, "mode", "lossless", "loss recovery: lossless, gbn or irn")
	fs.BoolVar(&o.noDCQCN, "no-dcqcn", false, "no DCQCN rate control")
	fs.IntVar(&o.mtu, "mtu", 1024, "payload per packet in `bytes`")
	fs.StringVar(&o.order, "order", "", "fix the flows' level `order` (e.g. 0,1)")
	fs.BoolVarP(&o.json, "json", "J", false, "one JSON document (start, intervals, end) instead of text")
	fs.Var(&timeout, "timeout", "give up when no flow makes progress for this long")
	fs.StringVar(&o.lab, "lab", "", "the lab (default: from the network namespace <lab>-h<i>)")
	fs.StringVar(&o.node, "node", "", "this server, h<i> (default: from the network namespace)")
	fs.StringVar(&o.runRoot, "run-root", "/run/bcfab", "where labs keep their run directories")
	fs.StringVar(&o.socket, "socket", "", "the NIC's control socket, instead of --lab/--node")
	_ = cmd.RegisterFlagCompletionFunc("mode", cobra.FixedCompletions([]string{"lossless", "gbn", "irn"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return err })
	return cmd
}

// finish validates the flags and fills in o.
func (o *options) finish(cmd *cobra.Command, size units.Size, secs, interval, timeout units.Duration) error {
	fs := cmd.Flags()
	switch {
	case o.dst == "":
		return errors.New("give the destination with -c")
	case fs.Changed("bytes") && fs.Changed("time"):
		return errors.New("give -n or -t, not both")
	case fs.Changed("bytes") && size <= 0:
		return fmt.Errorf("-n %v: want a positive number of bytes", size)
	case o.parallel < 1:
		return fmt.Errorf("-P %d: want at least 1", o.parallel)
	case timeout <= 0:
		return fmt.Errorf("--timeout %v: want > 0", timeout)
	}
	if fs.Changed("bytes") {
		o.bytes = int64(size)
	} else {
		o.duration = secs.D()
		if o.duration == 0 {
			o.duration = 10 * time.Second
		}
	}
	o.interval, o.timeout = interval.D(), timeout.D()
	return nil
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
