package workload

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// A schedule written by WriteFlows reads back the same: background,
// incasts, a moe pattern whose second phases wait (after) and long
// flows, every kind and column.
func TestFlowsRoundTrip(t *testing.T) {
	c := bcube41(t)
	c.Duration = 200 * time.Millisecond
	c.Incast = &Incast{Senders: 4, Size: 100_000, Period: 50 * time.Millisecond}
	c.Pattern = &Pattern{Kind: KindMoE, Period: 40 * time.Millisecond, Size: 32_000, Wait: true}
	c.Long = &Long{Flows: 2, Size: 10_000_000}
	flows := generate(t, c)
	kinds := map[Kind]bool{}
	waits := false
	for _, f := range flows {
		kinds[f.Kind] = true
		waits = waits || f.After != 0
	}
	if len(kinds) != 4 || !waits {
		t.Fatalf("the schedule has kinds %v, waits %v: want 4 kinds and a wait", kinds, waits)
	}
	var b bytes.Buffer
	if err := WriteFlows(&b, flows); err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(b.String(), "id,src,dst,size,start_ns,kind,group,phase,after\n") {
		t.Errorf("WriteFlows' header: %q", strings.SplitN(b.String(), "\n", 2)[0])
	}
	got, lines, err := ReadFlows(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(got, flows) {
		t.Errorf("read back %d flows, not the %d written", len(got), len(flows))
	}
	if len(lines) != len(flows) || lines[0] != 2 || lines[len(lines)-1] != len(flows)+1 {
		t.Errorf("lines %v..., want 2.. %d", lines[:min(3, len(lines))], len(flows)+1)
	}
	var again bytes.Buffer
	if err := WriteFlows(&again, got); err != nil || again.String() != b.String() {
		t.Errorf("written again: %v, same %v", err, again.String() == b.String())
	}
}

// A hand-made file may have comments, blank lines and spaces around its
// fields; its lines are numbered as in the file.
func TestReadFlowsByHand(t *testing.T) {
	in := "# 2 to 1 at 0\n" +
		"id, src, dst, size, start_ns, kind, group, phase, after\n" +
		"\n" +
		"0, 1, 0, 15625000, 0, incast, 1, 0, 0\n" +
		"# the second sender\n" +
		"1, 2, 0, 15625000, 0, incast, 1, 0, 0\n" +
		"2,0,1,1000,5000,ps,2,0,0\n" +
		"3,1,0,1000,9000,ps,2,1,2\n"
	flows, lines, err := ReadFlows(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	want := []Flow{
		{ID: 0, Src: 1, Dst: 0, Size: 15_625_000, Kind: KindIncast, Group: 1},
		{ID: 1, Src: 2, Dst: 0, Size: 15_625_000, Kind: KindIncast, Group: 1},
		{ID: 2, Src: 0, Dst: 1, Size: 1000, Start: 5000, Kind: KindPS, Group: 2},
		{ID: 3, Src: 1, Dst: 0, Size: 1000, Start: 9000, Kind: KindPS, Group: 2, Phase: 1, After: 2},
	}
	if !reflect.DeepEqual(flows, want) {
		t.Errorf("read %+v\nwant %+v", flows, want)
	}
	if !reflect.DeepEqual(lines, []int{4, 6, 7, 8}) {
		t.Errorf("lines %v, want [4 6 7 8]", lines)
	}
}

// Every malformed line is an error that names it, and says what is
// wrong.
func TestReadFlowsErrors(t *testing.T) {
	const head = "id,src,dst,size,start_ns,kind,group,phase,after\n"
	const ok = "0,1,0,1000,0,incast,1,0,0\n"
	for _, c := range []struct {
		name, in string
		line     int
		want     string
	}{
		{"empty", "", 1, "no header"},
		{"no header", ok, 1, `header "0,1,0,1000,0,incast,1,0,0"`},
		{"a record's header", "id,src,dst,size,start_ns,fct_ns\n", 1, "want \"id,src,dst,size,start_ns,kind,group,phase,after\""},
		{"too few columns", head + ok + "1,2,0,1000,0,incast,1,0\n", 3, "8 columns, want 9"},
		{"too many columns", head + "0,1,0,1000,0,incast,1,0,0,7\n", 2, "10 columns, want 9"},
		{"bad size", head + "0,1,0,1MB,0,incast,1,0,0\n", 2, `size "1MB": invalid syntax`},
		{"bad start", head + "0,1,0,1000,1.5,incast,1,0,0\n", 2, `start_ns "1.5": invalid syntax`},
		{"bad src", head + "0,h1,0,1000,0,incast,1,0,0\n", 2, `src "h1"`},
		{"empty after", head + "0,1,0,1000,0,incast,1,0,\n", 2, `after "": invalid syntax`},
		{"huge size", head + "0,1,0,99999999999999999999,0,incast,1,0,0\n", 2, "value out of range"},
		{"unknown kind", head + "0,1,0,1000,0,bulk,1,0,0\n", 2, `flow kind "bulk": want poisson, incast, ps, moe or long`},
		{"ids from 1", head + "1,1,0,1000,0,incast,1,0,0\n", 2, "id 1, want 0"},
		{"ids skip", head + ok + "2,2,0,1000,0,incast,1,0,0\n", 3, "id 2, want 1"},
		{"out of order", head + "0,1,0,1000,50,incast,1,0,0\n1,2,0,1000,10,incast,1,0,0\n", 3, "start_ns 10 before the flow above's 50"},
		{"phase 2", head + "0,1,0,1000,0,ps,1,2,0\n", 2, "phase 2"},
		{"negative group", head + "0,1,0,1000,0,ps,-1,0,0\n", 2, "group -1"},
		{"negative after", head + "0,1,0,1000,0,ps,1,1,-1\n", 2, "after -1"},
		{"a first phase waits", head + "0,1,0,1000,0,ps,1,0,1\n", 2, "only a second phase (phase 1) waits"},
		{"waits for nothing", head + ok + "1,0,1,1000,0,ps,2,1,3\n", 3, "no flow of group 3's first phase"},
		{"a quote", head + "0,1,0,\"1000,0,incast,1,0,0\n", 2, "quote"},
	} {
		_, _, err := ReadFlows(strings.NewReader(c.in))
		var le *LineError
		if !errors.As(err, &le) || le.Line != c.line || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v; want line %d: ...%s...", c.name, err, c.line, c.want)
		}
	}
}
