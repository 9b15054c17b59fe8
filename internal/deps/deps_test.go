package deps

import (
	"os/exec"
	"strings"
	"testing"
)

// Tools that talk to daemons link none of the datapath: API types live
// in api, configs in config. The bare forwarder, the benchmark's
// baseline, links neither the lab nor the benchmark.
func TestDeps(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command")
	}
	for _, c := range []struct {
		pkg       string
		forbidden []string
	}{
		{"./cmd/rperf", []string{"node/dataplane", "node/patch", "xdp", "bpf", "node", "hostd", "swd"}},
		{"./lab", []string{"node/dataplane", "node/patch", "xdp", "bpf", "node", "hostd", "swd"}},
		{"./lab/metrics", []string{"node/dataplane", "node/patch", "xdp", "bpf", "node", "hostd", "swd"}},
		{"./lab/ns3", []string{"node/dataplane", "node/patch", "xdp", "bpf", "node", "hostd", "swd"}},
		{"./cmd/xdpfwd", []string{"study/bench", "lab", "hostd", "swd"}},
	} {
		out, err := exec.Command("go", "list", "-deps", "../../"+strings.TrimPrefix(c.pkg, "./")).CombinedOutput()
		if err != nil {
			t.Fatalf("go list -deps %s: %v\n%s", c.pkg, err, out)
		}
		deps := map[string]bool{}
		for _, d := range strings.Fields(string(out)) {
			deps[d] = true
		}
		for _, f := range c.forbidden {
			if deps["github.com/bcfab/bcfab/"+f] {
				t.Errorf("%s links %s", c.pkg, f)
			}
		}
	}
}
