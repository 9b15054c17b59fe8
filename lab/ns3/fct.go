package ns3

import (
	"bufio"
	"cmp"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/lab/workload"
)

// FCTLine is one line of the sim's fct.txt: a completed flow, written by
// third.cc's qp_finish as "sip dip sport dport size start fct
// standalone_fct", the addresses in hex, the times in ns of its clock.
type FCTLine struct {
	// Src and Dst are the sim's host ids of the flow's addresses.
	Src, Dst     int
	SPort, DPort int
	Size         int64
	// Start is when the flow started on the sim's clock; FCT from then
	// to its last ACK; Standalone the sim's own ideal (its base RTT and
	// the flow at its path's slowest rate), unused by the comparison.
	Start, FCT, Standalone time.Duration
}

// hostAddr is the address the sim gives host id (third.cc,
// node_id_to_ip: 11.x.y.1).
func hostAddr(id int) uint32 {
	return 0x0b000001 + uint32(id/256)<<16 + uint32(id%256)<<8
}

// hostID is the sim's host id of address a, as third.cc's ip_to_node_id
// reads it; ok is false for an address it gives no host.
func hostID(a uint32) (int, bool) {
	id := int(a>>8) & 0xffff
	return id, hostAddr(id) == a
}

// ReadFCT reads the sim's fct.txt.
func ReadFCT(r io.Reader) ([]FCTLine, error) {
	var out []FCTLine
	sc := bufio.NewScanner(r)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		l, err := parseFCT(line)
		if err != nil {
			return nil, fmt.Errorf("fct.txt line %d: %w", n, err)
		}
		out = append(out, l)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("fct.txt: %w", err)
	}
	return out, nil
}

func parseFCT(line string) (FCTLine, error) {
	f := strings.Fields(line)
	if len(f) != 8 {
		return FCTLine{}, fmt.Errorf("%d fields, want 8 (sip dip sport dport size start fct standalone_fct)", len(f))
	}
	var l FCTLine
	var errs []error
	addr := func(i int, what string) int {
		a, err := strconv.ParseUint(f[i], 16, 32)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s %q: not a hex address", what, f[i]))
			return 0
		}
		id, ok := hostID(uint32(a))
		if !ok {
			errs = append(errs, fmt.Errorf("%s %s: no host's address of the sim", what, f[i]))
		}
		return id
	}
	num := func(i int, what string) int64 {
		v, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || v < 0 {
			errs = append(errs, fmt.Errorf("%s %q: want a whole number", what, f[i]))
		}
		return v
	}
	l.Src, l.Dst = addr(0, "sip"), addr(1, "dip")
	l.SPort, l.DPort = int(num(2, "sport")), int(num(3, "dport"))
	l.Size = num(4, "size")
	l.Start, l.FCT, l.Standalone = time.Duration(num(5, "start")), time.Duration(num(6, "fct")), time.Duration(num(7, "standalone_fct"))
	return l, errors.Join(errs...)
}

// ReadFlows reads an export's flows.csv.
func ReadFlows(r io.Reader) ([]Flow, error) {
	cr := csv.NewReader(r)
	head, err := cr.Read()
	if err != nil {
		return nil, fmt.Errorf("flows.csv: %w", err)
	}
	if strings.Join(head, ",") != flowsHeader {
		return nil, fmt.Errorf("flows.csv: header %q, want %q", strings.Join(head, ","), flowsHeader)
	}
	var out []Flow
	for {
		row, err := cr.Read()
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return nil, fmt.Errorf("flows.csv: %w", err)
		}
		line, _ := cr.FieldPos(0)
		var v [11]int64 // the columns up to ideal_target_ns
		for i := range v {
			if v[i], err = strconv.ParseInt(row[i], 10, 64); err != nil {
				return nil, fmt.Errorf("flows.csv line %d: %s %q: want a whole number", line, strings.Split(flowsHeader, ",")[i], row[i])
			}
		}
		kind, err := workload.ParseKind(row[11])
		if err != nil {
			return nil, fmt.Errorf("flows.csv line %d: %w", line, err)
		}
		group, err := strconv.Atoi(row[12])
		if err != nil {
			return nil, fmt.Errorf("flows.csv line %d: group %q: want a whole number", line, row[12])
		}
		simIdeal, err := strconv.ParseInt(row[13], 10, 64)
		if err != nil {
			return nil, fmt.Errorf("flows.csv line %d: sim_ideal_target_ns %q: want a whole number", line, row[13])
		}
		f := Flow{ID: int(v[0]), Src: int(v[1]), Dst: int(v[2]), SimSrc: int(v[3]), SimDst: int(v[4]), SPort: int(v[5]), DPort: int(v[6]),
			Size: v[7], Start: time.Duration(v[8]), Ideal: time.Duration(v[10]), SimIdeal: time.Duration(simIdeal), Kind: kind, Group: group}
		if f.SimStart() != time.Duration(v[9]) {
			return nil, fmt.Errorf("flows.csv line %d: sim_start_ns %d is not start_target_ns + %d", line, v[9], FlowBase.Nanoseconds())
		}
		out = append(out, f)
	}
}

