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
// suite runs on (docs/TESTING.md), a lab's run is late while the
// hypervisor takes the vCPUs back (steal time) and on time once it stops,
// seconds to minutes later. Before it runs a late attempt again, RetryLate
// waits for a calm machine: a window in which the CPUs lost at most
// calmSteal of their time to steal, for at most calmBudget. A machine that
// stays busy is not waited for longer: the attempt runs anyway, and says
// what it waited.
const (
	calmWindow = 2 * time.Second
	calmSteal  = 0.02
	calmBudget = 60 * time.Second
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

// sleep is time.Sleep but in RetryLate's test.
var sleep = time.Sleep

// waitCalm waits, a calmWindow at a time, until the CPUs lost at most
// calmSteal of a window's time to steal, or budget has passed. It reports
// how long it waited, the last window's steal share, and whether the
// machine was calm; without /proc/stat it does not wait.
func waitCalm(budget time.Duration) (waited time.Duration, share float64, calm bool) {
	steal0, total0, err := cpuTimes()
	if err != nil {
		return 0, 0, true
	}
	for waited < budget {
		sleep(calmWindow)
		waited += calmWindow
		steal1, total1, err := cpuTimes()
		if err != nil {
			return waited, 0, true
		}
		if total1 > total0 {
			share = float64(steal1-steal0) / float64(total1-total0)
		}
		if share <= calmSteal {
			return waited, share, true
		}
		steal0, total0 = steal1, total1
	}
	return waited, share, false
}
