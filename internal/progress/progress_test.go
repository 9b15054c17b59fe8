package progress

import (
	"bytes"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode/utf8"
)

func TestParseMode(t *testing.T) {
	for _, n := range ModeNames() {
		m, err := ParseMode(n)
		if err != nil || m.String() != n {
			t.Errorf("%s: %v, %v", n, m, err)
		}
	}
	var m Mode
	if err := m.Set("fancy"); err == nil || !strings.Contains(err.Error(), "want auto, bar, plain, none") {
		t.Errorf("Set(fancy): %v", err)
	}
	if err := m.Set("bar"); err != nil || m != Bar {
		t.Errorf("Set(bar): %v, %v", m, err)
	}
}

// Auto is a bar on a terminal unless TERM=dumb or NO_COLOR says
// otherwise; a mode given is kept.
func TestResolve(t *testing.T) {
	env := func(kv ...string) func(string) string {
		return func(k string) string {
			for i := 0; i+1 < len(kv); i += 2 {
				if kv[i] == k {
					return kv[i+1]
				}
			}
			return ""
		}
	}
	for _, c := range []struct {
		m        Mode
		terminal bool
		getenv   func(string) string
		want     Mode
	}{
		{Auto, true, env("TERM", "xterm-256color"), Bar},
		{Auto, false, env("TERM", "xterm-256color"), Plain},
		{Auto, true, env("TERM", "dumb"), Plain},
		{Auto, true, env("TERM", "xterm", "NO_COLOR", "1"), Plain},
		{Bar, false, env(), Bar},
		{Plain, true, env(), Plain},
		{None, true, env(), None},
	} {
		if got := Resolve(c.m, c.terminal, c.getenv); got != c.want {
			t.Errorf("%v on a terminal %v: %v, want %v", c.m, c.terminal, got, c.want)
		}
	}
	if IsTerminal(&bytes.Buffer{}) {
		t.Error("a buffer is a terminal")
	}
}

var state = State{Done: 3, Total: 12, Unit: "points", Target: 1234567 * time.Nanosecond, TargetTotal: 4 * time.Millisecond,
	D: 5000, ETA: 750 * time.Second, Health: "3 valid", Detail: "websearch-0.5-portfc-s1-r1: 190/687 flows"}

// A state's bar at a fixed width: everything at 120 columns, the meter
// and the detail give way on a narrow terminal, and what is left is cut.
func TestLine(t *testing.T) {
	for _, c := range []struct {
		width int
		want  string
	}{
		{120, "3/12 points [=====               ] · target 1.235ms of 4ms · ETA 12m30s · D = 5000 · 3 valid · websearch-0.5-portfc-s1…"},
		{100, "3/12 points · target 1.235ms of 4ms · ETA 12m30s · D = 5000 · 3 valid · websearch-0.5-portfc-s1-r1…"},
		{80, "3/12 points · target 1.235ms of 4ms · ETA 12m30s · D = 5000 · 3 valid · websea…"},
		{70, "3/12 points · target 1.235ms of 4ms · ETA 12m30s · D = 5000 · 3 valid"},
		{40, "3/12 points · target 1.235ms of 4ms · …"},
		{1, ""},
	} {
		got := state.Bar(c.width)
		if got != c.want {
			t.Errorf("width %d:\n got %q\nwant %q", c.width, got, c.want)
		}
		if n := utf8.RuneCountInString(got); n > max(c.width-1, 0) {
			t.Errorf("width %d: %d columns", c.width, n)
		}
	}
	// With no detail, the meter takes the room left.
	bare := state
	bare.Detail = ""
	if got, want := bare.Bar(90), "3/12 points [====             ] · target 1.235ms of 4ms · ETA 12m30s · D = 5000 · 3 valid"; got != want {
		t.Errorf("no detail:\n got %q\nwant %q", got, want)
	} else if n := utf8.RuneCountInString(got); n != 89 {
		t.Errorf("no detail: %d columns, want 89", n)
	}
	// What is not known is left out, or "?".
	got := State{Done: 2, Unit: "flows", ETA: -1}.Bar(80)
	if want := "2 flows · ETA ?"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestETA(t *testing.T) {
	for _, c := range []struct {
		d    time.Duration
		want string
	}{
		{-1, "?"}, {0, "0s"}, {1499 * time.Millisecond, "1s"}, {59*time.Second + 600*time.Millisecond, "1m00s"},
		{750 * time.Second, "12m30s"}, {time.Hour + 4*time.Minute + 31*time.Second, "1h05m"}, {time.Hour - time.Second, "59m59s"},
		{2*time.Hour - 10*time.Second, "2h00m"},
	} {
		if got := ETAText(c.d); got != c.want {
			t.Errorf("ETAText(%v) = %s, want %s", c.d, got, c.want)
		}
	}
	for _, c := range []struct {
		spent       time.Duration
		done, total float64
		want        time.Duration
	}{
		{time.Minute, 1, 4, 3 * time.Minute},
		{10 * time.Second, 5, 5, 0},
		{10 * time.Second, 6, 5, 0}, // more than planned: nothing left
		{time.Minute, 0, 4, -1},
		{-time.Second, 1, 4, -1},
	} {
		if got := Remaining(c.spent, c.done, c.total); got != c.want {
			t.Errorf("Remaining(%v, %g, %g) = %v, want %v", c.spent, c.done, c.total, got, c.want)
		}
	}
}

// fakeClock is a clock a test moves.
type fakeClock struct{ t time.Time }

func newFake() *fakeClock                { return &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)} }
func (c *fakeClock) now() time.Time      { return c.t }
func (c *fakeClock) add(d time.Duration) { c.t = c.t.Add(d) }

