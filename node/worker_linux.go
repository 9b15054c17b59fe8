package node

// A worker process, in order:
//
//  1. read its config (config.Worker): its name, control socket and the
//     node configs of the nodes it hosts;
//  2. start its worker thread, then bring every node up on it (each in
//     its own namespace, a few at a time), their patched cables plugged
//     into the worker's patch panel; one that fails ends the process, so
//     lab up sees it and removes the lab;
//  3. serve its control socket: GET /healthz (200 once every node is up),
//     GET /worker (api.WorkerReport), GET /samples (every running
//     node's GET /stats?sample in one answer), POST /get (GETs of its
//     nodes' routes in one answer) and POST /nodes/{node}/stop and
//     /nodes/{node}/start, which take one node down and up again while
//     the others go on;
//  4. on SIGTERM, stop every node and exit.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/bcfab/bcfab/node/api"
	"github.com/bcfab/bcfab/node/config"
	"github.com/bcfab/bcfab/node/dataplane"
	"github.com/bcfab/bcfab/node/patch"
)

// startParallel is how many nodes a worker brings up at once, and
// stopParallel how many it takes down: a node's steps are a few syscalls,
// many of which wait for an RCU grace period (a socket's release, an XDP
// or tc program's detachment), so nodes in flight together share their
// waits. Measured on BCube(4,1) (24 nodes, 2 CPUs): 4 at a time took
// 1.0-1.4 s up and 0.87-0.98 s down; 8 and 16, 1.0-1.3 s and 0.7-0.8 s;
// more nodes starting at once only compete for the CPUs.
const (
	startParallel = 8
	stopParallel  = 16
)

type workerProc struct {
	cfg *config.Worker
	w   *dataplane.Worker
	// panel joins the patched cables between the worker's nodes.
	panel *patch.Panel
	b     Builders
	lv    slog.Level
	log   *slog.Logger

	mu    sync.Mutex
	nodes []*hosted
	ready bool
}

// hosted is one node of a worker process.
type hosted struct {
	name, kind, path string
	state            string
	err              string
	run              *Running
	logf             io.Closer
	busy             sync.RWMutex // held while the node starts or stops; read-held while a sample or a GET reads it
}

func runWorker(ctx context.Context, path string, b Builders, lv slog.Level, log *slog.Logger) (err error) {
	cfg, err := config.LoadWorker(path)
	if err != nil {
		return err
	}
	log = log.With("worker", cfg.Name)
	w, err := dataplane.NewWorker(dataplane.WorkerOptions{Name: cfg.Name, Slack: cfg.Slack.D(),
		PollBudget: cfg.PollBudget.D(), Priority: cfg.Priority})
	if err != nil {
		return err
	}
	defer w.Close()
	p := &workerProc{cfg: cfg, w: w, panel: patch.NewPanel(), b: b, lv: lv, log: log}
	// Last, once every node is down: the copier writes what its
	// captures queued and stops.
	defer p.panel.Close()
	for _, np := range cfg.Nodes {
		p.nodes = append(p.nodes, &hosted{path: np, state: api.NodeStopped})
	}
	srv, err := p.serve()
	if err != nil {
		return err
	}
	defer func() {
		sctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		err = errors.Join(err, srv.Shutdown(sctx))
		os.Remove(cfg.Control)
	}()

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	runErr := make(chan error, 1)
	go func() { runErr <- w.Run(ctx) }()
	defer func() {
		err = errors.Join(err, p.stopAll())
	}()

	start := time.Now()
	if err := p.startAll(ctx); err != nil {
		cancel()
		<-runErr
		return err
	}
	p.mu.Lock()
	p.ready = true
	p.mu.Unlock()
	st := w.Stats()
	log.Info("up", "nodes", len(p.nodes), "took", time.Since(start).Round(time.Millisecond), "control", cfg.Control,
		"pid", os.Getpid(), "tid", st.Tid, "priority", st.Priority)
	if st.PriorityError != "" {
		log.Warn("the worker's thread keeps time as an ordinary thread: wake-ups may come late on a busy machine", "err", st.PriorityError)
	}
	err = <-runErr
	log.Info("down", "err", err)
	return err
}