// startSlack is how far a flow's start in fct.txt may be from its
// export's: the sim turns the start's decimal seconds into its clock's
// nanoseconds through a double.
const startSlack = time.Microsecond

// SimRecords joins the sim's fct.txt lines to the export's flows: one
// record per flow, by id, on the target's clock (the sim's times less
// FlowBase), lab times and target times alike; a flow without a line did
// not complete. The slowdown is against the flow's ideal FCT in the
// sim's network (flows.csv's sim_ideal_target_ns), as bcfab's is
// against its ideal in bcfab's. A line of no flow of the export, a second line of one flow,
// or a line whose size or start is not its flow's is an error: the
// output is not of this export.
func SimRecords(flows []Flow, lines []FCTLine) ([]workload.FlowRecord, error) {
	type key struct{ src, dst, sport int }
	idx := make(map[key]int, len(flows))
	for i, f := range flows {
		k := key{f.SimSrc, f.SimDst, f.SPort}
		if _, dup := idx[k]; dup {
			return nil, fmt.Errorf("flows.csv: flows %d and %d both from host %d to %d with source port %d", flows[idx[k]].ID, f.ID, k.src, k.dst, k.sport)
		}
		idx[k] = i
	}
	recs := make([]workload.FlowRecord, len(flows))
	for i, f := range flows {
		r := workload.FlowRecord{ID: f.ID, Src: f.Src, Dst: f.Dst, Size: f.Size, Start: f.Start, IdealFCT: f.SimIdeal, Kind: f.Kind, Group: f.Group}
		r.TargetStart, r.TargetIdealFCT = r.Start, r.IdealFCT
		recs[i] = r
	}
	for n, l := range lines {
		i, ok := idx[key{l.Src, l.Dst, l.SPort}]
		if !ok {
			return nil, fmt.Errorf("fct.txt line %d: no flow of the export from host %d to %d with source port %d: not this export's run", n+1, l.Src, l.Dst, l.SPort)
		}
		f, r := &flows[i], &recs[i]
		switch {
		case r.Completed:
			return nil, fmt.Errorf("fct.txt line %d: flow %d (host %d to %d, source port %d) completed twice", n+1, f.ID, l.Src, l.Dst, l.SPort)
		case l.Size != f.Size:
			return nil, fmt.Errorf("fct.txt line %d: flow %d of %d bytes, flows.csv has %d: not this export's run", n+1, f.ID, l.Size, f.Size)
		case l.Start-f.SimStart() > startSlack || f.SimStart()-l.Start > startSlack:
			return nil, fmt.Errorf("fct.txt line %d: flow %d started at %d ns, flows.csv has %d: not this export's run", n+1, f.ID, l.Start, f.SimStart().Nanoseconds())
		}
		r.Complete(l.FCT, f.SimIdeal)
		r.TargetFCT = r.FCT
	}
	slices.SortFunc(recs, func(a, b workload.FlowRecord) int { return cmp.Compare(a.ID, b.ID) })
	return recs, nil
}

// ReadSim reads an export's flows.csv and the sim's fct.txt in dir, and
// joins them (SimRecords).
func ReadSim(dir string) ([]Flow, []workload.FlowRecord, error) {
	ff, err := os.Open(filepath.Join(dir, FlowsFile))
	if err != nil {
		return nil, nil, fmt.Errorf("%w (is %s an export of lab ns3 export?)", err, dir)
	}
	defer ff.Close()
	flows, err := ReadFlows(ff)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	fct, err := os.Open(filepath.Join(dir, FCTFile))
	if err != nil {
		return nil, nil, fmt.Errorf("%w (has the sim run on %s? scripts/ns3/run.sh)", err, dir)
	}
	defer fct.Close()
	lines, err := ReadFCT(fct)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	recs, err := SimRecords(flows, lines)
	if err != nil {
		return nil, nil, fmt.Errorf("%s: %w", dir, err)
	}
	return flows, recs, nil
}
