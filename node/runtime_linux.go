package node

import (
	"bytes"
	"os"
	"runtime/metrics"
	"strconv"

	"github.com/bcfab/bcfab/node/api"
)

// runtimeSamples are read without stopping the world (ReadMemStats would
// stop the engine thread too).
var runtimeSamples = []string{
	"/memory/classes/heap/objects:bytes",
	"/memory/classes/total:bytes",
	"/sched/goroutines:goroutines",
}

// fillRuntime sets r's view of the process's memory, goroutines and
// threads.
func fillRuntime(r *api.WorkerReport) {
	s := make([]metrics.Sample, len(runtimeSamples))
	for i, n := range runtimeSamples {
		s[i].Name = n
	}
	metrics.Read(s)
	if s[0].Value.Kind() == metrics.KindUint64 {
		r.HeapBytes = s[0].Value.Uint64()
	}
	if s[1].Value.Kind() == metrics.KindUint64 {
		r.GoMemBytes = s[1].Value.Uint64()
	}
	if s[2].Value.Kind() == metrics.KindUint64 {
		r.Goroutines = int(s[2].Value.Uint64())
	}
	r.Threads = threads()
}

// threads is the process's OS threads (/proc/self/status), 0 if unknown.
func threads() int {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	_, rest, ok := bytes.Cut(b, []byte("\nThreads:"))
	if !ok {
		return 0
	}
	line, _, _ := bytes.Cut(rest, []byte("\n"))
	n, _ := strconv.Atoi(string(bytes.TrimSpace(line)))
	return n
}
