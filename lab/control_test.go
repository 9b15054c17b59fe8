package lab

import (
	"bytes"
	"context"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"testing"
)

// serveSocket serves HTTP on a unix socket at path, answering each
// request with name and the request's body; stop closes the listener
// and every connection, as a daemon that exits does.
func serveSocket(t *testing.T, path, name string) (stop func()) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		_, _ = w.Write(append([]byte(name+" "), b...))
	})}
	go func() { _ = srv.Serve(ln) }()
	return func() { _ = srv.Close() }
}

// A connection kept open to a daemon that went away is not used again:
// the calls after a new daemon listens on the same socket reach it, a
// POST with a body as well as a GET.
func TestControlReconnects(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "h0.sock")
	ctx := context.Background()
	stop := serveSocket(t, sock, "first")
	for range 3 {
		if b, err := controlGet(ctx, sock, "/x"); err != nil || string(b) != "first " {
			t.Fatalf("GET: %q, %v", b, err)
		}
	}
	stop()
	if _, err := controlGet(ctx, sock, "/x"); err == nil {
		t.Fatal("GET answered with no daemon listening")
	}
	stop = serveSocket(t, sock, "second")
	defer stop()
	if b, err := controlDo(ctx, sock, http.MethodPost, "/x", bytes.NewReader([]byte("body"))); err != nil || string(b) != "second body" {
		t.Fatalf("POST after the restart: %q, %v", b, err)
	}
	if b, err := controlGet(ctx, sock, "/x"); err != nil || string(b) != "second " {
		t.Fatalf("GET after the restart: %q, %v", b, err)
	}
	forgetControl(filepath.Dir(sock))
}

// forgetControl forgets the clients of the sockets in one directory only.
func TestForgetControl(t *testing.T) {
	a, ab := filepath.Join("/nonexistent", "a", "h0.sock"), filepath.Join("/nonexistent", "ab", "h0.sock")
	ca, cab := controlClient(a), controlClient(ab)
	if controlClient(a) != ca {
		t.Fatal("a socket's client is not kept")
	}
	forgetControl(filepath.Join("/nonexistent", "a"))
	if _, ok := controlClients.Load(a); ok {
		t.Fatal("the client of a socket in the directory is still kept")
	}
	if c, ok := controlClients.Load(ab); !ok || c.(*http.Client) != cab {
		t.Fatal("the client of a socket in another directory was forgotten")
	}
	forgetControl(filepath.Join("/nonexistent", "ab"))
}
