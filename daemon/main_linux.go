//go:build linux

package daemon

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"

	"github.com/bcfab/bcfab/bcube"
	"github.com/bcfab/bcfab/config"
)

// Main is the whole of a daemon's main: flags, config, logging, signals.
// build turns the validated config into the daemon to run.
func Main(kind string, build func(cfg *config.Node, t bcube.Topology, n bcube.Node, log *slog.Logger) (*Daemon, error)) {
	fs := flag.NewFlagSet(kind, flag.ExitOnError)
	path := fs.String("config", "", "daemon config `file` (JSON, written by lab)")
	level := fs.String("log-level", "info", "debug, info, warn or error")
	_ = fs.Parse(os.Args[1:])
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(*level)); err != nil {
		fmt.Fprintf(os.Stderr, "%s: --log-level: %v\n", kind, err)
		os.Exit(2)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lv})).With("daemon", kind)
	if *path == "" {
		fmt.Fprintf(os.Stderr, "%s: --config is required\n", kind)
		os.Exit(2)
	}
	cfg, t, n, err := config.Load(*path)
	if err == nil && n.Switch != (kind == "swd") {
		err = fmt.Errorf("node %s is not a %s node", n, kind)
	}
	if err != nil {
		log.Error("config", "err", err)
		os.Exit(1)
	}
	log = log.With("node", n.String())
	d, err := build(cfg, t, n, log)
	if err != nil {
		log.Error("build", "err", err)
		os.Exit(1)
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := d.Run(ctx); err != nil {
		log.Error("exit", "err", err)
		os.Exit(1)
	}
}
