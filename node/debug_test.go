package node

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestDebugRoutes(t *testing.T) {
	mux := http.NewServeMux()
	debugRoutes(mux)
	srv := httptest.NewServer(mux)
	defer srv.Close()
	for _, path := range []string{"/debug/pprof/", "/debug/pprof/heap", "/debug/pprof/goroutine?debug=1"} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || len(b) == 0 {
			t.Errorf("GET %s: %s, %d bytes", path, resp.Status, len(b))
		}
	}
}
