package node

import (
	"net/http"
	"net/http/pprof"
)

// debugRoutes serves the Go runtime's profiles under /debug/pprof/ on a
// daemon's control socket (a unix socket only root reaches), so a lab's
// memory or CPU can be profiled while it runs:
//
//	curl --unix-socket /run/bcfab/LAB/w0.sock http://x/debug/pprof/heap > heap.pb.gz
//	go tool pprof -top heap.pb.gz
func debugRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /debug/pprof/", pprof.Index)
	mux.HandleFunc("GET /debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("GET /debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("GET /debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("GET /debug/pprof/trace", pprof.Trace)
}
