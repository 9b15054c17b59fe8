// Command fakeproc stands in for swd and hostd in the lab package's
// tests, so a lab's lifecycle is testable without the real daemons. Built
// as <dir>/swd and <dir>/hostd, it does what the lab expects of a daemon,
// and checks what a daemon may expect of the lab:
//
//   - it loads --config with config.Load (the config validates);
//   - it runs as the right binary for its node (swd for s<l>.<w>, hostd for
//     h<i>) and in the right namespace: every port the node should have
//     exists with its bcube MAC, MTU 1500 and up;
//   - it serves GET /healthz, GET /stats (ports' kernel counters) and
//     GET and POST /link (each port's loss and link-down, kept in memory,
//     starting at the config's loss on fabric ports, and shown in /stats)
//     on the control socket, and exits 0 on SIGTERM, removing the socket.
//
// Tests steer it through the environment, which ip netns exec passes on:
// FAKED_EXIT, FAKED_HANG, FAKED_NOTERM and FAKED_LINKFAIL each list nodes
// (comma separated, or "all") that exit 3 at once, never answer /healthz,
// ignore SIGTERM, or refuse every POST /link.
package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bcfab/bcfab/fabric/bcube"
	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "fakeproc:", err)
		os.Exit(1)
	}
}

func steered(env, node string) bool {
	v := os.Getenv(env)
	return v == "all" || slices.Contains(strings.Split(v, ","), node)
}

type port struct {
	name string
	mac  net.HardwareAddr
}

func run() error {
	path := flag.String("config", "", "daemon config file")
	flag.Parse()
	c, t, node, err := config.Load(*path)
	if err != nil {
		return err
	}
	kind := "hostd"
	if node.Switch {
		kind = "swd"
	}
	if self := filepath.Base(os.Args[0]); self != kind {
		return fmt.Errorf("started as %s for %s, want %s", self, c.Node, kind)
	}
	if steered("FAKED_EXIT", c.Node) {
		fmt.Fprintln(os.Stderr, "fakeproc: exiting as told by FAKED_EXIT")
		os.Exit(3)
	}

	var ports []port
	if node.Switch {
		for p := 0; p < t.N(); p++ {
			ports = append(ports, port{bcube.SwitchPort(p), bcube.SwitchPortMAC(node.Level, node.Index, p)})
		}
	} else {
		for l := 0; l < t.Levels(); l++ {
			ports = append(ports, port{bcube.HostPort(l), bcube.HostPortMAC(node.Index, l)})
		}
		ports = append(ports, port{bcube.AppPeerIf, bcube.AppNICMAC(node.Index)})
	}
	for _, p := range ports {
		ifc, err := net.InterfaceByName(p.name)
		if err != nil {
			return fmt.Errorf("%s: port %s: %w", c.Node, p.name, err)
		}
		if !bytes.Equal(ifc.HardwareAddr, p.mac) || ifc.MTU != 1500 || ifc.Flags&net.FlagUp == 0 {
			return fmt.Errorf("%s: port %s is %v mtu %d %v, want %v mtu 1500 up", c.Node, p.name, ifc.HardwareAddr, ifc.MTU, ifc.Flags, p.mac)
		}
	}

	stopOn := []os.Signal{syscall.SIGTERM, syscall.SIGINT}
	if steered("FAKED_NOTERM", c.Node) {
		signal.Ignore(syscall.SIGTERM)
		stopOn = stopOn[1:]
	}
	if steered("FAKED_HANG", c.Node) {
		select {}
	}

	os.Remove(c.Control)
	ln, err := net.Listen("unix", c.Control)
	if err != nil {
		return err
	}
	start := time.Now()
	var mu sync.Mutex
	links := map[string]*api.LinkState{}
	for _, p := range ports {
		ls := &api.LinkState{Port: p.name, App: p.name == bcube.AppPeerIf}
		if !ls.App {
			ls.LossPPM = c.LossPPM
		}
		links[p.name] = ls
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /link", func(w http.ResponseWriter, _ *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var out []api.LinkState
		for _, p := range ports {
			out = append(out, *links[p.name])
		}
		json.NewEncoder(w).Encode(out)
	})
	mux.HandleFunc("POST /link", func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		var req api.LinkRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		ls, ok := links[req.Port]
		switch {
		case !ok:
			http.Error(w, "no such port "+req.Port, http.StatusNotFound)
			return
		case ls.App:
			http.Error(w, "application port", http.StatusBadRequest)
			return
		case req.LossPPM != nil && (*req.LossPPM < 0 || *req.LossPPM > 1_000_000):
			http.Error(w, "loss_ppm out of range", http.StatusBadRequest)
			return
		case steered("FAKED_LINKFAIL", c.Node):
			http.Error(w, "refusing as told by FAKED_LINKFAIL", http.StatusInternalServerError)
			return
		}
		if req.LossPPM != nil {
			ls.LossPPM = *req.LossPPM
		}
		if req.Down != nil {
			ls.Down = *req.Down
		}
		json.NewEncoder(w).Encode(ls)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /stats", func(w http.ResponseWriter, _ *http.Request) {
		st := api.Stats{Node: c.Node, Kind: kind, Pid: os.Getpid(), UptimeNs: int64(time.Since(start)), XDPMode: c.XDPMode}
		for _, p := range ports {
			st.Ports = append(st.Ports, api.PortStats{
				Name:      p.name,
				RateBps:   c.RateBps,
				RxPackets: counter(p.name, "rx_packets"),
				RxBytes:   counter(p.name, "rx_bytes"),
				TxPackets: counter(p.name, "tx_packets"),
				TxBytes:   counter(p.name, "tx_bytes"),
				Drops:     map[string]uint64{"buffer_full": counter(p.name, "rx_dropped")},
			})
			mu.Lock()
			ps := &st.Ports[len(st.Ports)-1]
			ps.LossPPM, ps.LinkDown = links[p.name].LossPPM, links[p.name].Down
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(&st)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, stopOn...)
	<-sig
	srv.Close()
	os.Remove(c.Control)
	return nil
}

// counter reads a kernel interface counter; ip netns exec mounts the
// namespace's own /sys.
func counter(ifname, name string) uint64 {
	b, err := os.ReadFile("/sys/class/net/" + ifname + "/statistics/" + name)
	if err != nil {
		return 0
	}
	v, _ := strconv.ParseUint(strings.TrimSpace(string(b)), 10, 64)
	return v
}
