package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/model/scale"
)

// A target file lays its keys over the papers' network, and refuses a
// key it does not know.
func TestResolveTargetFile(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	p := write("sim.yaml", "ack-every: 1\necn-at-dequeue: true\n")
	got, err := ResolveTarget(p, 0)
	if err != nil {
		t.Fatal(err)
	}
	want := scale.Papers()
	want.Name, want.AckEvery, want.ECNAtDequeue = p, 1, true
	if got != want {
		t.Fatalf("target %+v, want %+v", got, want)
	}
	if pt, _ := ResolveTarget("papers", 0); pt.ECNAtDequeue || pt.AckEvery != 4 {
		t.Fatalf("papers: marks at dequeue %v, ACK every %d", pt.ECNAtDequeue, pt.AckEvery)
	}
	for _, text := range []string{"nic-queue-bytes: -5\n", "nic-queue-bytes: 6000000\n"} {
		if _, err := ResolveTarget(write("q.yaml", text), 0); err == nil || !strings.Contains(err.Error(), "nic queue") {
			t.Errorf("%q: %v", text, err)
		}
	}
	bad := write("bad.yaml", "ecn-at-leave: true\n")
	if _, err := ResolveTarget(bad, 0); err == nil || !strings.Contains(err.Error(), "ecn-at-leave") {
		t.Fatalf("unknown key: %v", err)
	}
}
