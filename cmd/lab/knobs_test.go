//go:build linux

package main

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/bcfab/bcfab/lab"
)

// Every knob of the table round-trips: its flag gives the lab file the
// same value, the file gives every node the config the flags give, and
// lab inspect writes the value again.
func TestKnobsRoundTrip(t *testing.T) {
	// Knobs that only act with others.
	with := map[string][]string{
		"ate-p": {"--level-order", "ate"}, "ate-cap": {"--level-order", "ate"},
		"bfc-queues": {"--fc", "bfc"}, "bfc-table": {"--fc", "bfc"}, "bfc-assign": {"--fc", "bfc"},
		"relay-queue": {"--fc", "portfc"}, "xoff": {"--fc", "pfc"}, "xon": {"--fc", "pfc"},
		"ci-table": {"--ci", "ici"}, "ci-detect": {"--ci", "ici"}, "ci-kmin": {"--ci", "ici"}, "ci-kmax": {"--ci", "ici"}, "ci-residency": {"--ci", "ici"},
	}
	for _, k := range lab.Knobs() {
		if k.Example == "" || k.Example == k.Default {
			t.Errorf("knob %s: example %q: want a value other than the default", k.Name, k.Example)
			continue
		}
		flag := []string{"--" + k.Name, k.Example}
		if k.Units == "bool" {
			flag = []string{"--" + k.Name + "=" + k.Example}
		}
		args := append(append([]string{"bcube", "--n", "2", "--k", "1", "--name", "rt"}, flag...), with[k.Name]...)
		cmd := upCmd()
		if err := cmd.ParseFlags(args); err != nil {
			t.Fatal(err)
		}
		flags, err := upFlagsOf[cmd].spec(cmd, cmd.Flags().Args())
		if err != nil {
			t.Fatalf("up %q: %v", args, err)
		}
		name := k.Name
		if k.Name == "ci" {
			name = "fc" // ci sets the scheme
		}
		want, _ := lab.KnobByName(name)
		value := want.Get(flags)
		if value == "" {
			t.Errorf("--%s %s: the spec holds the default", k.Name, k.Example)
			continue
		}
		// The lab file of the flags.
		var file bytes.Buffer
		if err := lab.FileOf(flags).WriteYAML(&file, ""); err != nil {
			t.Fatal(err)
		}
		f, err := lab.ParseFile(file.Bytes())
		if err != nil {
			t.Fatalf("--%s: %v\n%s", k.Name, err, file.String())
		}
		if got := f.Values[name]; got != value {
			t.Errorf("--%s %s: the lab file says %s: %q, want %q", k.Name, k.Example, name, got, value)
		}
		spec, err := f.Check()
		if err != nil {
			t.Fatalf("--%s: %v\n%s", k.Name, err, file.String())
		}
		// The nodes' configs.
		p1, err1 := lab.NewPlan(flags)
		p2, err2 := lab.NewPlan(spec)
		if err1 != nil || err2 != nil {
			t.Fatalf("--%s: %v, %v", k.Name, err1, err2)
		}
		for i := range p1.Nodes {
			if !reflect.DeepEqual(p1.Nodes[i].Config, p2.Nodes[i].Config) {
				t.Errorf("--%s %s: %s's config from the flags\n%+v\nfrom the lab file\n%+v", k.Name, k.Example, p1.Nodes[i].Name, p1.Nodes[i].Config, p2.Nodes[i].Config)
				break
			}
		}
		// A knob a node reads reaches its config.
		if k.Reads != "lab up" && k.Reads != "workers" {
			base := append([]string{"bcube", "--n", "2", "--k", "1", "--name", "rt"}, with[k.Name]...)
			p0, err := lab.NewPlan(upSpec(t, base...))
			if err != nil {
				t.Fatal(err)
			}
			same := true
			for i := range p0.Nodes {
				same = same && reflect.DeepEqual(p0.Nodes[i].Config, p1.Nodes[i].Config)
			}
			if same {
				t.Errorf("--%s %s: no node's config changes", k.Name, k.Example)
			}
		}
		// lab inspect -o yaml of the lab the file brings up (its spec
		// resolved, as state.json holds it) says the value, and is the
		// same lab.
		var out bytes.Buffer
		if err := writeLabFile(&out, &lab.State{Lab: "rt", Spec: p2.Spec}); err != nil {
			t.Fatal(err)
		}
		g, err := lab.ParseFile(out.Bytes())
		if err != nil {
			t.Fatalf("--%s: inspect: %v\n%s", k.Name, err, out.String())
		}
		again, err := g.Check()
		if err != nil {
			t.Fatalf("--%s: inspect: %v\n%s", k.Name, err, out.String())
		}
		p3, err := lab.NewPlan(again)
		if err != nil {
			t.Fatalf("--%s: inspect: %v", k.Name, err)
		}
		switch got := g.Values[name]; {
		case name == "dilation": // the resolved spec says D by its rate
			if p3.Spec.Dilation != p1.Spec.Dilation {
				t.Errorf("--dilation %s: lab inspect's lab runs at D = %g\n%s", k.Example, p3.Spec.Dilation, out.String())
			}
		case got != value:
			t.Errorf("--%s %s: lab inspect says %s: %q, want %q\n%s", k.Name, k.Example, name, got, value, out.String())
		}
		for i := range p1.Nodes {
			if !reflect.DeepEqual(p1.Nodes[i].Config, p3.Nodes[i].Config) {
				t.Errorf("--%s %s: %s's config from lab inspect's file differs", k.Name, k.Example, p1.Nodes[i].Name)
				break
			}
		}
	}
}
