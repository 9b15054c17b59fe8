//go:build linux

package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/bcfab/bcfab/lab/ns3"
	"github.com/bcfab/bcfab/lab/workload"
)

// lab ns3 export writes a lab file's export without root or a lab up;
// lab ns3 compare reads the sim's output there beside bcfab's records
// of the same flows. The sim's output is made up: every flow 10% slower
// than bcfab's.
func TestNS3ExportCompare(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "lab.yaml")
	if err := os.WriteFile(file, []byte("name: nx\ntopology: {kind: bcube, n: 2, k: 1}\nrate: 100M\nfc: pfc\necn: true\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "export")
	var stdout bytes.Buffer
	args := []string{"ns3", "export", "-f", file, "--incast", "3", "--load", "0", "--duration", "2s", "--seed", "7", "-o", out}
	if code, err := run(args, &stdout, &bytes.Buffer{}); code != 0 || err != nil {
		t.Fatalf("lab %s: exit %d, %v", strings.Join(args, " "), code, err)
	}
	if !strings.Contains(stdout.String(), "BCube(2,1) as 12 sim nodes (4 relays)") {
		t.Errorf("lab ns3 export printed %q", stdout.String())
	}
	if code, err := run(args, &bytes.Buffer{}, &bytes.Buffer{}); code != 1 || err == nil || !strings.Contains(err.Error(), "not empty") {
		t.Errorf("lab ns3 export into an export: exit %d, %v; want 1, not empty", code, err)
	}
	flows, err := os.Open(filepath.Join(out, ns3.FlowsFile))
	if err != nil {
		t.Fatal(err)
	}
	sched, err := ns3.ReadFlows(flows)
	flows.Close()
	if err != nil || len(sched) == 0 {
		t.Fatalf("flows.csv: %d flows, %v", len(sched), err)
	}
	// bcfab's records (as lab workload --records writes them, at D =
	// 1000) and the sim's lines, 10% slower.
	var fct strings.Builder
	var recs []workload.FlowRecord
	for _, f := range sched {
		r := workload.FlowRecord{ID: f.ID, Src: f.Src, Dst: f.Dst, Size: f.Size, Start: 1000 * f.Start, Kind: f.Kind, Group: f.Group}
		r.Complete(2000*f.Ideal, 1000*f.Ideal)
		r.SetTarget(1000)
		recs = append(recs, r)
		simFCT := 2 * f.Ideal * 11 / 10
		fct.WriteString(strings.Join([]string{hexAddr(f.SimSrc), hexAddr(f.SimDst), itoa(f.SPort), itoa(f.DPort), itoa(int(f.Size)),
			itoa(int(f.SimStart())), itoa(int(simFCT)), "1"}, " ") + "\n")
	}
	if err := os.WriteFile(filepath.Join(out, ns3.FCTFile), []byte(fct.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	csv := filepath.Join(dir, "records.csv")
	if err := writeFile(csv, func(w io.Writer) error { return workload.WriteCSV(w, recs) }); err != nil {
		t.Fatal(err)
	}
	stdout.Reset()
	if code, err := run([]string{"ns3", "compare", "--sim", out, "--bcfab", csv}, &stdout, &bytes.Buffer{}); code != 0 || err != nil {
		t.Fatalf("lab ns3 compare: exit %d, %v", code, err)
	}
	n := len(sched)
	for _, want := range []string{fmt.Sprintf("bcfab completed %d (0 failed), the sim %d; both %d", n, n, n), "p50 1.10, p95 1.10, p99 1.10"} {
		if !strings.Contains(stdout.String(), want) {
			t.Errorf("lab ns3 compare lacks %q:\n%s", want, stdout.String())
		}
	}
}

func itoa(i int) string { return strconv.Itoa(i) }

// hexAddr is the sim's address of host id as fct.txt writes it.
func hexAddr(id int) string { return fmt.Sprintf("%08x", 0x0b000001+(id/256)<<16+(id%256)<<8) }
