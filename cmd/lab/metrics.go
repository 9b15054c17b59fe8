//go:build linux

package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/spf13/cobra"

	"github.com/bcfab/bcfab/lab"
	"github.com/bcfab/bcfab/lab/metrics"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/scheme"
)

// metricsCmd serves a lab's counters to Prometheus.
func metricsCmd() *cobra.Command {
	var (
		listen           string
		allowRemote, all bool
	)
	cmd := &cobra.Command{
		Use:   "metrics",
		Short: "serve the lab's counters to Prometheus (/metrics), until Ctrl-C",
		Long: `Serves the counters of every node of the lab in Prometheus' text format on
http://LISTEN/metrics: ports, queues, pauses and signals by class, drops by
reason, shaper lag, XSK and XDP counters, the bc0 classifier's classes, with
lab, node, port and queue labels (bcfab_port_tx_bytes_total, ...). Every
scrape reads the daemons' /stats then; nothing runs on the datapath. It
listens on loopback only unless --allow-remote.`,
		Example: "  lab metrics --name pf --listen 127.0.0.1:9464\n  curl -s 127.0.0.1:9464/metrics | grep bcfab_queue_paused_seconds_total",
		GroupID: groupLook,
		Args:    noArgs,
	}
	c := addCommon(cmd)
	fs := cmd.Flags()
	fs.StringVar(&listen, "listen", "127.0.0.1:9464", "`address` to serve /metrics on")
	fs.BoolVar(&allowRemote, "allow-remote", false, "allow a --listen address other than loopback")
	fs.BoolVar(&all, "all-series", false, "every series, also those the lab's configuration keeps at zero (pauses without flow control, ECN marks without ECN, stalls without the watchdog) and those of queues that have carried nothing yet")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := checkListen(listen, allowRemote); err != nil {
			return usagef(cmd, "%w", err)
		}
		st, err := lab.LoadState(c.runRoot, c.name)
		if err != nil {
			return err
		}
		ln, err := net.Listen("tcp", listen)
		if err != nil {
			return err
		}
		srv := metricsServer(c.runRoot, c.name, seriesOptions(st.Spec, all))
		fmt.Fprintf(cmd.ErrOrStderr(), "serving lab %s's metrics on http://%s/metrics; Ctrl-C stops\n", c.name, ln.Addr())
		ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
		defer stop()
		go func() {
			<-ctx.Done()
			sctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			_ = srv.Shutdown(sctx)
		}()
		if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
			return err
		}
		return nil
	}
	return cmd
}

// seriesOptions are the series lab metrics leaves out of a lab of spec:
// none with all.
func seriesOptions(spec lab.Spec, all bool) metrics.Options {
	if all {
		return metrics.Options{}
	}
	pauses := scheme.Pauses(spec.FC)
	return metrics.Options{Lean: true, Pauses: pauses, ECN: spec.ECN || spec.ECNKminBytes > 0 || spec.ECNKmaxBytes > 0 || spec.ECNPmax > 0,
		Watchdog: pauses && spec.WatchdogDetect >= 0, WatchdogActs: spec.WatchdogAction != "" && spec.WatchdogAction != config.WatchdogNone}
}

// metricsServer serves /metrics of lab name.
func metricsServer(runRoot, name string, opts metrics.Options) *http.Server {
	reg := prometheus.NewRegistry()
	reg.MustRegister(metrics.NewCollector(name, func(ctx context.Context) ([]metrics.Node, error) {
		snaps, err := lab.Snapshot(ctx, runRoot, name)
		if err != nil {
			return nil, err
		}
		nodes := make([]metrics.Node, len(snaps))
		for i, s := range snaps {
			nodes[i] = metrics.Node{Name: s.Node, Kind: s.Kind, Stats: s.Stats, Classifier: s.Classifier, Err: s.Err}
		}
		return nodes, nil
	}, 10*time.Second).WithOptions(opts))
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.ContinueOnError}))
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "lab %s: metrics at /metrics\n", name)
	})
	return &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
}

// checkListen refuses an address that is not loopback, unless allowed: a
// lab's counters are the machine's business.
func checkListen(addr string, allowRemote bool) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--listen %q: %w", addr, err)
	}
	if allowRemote {
		return nil
	}
	if host == "localhost" {
		return nil
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsLoopback() {
		return nil
	}
	return fmt.Errorf("--listen %q is not a loopback address: give --allow-remote to serve other hosts", addr)
}
