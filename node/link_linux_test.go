package node

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/bpf"
	"github.com/bcfab/bcfab/node/api"
)

func TestImpairments(t *testing.T) {
	applied := map[string]bpf.Config{}
	var fail error
	im := &impairments{}
	for _, name := range []string{"eth0", "eth1", "bc0nic"} {
		c := bpf.Config{LossPPM: 10_000}
		if name == "bc0nic" {
			c = bpf.Config{}
		}
		im.add(name, c, func(c bpf.Config) error {
			if fail != nil {
				return fail
			}
			applied[name] = c
			return nil
		})
	}
	want := []api.LinkState{{Port: "eth0", LossPPM: 10_000}, {Port: "eth1", LossPPM: 10_000}, {Port: "bc0nic", App: true}}
	if got := im.states(); !reflect.DeepEqual(got, want) {
		t.Fatalf("states = %+v, want %+v", got, want)
	}
	ppm := func(v int) *int { return &v }
	yes, no := true, false

	// Only the fields given change.
	st, err := im.apply(api.LinkRequest{Port: "eth1", LossPPM: ppm(0)})
	if err != nil || st != (api.LinkState{Port: "eth1"}) || applied["eth1"] != (bpf.Config{}) {
		t.Fatalf("loss 0: %+v %v, applied %+v", st, err, applied["eth1"])
	}
	st, err = im.apply(api.LinkRequest{Port: "eth0", Down: &yes})
	if err != nil || st != (api.LinkState{Port: "eth0", LossPPM: 10_000, Down: true}) || applied["eth0"] != (bpf.Config{LossPPM: 10_000, Down: true}) {
		t.Fatalf("down: %+v %v, applied %+v", st, err, applied["eth0"])
	}
	st, err = im.apply(api.LinkRequest{Port: "eth0", Down: &no, LossPPM: ppm(bpf.MaxLossPPM)})
	if err != nil || st != (api.LinkState{Port: "eth0", LossPPM: bpf.MaxLossPPM}) {
		t.Fatalf("up, full loss: %+v %v", st, err)
	}

	// Refusals change nothing.
	before := im.states()
	for _, c := range []struct {
		req  api.LinkRequest
		want string
	}{
		{api.LinkRequest{Port: "eth9", LossPPM: ppm(1)}, `port "eth9": no such port (ports: [eth0 eth1 bc0nic])`},
		{api.LinkRequest{Port: "bc0nic", LossPPM: ppm(1)}, "application port"},
		{api.LinkRequest{Port: "eth1", LossPPM: ppm(-1)}, "loss_ppm -1: want 0..1000000"},
		{api.LinkRequest{Port: "eth1", LossPPM: ppm(bpf.MaxLossPPM + 1)}, "loss_ppm 1000001"},
	} {
		if _, err := im.apply(c.req); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, want %q", c.req, err, c.want)
		}
	}
	fail = errors.New("map update failed")
	if _, err := im.apply(api.LinkRequest{Port: "eth1", Down: &yes}); err == nil || !strings.Contains(err.Error(), "map update failed") {
		t.Errorf("failed update: %v", err)
	}
	if got := im.states(); !reflect.DeepEqual(got, before) {
		t.Errorf("refused requests changed the state: %+v, was %+v", got, before)
	}
	if _, err := im.apply(api.LinkRequest{Port: "eth9"}); !errors.Is(err, errNoPort) {
		t.Errorf("unknown port: %v is not errNoPort", err)
	}
}