// startAll brings every node up, startParallel at a time; the first
// failure stops the rest.
func (p *workerProc) startAll(ctx context.Context) error {
	var (
		wg    sync.WaitGroup
		next  = make(chan *hosted)
		errMu sync.Mutex
		first error
	)
	for range min(startParallel, len(p.nodes)) {
		wg.Go(func() {
			for h := range next {
				if err := p.start(h); err != nil {
					errMu.Lock()
					first = cmpErr(first, err)
					errMu.Unlock()
				}
			}
		})
	}
	for _, h := range p.nodes {
		errMu.Lock()
		failed := first != nil
		errMu.Unlock()
		if failed || ctx.Err() != nil {
			break
		}
		next <- h
	}
	close(next)
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

func cmpErr(a, b error) error {
	if a != nil {
		return a
	}
	return b
}

// start brings node h up on the worker.
func (p *workerProc) start(h *hosted) error {
	h.busy.Lock()
	defer h.busy.Unlock()
	if h.run != nil {
		return nil
	}
	n, logf, err := build(h.path, p.b, p.lv, p.log, true)
	if err == nil {
		p.mu.Lock()
		h.name, h.kind = n.Config.Node, n.Kind
		p.mu.Unlock()
		var r *Running
		if r, err = StartPatched(n, p.w, p.cfg.Name, p.panel); err == nil {
			p.mu.Lock()
			h.run, h.logf, h.state, h.err = r, logf, api.NodeRunning, ""
			p.mu.Unlock()
			return nil
		}
		logf.Close()
	}
	p.mu.Lock()
	h.state, h.err = api.NodeFailed, err.Error()
	p.mu.Unlock()
	p.log.Error("node failed", "config", h.path, "err", err)
	return err
}

// stop takes node h down; the others go on.
func (p *workerProc) stop(h *hosted) error {
	h.busy.Lock()
	defer h.busy.Unlock()
	if h.run == nil {
		return nil
	}
	err := h.run.Stop()
	p.mu.Lock()
	h.run, h.state = nil, api.NodeStopped
	if err != nil {
		h.err = err.Error()
	}
	p.mu.Unlock()
	return errors.Join(err, h.logf.Close())
}

// stopAll takes every node down, stopParallel at a time: a node takes
// about 100 ms (its sockets, XDP program and control socket), and a
// worker of two dozen nodes stopping them one by one outlasts the grace a
// lab gives it before SIGKILL.
func (p *workerProc) stopAll() error {
	errs := make([]error, len(p.nodes))
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(stopParallel, len(p.nodes)) {
		wg.Go(func() {
			for i := range next {
				errs[i] = p.stop(p.nodes[i])
			}
		})
	}
	for i := range p.nodes {
		next <- i
	}
	close(next)
	wg.Wait()
	return errors.Join(errs...)
}

// node returns the node named name.
func (p *workerProc) node(name string) *hosted {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.nodes {
		if h.name == name {
			return h
		}
	}
	return nil
}

func (p *workerProc) report() api.WorkerReport {
	st := p.w.Stats()
	r := api.WorkerReport{Name: p.cfg.Name, Lab: p.cfg.Lab, Pid: os.Getpid(), Tid: st.Tid,
		WorkerCounters: st.WorkerCounters, Nodes: []api.WorkerNode{}}
	fillRuntime(&r)
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, h := range p.nodes {
		wn := api.WorkerNode{Name: h.name, Kind: h.kind, State: h.state, Error: h.err}
		if h.run != nil {
			wn.StartedUnixNs = h.run.Started().UnixNano()
		}
		r.Nodes = append(r.Nodes, wn)
	}
	return r
}

// samples is GET /stats?sample of every node that runs, in the order
// the worker hosts them: one answer for a lab's periodic sample where a
// call to each node's socket cost each its own connection's round trip.
// They are asked for together, so the worker's thread copies their
// counters in one round. A node starting or stopping is left out (its
// own socket answers for it).
func (p *workerProc) samples() []api.Stats {
	p.mu.Lock()
	hosted := slices.Clone(p.nodes)
	p.mu.Unlock()
	out := make([]api.Stats, len(hosted))
	var wg sync.WaitGroup
	for i, h := range hosted {
		if !h.busy.TryRLock() {
			continue
		}
		if h.run == nil {
			h.busy.RUnlock()
			continue
		}
		wg.Go(func() {
			defer h.busy.RUnlock()
			out[i] = h.run.Sample()
		})
	}
	wg.Wait()
	return slices.DeleteFunc(out, func(s api.Stats) bool { return s.Node == "" })
}

// get answers POST /get: each of reqs by its node's control routes, in
// the worker's process and all at once, so that what they ask of the
// worker's thread is answered in one round of it. One request to each
// node's own socket cost each a connection's round trip and a round of
// the thread. Only GETs are served this way: they change nothing. A
// node is asked once a request; one named again, one the worker does not
// host and one starting or stopping answer an error of their own.
func (p *workerProc) get(ctx context.Context, reqs []api.NodeGet) []api.NodeAnswer {
	out := make([]api.NodeAnswer, len(reqs))
	seen := make(map[string]bool, len(reqs))
	var wg sync.WaitGroup
	for i, q := range reqs {
		a := &out[i]
		a.Node = q.Node
		fail := func(status int, format string, args ...any) {
			a.Status, a.Error = status, fmt.Sprintf(format, args...)
		}
		h := p.node(q.Node)
		if h == nil {
			fail(http.StatusNotFound, "worker %s hosts no node %q", p.cfg.Name, q.Node)
			continue
		}
		if seen[q.Node] {
			fail(http.StatusBadRequest, "node %s asked twice in one request", q.Node)
			continue
		}
		seen[q.Node] = true
		if !strings.HasPrefix(q.Path, "/") {
			fail(http.StatusBadRequest, "path %q: want one starting with /", q.Path)
			continue
		}
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, q.Path, nil)
		if err != nil {
			fail(http.StatusBadRequest, "path %q: %v", q.Path, err)
			continue
		}
		if !h.busy.TryRLock() {
			fail(http.StatusServiceUnavailable, "node %s is starting or stopping", q.Node)
			continue
		}
		if h.run == nil {
			h.busy.RUnlock()
			fail(http.StatusServiceUnavailable, "node %s is stopped", q.Node)
			continue
		}
		wg.Go(func() {
			defer h.busy.RUnlock()
			rec := recorder{header: http.Header{}}
			h.run.srv.Handler.ServeHTTP(&rec, req)
			a.Status = rec.status
			if a.Status == 0 {
				a.Status = http.StatusOK
			}
			if a.Status == http.StatusOK && json.Valid(rec.body.Bytes()) {
				a.Body = rec.body.Bytes()
			} else {
				a.Error = strings.TrimSpace(rec.body.String())
				if a.Status == http.StatusOK {
					a.Status = http.StatusInternalServerError
					a.Error = fmt.Sprintf("%s%s answered no JSON: %.200q", q.Node, q.Path, a.Error)
				}
			}
		})
	}
	wg.Wait()
	return out
}

