package node

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/internal/buildinfo"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/dataplane"
)

// Builders make the nodes a daemon can host: Switch for switches, Server
// for servers (nil: that kind is refused).
type Builders struct {
	Switch, Server Builder
}

func (b Builders) of(n bcube.Node) (Builder, string) {
	if n.Switch {
		return b.Switch, "swd"
	}
	return b.Server, "hostd"
}

// Main is the whole of a daemon's main: flags, config, logging, signals.
// A daemon runs one node (--config FILE, a config.Node; swd and hostd run
// so, one process per node) or a worker of many (--worker FILE, a
// config.Worker). Either way one dataplane.Worker thread steps every
// node's engine.
func Main(name string, b Builders) {
	fs := flag.NewFlagSet(name, flag.ExitOnError)
	node := fs.String("config", "", "node config `file` (JSON, written by lab): run this one node")
	worker := fs.String("worker", "", "worker config `file` (JSON, written by lab): run its nodes on one worker thread")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	version := fs.Bool("version", false, "print the build: version, revision, Go")
	_ = fs.Parse(os.Args[1:])
	if *version {
		fmt.Println(buildinfo.Read().Line(name))
		return
	}
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(os.Stderr, "%s: --log-level: %v\n", name, err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv})).With("daemon", name)
	if (*node == "") == (*worker == "") {
		fmt.Fprintf(os.Stderr, "%s: want one of --config (a node) or --worker (a worker's nodes)\n", name)
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	var err error
	if *node != "" {
		err = runNode(ctx, *node, b, log)
	} else {
		err = runWorker(ctx, *worker, b, lv, log)
	}
	if err != nil {
		log.Error("exit", "err", err)
		os.Exit(1)
	}
}

// build loads the node config at path and builds its node with b, logging
// to log (to the node's own log file when logFile is set and the config
// names one).
func build(path string, b Builders, lv slog.Level, log *slog.Logger, logFile bool) (*Spec, io.Closer, error) {
	cfg, t, n, err := config.Load(path)
	if err != nil {
		return nil, nil, err
	}
	bl, kind := b.of(n)
	if bl == nil {
		return nil, nil, fmt.Errorf("node %s: this daemon does not run %s nodes", cfg.Node, kind)
	}
	var closer io.Closer = io.NopCloser(nil)
	if logFile && cfg.Log != "" {
		f, err := os.OpenFile(cfg.Log, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
		if err != nil {
			return nil, nil, fmt.Errorf("node %s: log: %w", cfg.Node, err)
		}
		log = slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: lv})).With("daemon", kind)
		closer = f
	}
	log = log.With("node", cfg.Node) // a graph fabric's switch is no bcube.Node of its own
	node, err := bl(cfg, t, n, log)
	if err != nil {
		closer.Close()
		return nil, nil, fmt.Errorf("node %s: %w", cfg.Node, err)
	}
	return node, closer, nil
}

// runNode runs one node until ctx ends.
func runNode(ctx context.Context, path string, b Builders, log *slog.Logger) error {
	n, _, err := build(path, b, 0, log, false)
	if err != nil {
		return err
	}
	// An ordinary thread: a lab with a daemon per node runs two dozen
	// of them, which as real-time threads would contend among
	// themselves and with the kernel's deferred network work they wait
	// on (ksoftirqd, an ordinary thread). Worker processes keep time as
	// real-time threads (runWorker).
	w, err := dataplane.NewWorker(dataplane.WorkerOptions{Name: n.Config.Node, Priority: -1})
	if err != nil {
		return err
	}
	defer w.Close()
	r, err := Start(n, w, "")
	if err != nil {
		return err
	}
	err = w.Run(ctx)
	return errors.Join(err, r.Stop())
}

// stopTimeout bounds how long a stopping daemon waits for its nodes.
const stopTimeout = 5 * time.Second
