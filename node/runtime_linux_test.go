package node

import (
	"testing"

	"github.com/bcfab/bcfab/node/api"
)

func TestFillRuntime(t *testing.T) {
	var r api.WorkerReport
	fillRuntime(&r)
	if r.HeapBytes == 0 || r.GoMemBytes < r.HeapBytes || r.Goroutines < 1 || r.Threads < 1 {
		t.Fatalf("runtime view %+v", r)
	}
}
