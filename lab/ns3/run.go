package ns3

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/bcfab/bcfab/lab/workload"
	"github.com/bcfab/bcfab/model/scale"
)

// The sim's program and its libraries in a checkout that
// scripts/ns3/fetch.sh made and scripts/ns3/build.sh built: waf puts
// both under simulation/build, and the program finds the libraries by
// LD_LIBRARY_PATH, as waf --run sets it.
const (
	programPath = "simulation/build/scratch/third"
	// programSource is the program's source, where Run looks for the
	// keys an export needs beyond the stock sim's.
	programSource = "simulation/scratch/third.cc"
	libDir        = "simulation/build"
	// LogFile is where Run writes what the program prints, in the
	// export's directory.
	LogFile = "sim.log"
)

// Program is the path of the sim's program in the checkout dir, or an
// error that says how to get it.
func Program(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("no simulator checkout: give the directory scripts/ns3/fetch.sh cloned and scripts/ns3/build.sh built")
	}
	p := filepath.Join(dir, programPath)
	st, err := os.Stat(p)
	if err != nil {
		return "", fmt.Errorf("%s has no built simulator (%s): run scripts/ns3/build.sh %s: %w", dir, programPath, dir, err)
	}
	if st.IsDir() || st.Mode()&0o111 == 0 {
		return "", fmt.Errorf("%s is not an executable program: run scripts/ns3/build.sh %s", p, dir)
	}
	return p, nil
}

// checkKeys fails when the export in exp sets a key of config.txt that
// the sim in the checkout dir does not read (QPMaxRateKey): the sim
// would skip it and run another network than the export's.
func checkKeys(dir, exp string) error {
	cfg, err := os.ReadFile(filepath.Join(exp, ConfigFile))
	if err != nil {
		return err
	}
	for line := range strings.Lines(string(cfg)) {
		if k, _, _ := strings.Cut(line, " "); k == QPMaxRateKey {
			return Reads(dir, QPMaxRateKey)
		}
	}
	return nil
}

// Reads checks that the sim in the checkout dir reads config.txt's key
// (QPMaxRateKey), which the stock sim skips, value and all; it names the
// script that makes a sim that does.
func Reads(dir, key string) error {
	src, err := os.ReadFile(filepath.Join(dir, programSource))
	if err != nil {
		return fmt.Errorf("%s has no %s to check that its sim reads %s: %w", dir, programSource, key, err)
	}
	if !strings.Contains(string(src), `"`+key+`"`) {
		return fmt.Errorf("the export sets %s (host links at the servers' whole capacity), which the sim in %s does not read: make a copy that does with scripts/ns3/qp-rate.sh %s NEW", key, dir, dir)
	}
	return nil
}

// Run runs the sim built in the checkout dir on the export in exp, in
// that directory (its config.txt names every file by its bare name),
// and returns when the program has exited; its output is in exp's
// LogFile. The sim writes fct.txt, pfc.txt and qlen.txt beside its
// input; ReadSim reads them.
func Run(ctx context.Context, dir, exp string) error {
	prog, err := Program(dir)
	if err != nil {
		return err
	}
	if err := checkKeys(dir, exp); err != nil {
		return err
	}
	prog, err = filepath.Abs(prog)
	if err != nil {
		return err
	}
	lib, err := filepath.Abs(filepath.Join(dir, libDir))
	if err != nil {
		return err
	}
	log, err := os.Create(filepath.Join(exp, LogFile))
	if err != nil {
		return err
	}
	defer log.Close()
	cmd := exec.CommandContext(ctx, prog, ConfigFile)
	cmd.Dir = exp
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "LD_LIBRARY_PATH="+lib+pathSuffix(os.Getenv("LD_LIBRARY_PATH")))
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the simulator on %s: %w (its output: %s)", exp, err, filepath.Join(exp, LogFile))
	}
	return nil
}

func pathSuffix(p string) string {
	if p == "" {
		return ""
	}
	return ":" + p
}

// LabRecords are the sim's records (SimRecords, on the target's clock)
// on the lab's clock of model m: start, FCT and ideal FCT x D, the
// target's times kept beside them, as a lab's records have them. A
// result of the sim then goes through what a lab's result does.
func LabRecords(recs []workload.FlowRecord, m scale.Model) []workload.FlowRecord {
	out := make([]workload.FlowRecord, len(recs))
	for i, r := range recs {
		r.TargetStart, r.TargetFCT, r.TargetIdealFCT = r.Start, r.FCT, r.IdealFCT
		r.Start, r.IdealFCT = m.Time(r.Start), m.Time(r.IdealFCT)
		if r.Completed {
			r.FCT = m.Time(r.FCT)
		}
		out[i] = r
	}
	return out
}

// Pauses is what the sim's pfc.txt in the export exp counts: the pause
// frames its devices received (a line of type 1; 0 is a resume), and
// when its last one was received, on the target's clock (0: none).
func Pauses(exp string) (pauses int, last time.Duration, err error) {
	f, err := os.Open(filepath.Join(exp, PFCFile))
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		if len(fs) != 5 {
			return 0, 0, fmt.Errorf("%s line %d: %d fields, want 5 (time node type device pause)", PFCFile, n, len(fs))
		}
		t, terr := strconv.ParseInt(fs[0], 10, 64)
		if terr != nil {
			return 0, 0, fmt.Errorf("%s line %d: time %q: %w", PFCFile, n, fs[0], terr)
		}
		if fs[4] == "1" {
			pauses++
			last = max(last, time.Duration(t)-FlowBase)
		}
	}
	return pauses, last, sc.Err()
}

// Drops counts the packets the sim dropped in the export exp, as its
// switches print them to the program's output (LogFile): a line with
// "Drop:" per packet ("Headroom full": the PFC headroom overflowed).
func Drops(exp string) (int, error) {
	f, err := os.Open(filepath.Join(exp, LogFile))
	if err != nil {
		return 0, err
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.Contains(sc.Text(), " Drop: ") {
			n++
		}
	}
	return n, sc.Err()
}