func fixedWidth(n int) func() int { return func() int { return n } }

// drawn is what b holds, emptied.
func drawn(b *bytes.Buffer) string {
	s := b.String()
	b.Reset()
	return s
}

// safeBuffer is a buffer a Printer's ticker writes while the test reads.
type safeBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *safeBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *safeBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// A bar redraws at most every Redraw; an update in between is drawn at
// the next tick, with its ETA counted down; a log line clears the bar,
// goes above it, and the bar comes back; Close clears it.
func TestPrinterBar(t *testing.T) {
	clk := newFake()
	var out bytes.Buffer
	p := New(&out, Options{Mode: Bar, Width: fixedWidth(70), Now: clk.now})
	s := State{Done: 1, Total: 4, Unit: "points", ETA: 90 * time.Second, D: 200}
	p.Update(s)
	if got, want := drawn(&out), "\r"+s.Bar(70)+"\x1b[K"; got != want {
		t.Fatalf("first draw %q, want %q", got, want)
	}
	clk.add(100 * time.Millisecond)
	s.Done = 2
	p.Update(s)
	if got := drawn(&out); got != "" {
		t.Errorf("drawn %q 100ms after the last draw", got)
	}
	clk.add(200 * time.Millisecond)
	p.tick()
	later := s
	later.ETA = 89800 * time.Millisecond // counted down from the update
	if got, want := drawn(&out), "\r"+later.Bar(70)+"\x1b[K"; got != want {
		t.Errorf("tick after a held update: %q, want %q", got, want)
	}
	p.tick()
	if got := drawn(&out); got != "" {
		t.Errorf("tick with nothing new drew %q", got)
	}
	clk.add(time.Second)
	p.tick()
	if got := drawn(&out); !strings.Contains(got, "ETA 1m29s") {
		t.Errorf("a second later the ETA does not count down: %q", got)
	}

	// A log line in two writes: held until its newline.
	if _, err := p.Write([]byte("level=INFO msg=")); err != nil {
		t.Fatal(err)
	}
	if got := drawn(&out); got != "" {
		t.Errorf("half a line written: %q", got)
	}
	if _, err := p.Write([]byte("hello\nand ")); err != nil {
		t.Fatal(err)
	}
	got := drawn(&out)
	if !strings.HasPrefix(got, "\r\x1b[Klevel=INFO msg=hello\n\r2/4 points") || !strings.HasSuffix(got, "\x1b[K") {
		t.Errorf("log line over the bar: %q", got)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got := drawn(&out); got != "\r\x1b[Kand \n" {
		t.Errorf("close: %q, want the bar cleared and the held output", got)
	}
	p.Update(s)
	p.tick()
	if _, err := p.Write([]byte("after\n")); err != nil {
		t.Fatal(err)
	}
	if got := drawn(&out); got != "after\n" || p.Close() != nil {
		t.Errorf("after close: %q", got)
	}
}

// Plain lines are the run's own, no more often than Every, with no
// terminal control; other output passes as it is; None shows nothing.
func TestPrinterPlain(t *testing.T) {
	clk := newFake()
	var out bytes.Buffer
	p := New(&out, Options{Mode: Plain, Every: 5 * time.Second, Now: clk.now})
	if p.Mode() != Plain {
		t.Fatalf("mode %v", p.Mode())
	}
	for i := range 12 {
		p.Update(State{Done: i, Line: "line " + string(rune('a'+i))})
		if i == 3 {
			p.Update(State{Done: i}) // no line at this instant
			if _, err := p.Write([]byte("[2/3] point\n")); err != nil {
				t.Fatal(err)
			}
		}
		clk.add(time.Second)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if got, want := out.String(), "line a\n[2/3] point\nline f\nline k\n"; got != want {
		t.Errorf("plain:\n%s\nwant\n%s", got, want)
	}
	if strings.ContainsAny(out.String(), "\r\x1b") {
		t.Errorf("plain output has terminal control: %q", out.String())
	}

	out.Reset()
	n := New(&out, Options{Mode: None, Now: clk.now})
	n.Update(State{Line: "x"})
	_, _ = n.Write([]byte("log\n"))
	_ = n.Close()
	if out.String() != "log\n" {
		t.Errorf("none: %q", out.String())
	}
}

// Without a clock of its own, a bar draws itself again: a held update
// is shown within a tick, and Close stops the ticker.
func TestPrinterTicker(t *testing.T) {
	var out safeBuffer
	p := New(&out, Options{Mode: Bar, Width: fixedWidth(60)})
	p.Update(State{Done: 1, Total: 2, Unit: "flows", ETA: -1})
	p.Update(State{Done: 2, Total: 2, Unit: "flows", ETA: -1})
	deadline := time.Now().Add(5 * time.Second)
	for !strings.Contains(out.String(), "2/2 flows") && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	got := out.String()
	if !strings.Contains(got, "2/2 flows") || !strings.HasSuffix(got, "\r\x1b[K") {
		t.Errorf("ticker: %q", got)
	}
}
