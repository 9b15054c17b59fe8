// Package progress shows how far a long run is (lab workload, lab
// experiment run): on a terminal a bar, one line redrawn in place, and
// elsewhere plain lines. A run's other output (its log, a line per point)
// written through the Printer goes above the bar, never through it.
//
// A State is what the run has done at one instant; State.Bar renders
// it to a terminal's width, and Printer draws it, at most four times a
// second, and clears it when the run ends.
package progress

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/bcfab/bcfab/model/scale"
)

// Mode is how progress is shown.
type Mode int

const (
	// Auto is Bar on a terminal and Plain elsewhere (Resolve).
	Auto Mode = iota
	// Bar redraws one line in place.
	Bar
	// Plain prints the run's own progress lines, one after another.
	Plain
	// None shows no progress.
	None
)

var modeNames = [...]string{"auto", "bar", "plain", "none"}

// ModeNames are the modes' names, as a flag takes them.
func ModeNames() []string { return modeNames[:] }

// ParseMode reads a mode's name.
func ParseMode(s string) (Mode, error) {
	for i, n := range modeNames {
		if s == n {
			return Mode(i), nil
		}
	}
	return Auto, fmt.Errorf("progress %q: want %s", s, strings.Join(modeNames[:], ", "))
}

func (m Mode) String() string {
	if m < 0 || int(m) >= len(modeNames) {
		return "Mode(" + strconv.Itoa(int(m)) + ")"
	}
	return modeNames[m]
}

// Set and Type make *Mode a flag value (pflag.Value).
func (m *Mode) Set(s string) error {
	v, err := ParseMode(s)
	if err != nil {
		return err
	}
	*m = v
	return nil
}

// Type names the value in generated help.
func (m *Mode) Type() string { return "mode" }

// Resolve is the mode m stands for when progress goes to a terminal or
// not: Auto is a Bar on a terminal unless the environment (getenv) asks
// for plain output, and Plain otherwise. TERM=dumb (a terminal that
// cannot move its cursor) and NO_COLOR (a user who wants no terminal
// effects) ask for plain lines.
func Resolve(m Mode, terminal bool, getenv func(string) string) Mode {
	if m != Auto {
		return m
	}
	if getenv("NO_COLOR") != "" || getenv("TERM") == "dumb" || !terminal {
		return Plain
	}
	return Bar
}

// IsTerminal says whether w is a terminal.
func IsTerminal(w io.Writer) bool {
	f, ok := w.(interface{ Fd() uintptr })
	return ok && isTerminal(f.Fd())
}

// State is what a run has done at one instant.
type State struct {
	// Done of Total units (Unit: "points", "flows") have ended; Total 0:
	// not known.
	Done, Total int
	Unit        string
	// Target is the time the run has emulated so far, on the target's
	// clock, and TargetTotal what it is to emulate (0: not known).
	Target, TargetTotal time.Duration
	// D is the time dilation of the lab running (0: not known).
	D float64
	// ETA is the wall time left (negative: not known).
	ETA time.Duration
	// Health is the emulation health so far, in a few words.
	Health string
	// Detail is the rest, what runs now: the bar shows it last, cut to
	// the width left.
	Detail string
	// Line is the run's own progress line, which Plain prints ("": none
	// at this instant).
	Line string
}

// Sep joins the fields of a bar.
const Sep = " · "

// minMeter is the least width a meter is drawn in, brackets included.
const minMeter = 12

// maxMeter is the widest meter.
const maxMeter = 22

// Bar is s as a bar of at most width-1 columns (the last column left
// free: a terminal wraps a line that fills it): the counts, a meter, the
// target's time, the ETA, D and the health, then the detail. When the
// width is short the meter goes first, then the detail (all but its
// first detailRoom columns go before the meter); what still does not
// fit is cut, with "…".
func (s State) Bar(width int) string {
	room := width - 1
	if room <= 0 {
		return ""
	}
	count := fmt.Sprintf("%d %s", s.Done, s.Unit)
	if s.Total > 0 {
		count = fmt.Sprintf("%d/%d %s", s.Done, s.Total, s.Unit)
	}
	count = strings.TrimSpace(count)
	var fields []string
	if s.Target > 0 || s.TargetTotal > 0 {
		t := "target " + timeText(s.Target)
		if s.TargetTotal > 0 {
			t += " of " + timeText(s.TargetTotal)
		}
		fields = append(fields, t)
	}
	fields = append(fields, "ETA "+ETAText(s.ETA))
	if s.D > 0 {
		fields = append(fields, "D = "+strconv.FormatFloat(s.D, 'f', -1, 64))
	}
	if s.Health != "" {
		fields = append(fields, s.Health)
	}
	rest := Sep + strings.Join(fields, Sep)
	line := count + rest
	if cols(line) > room {
		return cut(line, room)
	}
	detail := 0 // the columns kept for the detail before the meter
	if s.Detail != "" {
		detail = min(cols(Sep)+cols(s.Detail), cols(Sep)+detailRoom)
	}
	if s.Total > 0 {
		if w := min(maxMeter, room-cols(line)-1-detail); w >= minMeter {
			line = count + " " + meter(float64(s.Done)/float64(s.Total), w) + rest
		}
	}
	if left := room - cols(line) - cols(Sep); s.Detail != "" && left >= 4 {
		line += Sep + cut(s.Detail, left)
	}
	return line
}

// detailRoom is the width of the detail that goes before the meter on a
// narrow terminal.
const detailRoom = 24

// meter is a bar of frac, w columns wide with its brackets: "[====    ]".
func meter(frac float64, w int) string {
	inner := w - 2
	frac = min(1, max(0, frac))
	full := int(math.Round(frac * float64(inner)))
	return "[" + strings.Repeat("=", full) + strings.Repeat(" ", inner-full) + "]"
}

// timeText is a time of the target for the bar, to four significant
// digits as the reports print it.
func timeText(d time.Duration) string { return scale.RoundTime(d).String() }

// ETAText is a wall time left, to the second: "45s", "12m30s", "1h05m";
// "?" when not known (negative).
func ETAText(d time.Duration) string {
	if d < 0 {
		return "?"
	}
	s := int64(d.Round(time.Second) / time.Second)
	switch {
	case s >= 3600:
		m := (s + 30) / 60
		return fmt.Sprintf("%dh%02dm", m/60, m%60)
	case s >= 60:
		return fmt.Sprintf("%dm%02ds", s/60, s%60)
	}
	return fmt.Sprintf("%ds", s)
}

// Remaining is the time the rest of a run takes at the pace of its part
// done: spent x (total - done) / done, never negative; -1 (not known)
// before anything is done.
func Remaining(spent time.Duration, done, total float64) time.Duration {
	if done <= 0 || spent < 0 {
		return -1
	}
	return time.Duration(max(0, float64(spent)*(total-done)/done))
}

// cols is the columns s takes on a terminal: one a rune (the bar's
// text has no wide characters).
func cols(s string) int { return utf8.RuneCountInString(s) }

// cut is s in at most n columns, ending in "…" when cut.
func cut(s string, n int) string {
	if cols(s) <= n {
		return s
	}
	if n <= 0 {
		return ""
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
