package progress

import (
	"bytes"
	"io"
	"os"
	"strconv"
	"sync"
	"time"
)

// Redraw is the least time between two draws of a bar: at most four a
// second, so a terminal over a slow link keeps up and the numbers can
// be read.
const Redraw = 250 * time.Millisecond

// tickEvery is how often a bar is drawn again without an Update, its
// ETA counted down, and a State an Update left undrawn shown.
const tickEvery = time.Second

// Options are how a Printer shows progress.
type Options struct {
	// Mode is Bar, Plain or None (Auto: Resolve's, by the environment).
	Mode Mode
	// Every is, in Plain mode, the least time between two lines (0: a
	// line for every Update).
	Every time.Duration
	// Width is the bar's width in columns (nil: the terminal's, else
	// $COLUMNS, else 80).
	Width func() int
	// Now is the clock (nil: time.Now); with one given, nothing redraws
	// the bar by itself (tests call tick).
	Now func() time.Time
}

// Printer shows a run's progress on w, and writes the run's other
// output (Write) above it. Safe for concurrent use.
type Printer struct {
	w     io.Writer
	mode  Mode
	every time.Duration
	width func() int
	now   func() time.Time

	mu      sync.Mutex
	state   State
	have    bool      // a State was given
	at      time.Time // when it was given: its ETA counts down from then
	last    time.Time // the last draw or plain line
	drawn   bool      // a bar is on the screen
	pending bool      // the State has not been drawn (throttled)
	partial []byte    // output written without its newline yet
	closed  bool

	stop chan struct{}
	done chan struct{}
}

// New is a Printer of progress on w.
func New(w io.Writer, o Options) *Printer {
	p := &Printer{w: w, mode: Resolve(o.Mode, IsTerminal(w), os.Getenv), every: o.Every, width: o.Width, now: o.Now}
	if p.width == nil {
		p.width = func() int { return termWidth(w) }
	}
	if p.now == nil {
		p.now = time.Now
		if p.mode == Bar {
			p.stop, p.done = make(chan struct{}), make(chan struct{})
			go p.ticker()
		}
	}
	return p
}

// Mode is the mode the Printer shows progress in: Bar, Plain or None.
func (p *Printer) Mode() Mode { return p.mode }

// Update shows s: a bar is drawn again unless it was less than Redraw
// ago (then the next draw shows s); a plain line is s.Line, unless the
// last was less than Every ago.
func (p *Printer) Update(s State) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return
	}
	now := p.now()
	switch p.mode {
	case Bar:
		p.state, p.have, p.at, p.pending = s, true, now, true
		if p.last.IsZero() || now.Sub(p.last) >= Redraw {
			_ = p.draw(now, nil) // progress is best effort; the run's output reports errors
		}
	case Plain:
		if s.Line == "" || (!p.last.IsZero() && now.Sub(p.last) < p.every) {
			return
		}
		p.last = now
		_, _ = io.WriteString(p.w, s.Line+"\n")
	}
}

// Write writes b, the run's other output (log lines, a line per point):
// above the bar, which it clears and draws again after b's last full
// line; a bar mode holds a line until its newline. Other modes write b
// as it is.
func (p *Printer) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.mode != Bar || p.closed {
		return p.w.Write(b)
	}
	p.partial = append(p.partial, b...)
	i := bytes.LastIndexByte(p.partial, '\n')
	if i < 0 {
		return len(b), nil
	}
	var out []byte
	if p.drawn {
		out = append(out, clearLine...)
		p.drawn = false
	}
	out = append(out, p.partial[:i+1]...)
	p.partial = append(p.partial[:0], p.partial[i+1:]...)
	var err error
	if p.have {
		err = p.draw(p.now(), out)
	} else {
		_, err = p.w.Write(out)
	}
	if err != nil {
		return 0, err
	}
	return len(b), nil
}

// Close clears the bar and writes any output held back; the run's last
// words (a report, an error) then start on a clean line. Updates after
// it are ignored, writes go straight to w.
func (p *Printer) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	var out []byte
	if p.drawn {
		out = append(out, clearLine...)
		p.drawn = false
	}
	if len(p.partial) > 0 {
		out = append(append(out, p.partial...), '\n')
		p.partial = nil
	}
	var err error
	if len(out) > 0 {
		_, err = p.w.Write(out)
	}
	p.mu.Unlock()
	if p.stop != nil {
		close(p.stop)
		<-p.done
	}
	return err
}

// clearLine takes the cursor to the line's start and clears it.
const clearLine = "\r\x1b[K"

// draw writes before (nil: nothing) and the bar of the State, its ETA
// counted down to now, over the line, with mu held.
func (p *Printer) draw(now time.Time, before []byte) error {
	s := p.state
	if s.ETA >= 0 {
		s.ETA = max(0, s.ETA-now.Sub(p.at))
	}
	out := append(before, '\r')
	out = append(out, s.Bar(p.width())...)
	out = append(out, "\x1b[K"...)
	_, err := p.w.Write(out)
	p.drawn = err == nil
	p.last, p.pending = now, false
	return err
}

// tick draws the bar again when a State was left undrawn or the last
// draw is a second old (the ETA counts down).
func (p *Printer) tick() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed || !p.have {
		return
	}
	if now := p.now(); p.pending || now.Sub(p.last) >= tickEvery {
		_ = p.draw(now, nil)
	}
}

func (p *Printer) ticker() {
	defer close(p.done)
	t := time.NewTicker(Redraw)
	defer t.Stop()
	for {
		select {
		case <-p.stop:
			return
		case <-t.C:
			p.tick()
		}
	}
}

// termWidth is the width of the terminal w is, else $COLUMNS, else 80.
func termWidth(w io.Writer) int {
	if f, ok := w.(interface{ Fd() uintptr }); ok {
		if n := terminalWidth(f.Fd()); n > 0 {
			return n
		}
	}
	if n, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && n > 0 {
		return n
	}
	return 80
}