// recorder is the http.ResponseWriter a node's route writes its answer
// to under POST /get.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (r *recorder) Header() http.Header { return r.header }

func (r *recorder) WriteHeader(status int) {
	if r.status == 0 {
		r.status = status
	}
}

func (r *recorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	return r.body.Write(b)
}

// serve starts the worker's control socket.
func (p *workerProc) serve() (*http.Server, error) {
	path := p.cfg.Control
	_ = os.Remove(path) // a stale socket of a killed predecessor
	ln, err := net.Listen("unix", path)
	if err != nil {
		return nil, fmt.Errorf("worker %s: control socket: %w", p.cfg.Name, err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		p.mu.Lock()
		ready := p.ready
		p.mu.Unlock()
		if !ready {
			http.Error(w, "starting", http.StatusServiceUnavailable)
			return
		}
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc("GET /worker", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, p.report())
	})
	mux.HandleFunc("GET /samples", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, p.samples())
	})
	mux.HandleFunc("POST /get", func(w http.ResponseWriter, r *http.Request) {
		var reqs []api.NodeGet
		dec := json.NewDecoder(http.MaxBytesReader(w, r.Body, 1<<20))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&reqs); err != nil {
			http.Error(w, "get: "+err.Error(), http.StatusBadRequest)
			return
		}
		writeJSON(w, p.get(r.Context(), reqs))
	})
	lifecycle := func(verb string, act func(*hosted) error) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			h := p.node(r.PathValue("node"))
			if h == nil {
				http.Error(w, fmt.Sprintf("worker %s hosts no node %q", p.cfg.Name, r.PathValue("node")), http.StatusNotFound)
				return
			}
			if err := act(h); err != nil {
				http.Error(w, fmt.Sprintf("%s %s: %v", verb, h.name, err), http.StatusInternalServerError)
				return
			}
			p.log.Info("node "+verb, "node", h.name)
			writeJSON(w, p.report())
		}
	}
	mux.HandleFunc("POST /nodes/{node}/stop", lifecycle("stop", p.stop))
	mux.HandleFunc("POST /nodes/{node}/start", lifecycle("start", p.start))
	debugRoutes(mux)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.log.Error("control socket", "err", err)
		}
	}()
	return srv, nil
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}
