package workload

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
)

// flowsHeader is the first line of WriteFlows: a schedule's columns, the
// names of Flow's JSON keys.
var flowsHeader = []string{"id", "src", "dst", "size", "start_ns", "kind", "group", "phase", "after"}

// FlowsHeader is the header line of a schedule file (WriteFlows).
var FlowsHeader = strings.Join(flowsHeader, ",")

// WriteFlows writes a schedule as CSV, the format of lab workload
// --dry-run: the header line (FlowsHeader), then a line per flow with
// its id, source and destination hosts, size in bytes, start in
// integer nanoseconds, kind, group, phase and after (0 when it waits for
// no group). Flow.Lose has no column. ReadFlows reads it back.
func WriteFlows(w io.Writer, flows []Flow) error {
	bw := bufio.NewWriter(w)
	bw.WriteString(FlowsHeader + "\n")
	for _, f := range flows {
		fmt.Fprintf(bw, "%d,%d,%d,%d,%d,%s,%d,%d,%d\n", f.ID, f.Src, f.Dst, f.Size, int64(f.Start), f.Kind, f.Group, f.Phase, f.After)
	}
	if err := bw.Flush(); err != nil {
		return fmt.Errorf("write schedule: %w", err)
	}
	return nil
}

// A LineError is what ReadFlows found wrong at a line of its input
// (lines from 1, the header's included).
type LineError struct {
	Line int
	Err  error
}

func (e *LineError) Error() string { return fmt.Sprintf("line %d: %v", e.Line, e.Err) }

func (e *LineError) Unwrap() error { return e.Err }

// ReadFlows reads a schedule in WriteFlows' format, written by it or by
// hand: the header line, then a flow a line. Lines that are blank or
// start with # are skipped, and spaces around a field are not part of
// it. It checks what the file alone can tell: nine columns, every one a
// decimal integer but kind, one of the kinds; ids 0, 1, 2, ... in the
// order of the lines; starts in order (a flow starts no earlier than
// the line before's); phase 0 or 1; group and after not negative; a
// flow that waits (after not 0) in a second phase (phase 1), for a
// group that has flows of a first phase (phase 0). What depends on the
// lab (the hosts, sizes, the window) is lab.CheckFlows'. lines[i] is
// the line of flows[i], for the errors of later checks. An error is a
// *LineError, but for a failed read.
func ReadFlows(r io.Reader) (flows []Flow, lines []int, err error) {
	cr := csv.NewReader(r)
	cr.Comment = '#'
	cr.FieldsPerRecord = -1 // the count is checked here, to say what it should be
	cr.TrimLeadingSpace = true
	cr.ReuseRecord = true
	head := true
	for {
		row, err := cr.Read()
		if err == io.EOF {
			break
		}
		if err != nil {
			var pe *csv.ParseError
			if errors.As(err, &pe) {
				return nil, nil, &LineError{Line: pe.Line, Err: pe.Err}
			}
			return nil, nil, fmt.Errorf("read schedule: %w", err)
		}
		line, _ := cr.FieldPos(0)
		for i := range row {
			row[i] = strings.TrimSpace(row[i])
		}
		if head {
			head = false
			if strings.Join(row, ",") != FlowsHeader {
				return nil, nil, &LineError{Line: line, Err: fmt.Errorf("header %q, want %q", strings.Join(row, ","), FlowsHeader)}
			}
			continue
		}
		f, err := parseFlow(row)
		if err == nil {
			err = checkNext(f, flows)
		}
		if err != nil {
			return nil, nil, &LineError{Line: line, Err: err}
		}
		flows = append(flows, f)
		lines = append(lines, line)
	}
	if head {
		return nil, nil, &LineError{Line: 1, Err: fmt.Errorf("no header, want %q", FlowsHeader)}
	}
	// A flow that waits needs a first phase of its group to wait for.
	first := map[int]bool{}
	for _, f := range flows {
		if f.Phase == 0 {
			first[f.Group] = true
		}
	}
	for i, f := range flows {
		if f.After != 0 && !first[f.After] {
			return nil, nil, &LineError{Line: lines[i], Err: fmt.Errorf("after %d: no flow of group %d's first phase (group %d, phase 0) to wait for", f.After, f.After, f.After)}
		}
	}
	return flows, lines, nil
}

// parseFlow reads a row of a schedule.
func parseFlow(row []string) (Flow, error) {
	var f Flow
	if len(row) != len(flowsHeader) {
		return f, fmt.Errorf("%d columns, want %d (%s)", len(row), len(flowsHeader), FlowsHeader)
	}
	var errs []error
	integer := func(i int) int64 {
		v, err := strconv.ParseInt(row[i], 10, 64)
		if err != nil {
			if ne, ok := err.(*strconv.NumError); ok {
				err = ne.Err
			}
			errs = append(errs, fmt.Errorf("%s %q: %w", flowsHeader[i], row[i], err))
		}
		return v
	}
	f.ID = int(integer(0))
	f.Src = int(integer(1))
	f.Dst = int(integer(2))
	f.Size = integer(3)
	f.Start = time.Duration(integer(4))
	k, err := ParseKind(row[5])
	if err != nil {
		errs = append(errs, err)
	}
	f.Kind = k
	f.Group = int(integer(6))
	f.Phase = int(integer(7))
	f.After = int(integer(8))
	return f, errors.Join(errs...)
}

// checkNext checks f, to come after flows in a schedule.
func checkNext(f Flow, flows []Flow) error {
	switch n := len(flows); {
	case f.ID != n:
		return fmt.Errorf("id %d, want %d: ids number the flows 0, 1, 2, ... in the order of the lines", f.ID, n)
	case n > 0 && f.Start < flows[n-1].Start:
		return fmt.Errorf("start_ns %d before the flow above's %d: the flows go in order of start", int64(f.Start), int64(flows[n-1].Start))
	case f.Phase != 0 && f.Phase != 1:
		return fmt.Errorf("phase %d, want 0 (an incast, a pattern's first phase, the background) or 1 (a pattern's second phase)", f.Phase)
	case f.Group < 0:
		return fmt.Errorf("group %d, want 0 (none) or more", f.Group)
	case f.After < 0:
		return fmt.Errorf("after %d, want 0 (none) or a group", f.After)
	case f.After != 0 && f.Phase != 1:
		return fmt.Errorf("after %d in phase %d: only a second phase (phase 1) waits", f.After, f.Phase)
	}
	return nil
}
