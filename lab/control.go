package lab

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/bcfab/bcfab/node/api"
)

// Every daemon serves HTTP on the unix socket named by its config's
// Control: GET /healthz answers 200 once the daemon is ready to forward,
// GET /stats answers api.Stats as JSON.

// controlGet performs GET path on the control socket at sock and returns
// the body of a 200 answer.
func controlGet(ctx context.Context, sock, path string) ([]byte, error) {
	return controlDo(ctx, sock, http.MethodGet, path, nil)
}

// controlDo performs method path with body (nil: none) on the control
// socket at sock and returns the body of a 200 answer.
func controlDo(ctx context.Context, sock, method, path string, body io.Reader) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, method, "http://daemon"+path, body)
	if err != nil {
		return nil, err
	}
	resp, err := controlClient(sock).Do(req)
	if err != nil {
		return nil, &ControlError{Method: method, Path: path, Socket: sock, Err: noAnswer(unwrapURLError(err))}
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, &ControlError{Method: method, Path: path, Socket: sock, Err: noAnswer(err)}
	}
	if resp.StatusCode != http.StatusOK {
		// The daemon's own words say what it refused and why.
		return nil, &ControlError{Method: method, Path: path, Socket: sock, Status: resp.StatusCode,
			Err: errors.New(strings.TrimSpace(string(out)))}
	}
	return out, nil
}

// controlIdle is how long a connection to a control socket stays open
// unused: longer than the gaps between a run's polls and samples.
const controlIdle = 5 * time.Second

// controlClients holds a client per control socket whose connections
// stay open between calls. A run asks its daemons a hundred times a
// second or more (flows' starts and outcomes, samples of every node's
// counters); a connection per call cost both ends a dial and an accept,
// a goroutine each and a close, about a fifth of the CPU the calls
// took. A connection whose daemon went away is closed when its end is
// read; Down forgets the lab's sockets as well.
var controlClients sync.Map // socket path -> *http.Client

// controlClient is sock's client.
func controlClient(sock string) *http.Client {
	if c, ok := controlClients.Load(sock); ok {
		return c.(*http.Client)
	}
	tr := &http.Transport{
		DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
			var d net.Dialer
			return d.DialContext(ctx, "unix", sock)
		},
		MaxIdleConnsPerHost: 4,
		IdleConnTimeout:     controlIdle,
		DisableCompression:  true,
	}
	c, _ := controlClients.LoadOrStore(sock, &http.Client{Transport: tr})
	return c.(*http.Client)
}

// forgetControl closes the idle connections to the control sockets in
// directory dir and forgets their clients.
func forgetControl(dir string) {
	prefix := filepath.Clean(dir) + string(filepath.Separator)
	controlClients.Range(func(k, v any) bool {
		if strings.HasPrefix(k.(string), prefix) {
			controlClients.Delete(k)
			v.(*http.Client).CloseIdleConnections()
		}
		return true
	})
}

// ControlError is a control-socket call that failed. Its text is the
// user's: what the daemon answered, or that it did not answer; the
// request and the socket are kept for whoever needs them (logs, tests).
type ControlError struct {
	Method, Path, Socket string
	Status               int // the HTTP status of a refusal; 0: no answer
	Err                  error
}

func (e *ControlError) Error() string { return e.Err.Error() }
func (e *ControlError) Unwrap() error { return e.Err }

// noAnswer says that a daemon did not answer, and the system's reason
// (connection refused, no such file: the daemon is not running).
func noAnswer(err error) error {
	var errno syscall.Errno
	if errors.As(err, &errno) {
		return fmt.Errorf("its daemon does not answer: %w", errno)
	}
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Errorf("its daemon does not answer: %w", context.DeadlineExceeded)
	}
	return fmt.Errorf("its daemon does not answer: %w", err)
}

// unwrapURLError drops net/http's "Get "http://daemon/...":" wrapper, which
// names a made-up host.
func unwrapURLError(err error) error {
	if u, ok := err.(interface{ Unwrap() error }); ok {
		if inner := u.Unwrap(); inner != nil {
			return inner
		}
	}
	return err
}

// Healthz asks the daemon at control socket sock whether it is ready
// (GET /healthz answers 200).
func Healthz(ctx context.Context, sock string) error {
	_, err := controlGet(ctx, sock, "/healthz")
	return err
}

// controlJSON performs GET path on the control socket at sock and decodes
// its JSON answer.
func controlJSON[T any](ctx context.Context, sock, path string) (*T, error) {
	b, err := controlGet(ctx, sock, path)
	if err != nil {
		return nil, err
	}
	v := new(T)
	if err := json.Unmarshal(b, v); err != nil {
		return nil, fmt.Errorf("GET %s on %s: %w", path, sock, err)
	}
	return v, nil
}

// FetchStats reads GET /stats from the daemon at control socket sock.
func FetchStats(ctx context.Context, sock string) (*api.Stats, error) {
	return controlJSON[api.Stats](ctx, sock, "/stats")
}

// FetchSample reads GET /stats?sample from the daemon at control socket
// sock: the stats a periodic sample reads (api.Stats).
func FetchSample(ctx context.Context, sock string) (*api.Stats, error) {
	return controlJSON[api.Stats](ctx, sock, "/stats?sample")
}

// FetchSamples reads GET /samples from the worker at control socket
// sock: the sample of each node it runs (FetchSample), in one answer.
func FetchSamples(ctx context.Context, sock string) ([]api.Stats, error) {
	s, err := controlJSON[[]api.Stats](ctx, sock, "/samples")
	if err != nil {
		return nil, err
	}
	return *s, nil
}

// WorkerGet asks the worker at control socket sock for the GETs reqs of
// its nodes' routes in one POST /get; the answers are in reqs' order,
// each with its node's status (api.NodeAnswer).
func WorkerGet(ctx context.Context, sock string, reqs []api.NodeGet) ([]api.NodeAnswer, error) {
	body, err := json.Marshal(reqs)
	if err != nil {
		return nil, err
	}
	out, err := controlDo(ctx, sock, http.MethodPost, "/get", bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	var as []api.NodeAnswer
	if err := json.Unmarshal(out, &as); err != nil {
		return nil, fmt.Errorf("POST /get on %s: %w", sock, err)
	}
	if len(as) != len(reqs) {
		return nil, fmt.Errorf("POST /get on %s: %d answers to %d requests", sock, len(as), len(reqs))
	}
	return as, nil
}

// FetchWaits reads GET /waits from the daemon at control socket sock.
func FetchWaits(ctx context.Context, sock string) (*api.Waits, error) {
	return controlJSON[api.Waits](ctx, sock, "/waits")
}

// FetchWorker reads GET /worker from the worker at control socket sock.
func FetchWorker(ctx context.Context, sock string) (*api.WorkerReport, error) {
	return controlJSON[api.WorkerReport](ctx, sock, "/worker")
}
