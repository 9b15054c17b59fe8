package testtool

import (
	"bufio"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// The machine's lateness comes in bursts: measured on the 2-core VM the
// suite runs on (docs/TESTING.md), a lab's run is late while the host
// takes the vCPUs away (steal time, or a halted vCPU the host is slow to
// run again when its timer fires) and on time once it stops, seconds to
// minutes later. Before it runs a late attempt again, RetryLate waits for
// a calm machine: a window in which the CPUs lost at most calmSteal of
// their time to steal and a real-time thread on each CPU, sleeping
// calmTick at a time, never woke more than calmWake late, for at most
// calmBudget. A machine that stays busy is not waited for longer: the
// attempt runs anyway, and says what it saw.
const (
	calmWindow = 2 * time.Second
	calmSteal  = 0.02
	calmTick   = time.Millisecond
	// calmWake is a wake-up's lateness a lab's worker absorbs: a shaped
	// port catches up on at least 1 ms of time it was not served
	// (scale.Catchup), about 2 ms at the rates the tests run.
	calmWake   = 2 * time.Millisecond
	calmBudget = 90 * time.Second
)

// cpuTimes reads the machine's CPU time so far, in clock ticks: the time
// its CPUs were stolen and the time in all (the first line of /proc/stat;
// guest time is counted in user time already). A var for RetryLate's
// test.
var cpuTimes = func() (steal, total uint64, err error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return 0, 0, err
	}
	defer f.Close()
	s := bufio.NewScanner(f)
	if !s.Scan() {
		return 0, 0, fmt.Errorf("/proc/stat: empty")
	}
	fields := strings.Fields(s.Text())
	if len(fields) < 9 || fields[0] != "cpu" {
		return 0, 0, fmt.Errorf("/proc/stat: first line %q", s.Text())
	}
	// user nice system idle iowait irq softirq steal
	for i, f := range fields[1:9] {
		v, err := strconv.ParseUint(f, 10, 64)
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/stat: %w", err)
		}
		total += v
		if i == 7 {
			steal = v
		}
	}
	return steal, total, nil
}

// ProbePriority is the real-time priority of the wake-up probe's
// threads: a lab worker's, dataplane.DefaultPriority, which a test of
// package lab holds it to (testtool cannot import dataplane: the
// packages below it use testtool in their tests).
const ProbePriority = 10

// sleep is time.Sleep but in RetryLate's test.
var sleep = time.Sleep

// wakeProbe sleeps for window, calmTick at a time, on a real-time
// thread on each CPU, and returns the latest any of them woke; a var for
// RetryLate's test. Without a probe (another OS) it only sleeps.
var wakeProbe = probeWake

// calm is what waitCalm saw of the machine in its last window.
type calm struct {
	Waited time.Duration // in all
	Steal  float64       // the CPUs' time lost to steal, a share
	Wake   time.Duration // the latest wake-up of a probe thread
	OK     bool
}

func (c calm) String() string {
	return fmt.Sprintf("steal %.1f%% of the CPUs' time and wake-ups up to %v late in the last %v", 100*c.Steal, c.Wake.Round(10*time.Microsecond), calmWindow)
}

// waitCalm waits, a calmWindow at a time, until the CPUs lost at most
// calmSteal of a window's time to steal and no probe thread woke more
// than calmWake late, or budget has passed. Without /proc/stat it judges
// the wake-ups alone.
func waitCalm(budget time.Duration) calm {
	var c calm
	steal0, total0, statErr := cpuTimes()
	for c.Waited < budget {
		c.Wake = wakeProbe(calmWindow)
		c.Waited += calmWindow
		c.Steal = 0
		if statErr == nil {
			steal1, total1, err := cpuTimes()
			if err != nil {
				statErr = err
			} else {
				if total1 > total0 {
					c.Steal = float64(steal1-steal0) / float64(total1-total0)
				}
				steal0, total0 = steal1, total1
			}
		}
		if c.Steal <= calmSteal && c.Wake <= calmWake {
			c.OK = true
			return c
		}
	}
	return c
}
