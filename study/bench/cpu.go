//go:build linux

package bench

// CPU accounting of the datapath benchmark. One method for every device,
// bridge included:
//
//   - the blaster's thread is pinned to one core, B; the device's processes
//     (and OVS's PMD thread) to the others;
//   - the device's busy cores over the measurement window are the busy time
//     (user, nice, system, irq, softirq; not idle, iowait or steal) of every
//     core but B, plus B's irq and softirq time, from /proc/stat.
//
// Why B's softirq counts: on veth the receive side of p0 (the bridge's whole
// forwarding path; for AF_XDP devices their XDP program and the copy into
// their socket) runs in softirq inside the blaster's transmit, on B. The
// kernel's tick accounting charges that time to B's softirq column, and
// also to the blaster's stime, which is why "machine minus the blaster's
// process" would hide it. B's user and system time is the blaster's own
// work. The device's own processes' utime+stime (/proc/<pid>/stat) is
// reported beside it, for the devices that have processes.

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// clkTck is USER_HZ, the unit of /proc/stat and /proc/<pid>/stat on every
// Linux architecture Go supports.
const clkTck = 100

// cores splits the CPUs this process may run on into the blaster's and the
// device's.
type cores struct {
	blaster int
	device  unix.CPUSet
}

func splitCores() (cores, error) {
	var all unix.CPUSet
	if err := unix.SchedGetaffinity(0, &all); err != nil {
		return cores{}, fmt.Errorf("bench: affinity: %w", err)
	}
	c := cores{blaster: -1}
	for i := 0; i < len(all)*64; i++ {
		if !all.IsSet(i) {
			continue
		}
		if c.blaster < 0 {
			c.blaster = i
		} else {
			c.device.Set(i)
		}
	}
	if c.device.Count() == 0 {
		return cores{}, errors.New("bench: needs at least 2 CPUs (one for the blaster, the others for the device)")
	}
	return c, nil
}

// mask is the device's cores as a hexadecimal CPU mask (OVS's pmd-cpu-mask).
func (c cores) mask() string {
	var m uint64
	for i := 0; i < 64; i++ {
		if c.device.IsSet(i) {
			m |= 1 << i
		}
	}
	return strconv.FormatUint(m, 16)
}

// pinThread pins the calling goroutine's thread to one CPU. The caller has
// locked the thread and lets it exit with the goroutine, so no other
// goroutine ever runs with this affinity.
func pinThread(cpu int) error {
	var s unix.CPUSet
	s.Set(cpu)
	return unix.SchedSetaffinity(0, &s)
}

// startOn calls start (an exec.Cmd's Start) on a thread whose affinity is
// cpus: the child inherits it from the thread that forks it, and its
// threads from it.
func startOn(start func() error, cpus unix.CPUSet) error {
	errc := make(chan error, 1)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread exits with this goroutine
		if err := unix.SchedSetaffinity(0, &cpus); err != nil {
			errc <- fmt.Errorf("bench: affinity: %w", err)
			return
		}
		errc <- start()
	}()
	return <-errc
}

// cpuTimes is one core's /proc/stat line, in ticks.
type cpuTimes struct{ user, nice, system, idle, iowait, irq, softirq, steal uint64 }

func (t cpuTimes) busy() uint64 { return t.user + t.nice + t.system + t.irq + t.softirq }

// procStat reads the per-core lines of /proc/stat, by CPU number.
func procStat() (map[int]cpuTimes, error) {
	f, err := os.Open("/proc/stat")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	out := map[int]cpuTimes{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fs := strings.Fields(sc.Text())
		if len(fs) < 9 || !strings.HasPrefix(fs[0], "cpu") || fs[0] == "cpu" {
			continue
		}
		n, err := strconv.Atoi(fs[0][3:])
		if err != nil {
			continue
		}
		var v [8]uint64
		for i := range v {
			if v[i], err = strconv.ParseUint(fs[1+i], 10, 64); err != nil {
				return nil, fmt.Errorf("bench: /proc/stat %s: %w", fs[0], err)
			}
		}
		out[n] = cpuTimes{v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]}
	}
	return out, sc.Err()
}

// procTicks is a process's utime+stime (all its threads, live and exited).
func procTicks(pid string) (uint64, error) {
	b, err := os.ReadFile("/proc/" + pid + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the command, which is in parentheses and may hold spaces.
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, fmt.Errorf("bench: /proc/%s/stat: no command", pid)
	}
	fs := strings.Fields(string(b[i+1:]))
	if len(fs) < 13 {
		return 0, fmt.Errorf("bench: /proc/%s/stat: %d fields", pid, len(fs))
	}
	// fs[0] is field 3 (state); utime and stime are fields 14 and 15.
	u, err1 := strconv.ParseUint(fs[11], 10, 64)
	s, err2 := strconv.ParseUint(fs[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, fmt.Errorf("bench: /proc/%s/stat: %w", pid, err)
	}
	return u + s, nil
}

// cpuSample is everything the accounting reads at one end of the window.
type cpuSample struct {
	cores   map[int]cpuTimes
	self    uint64 // the lab process, whose pinned thread is the blaster
	devProc uint64 // the device's processes
}

func sampleCPU(pids []int) (cpuSample, error) {
	var s cpuSample
	var err error
	if s.cores, err = procStat(); err != nil {
		return s, err
	}
	if s.self, err = procTicks("self"); err != nil {
		return s, err
	}
	for _, p := range pids {
		t, err := procTicks(strconv.Itoa(p))
		if err != nil {
			return s, fmt.Errorf("bench: device process %d: %w", p, err)
		}
		s.devProc += t
	}
	return s, nil
}

// cpuUse is the window's accounting, in cores (seconds of CPU per second).
type cpuUse struct {
	device  float64 // busy cores of the device, by the method above
	blaster float64 // the lab process (the blaster)
	procs   float64 // the device's own processes
}

func account(a, b cpuSample, c cores, secs float64) cpuUse {
	var dev uint64
	for n, t1 := range b.cores {
		t0 := a.cores[n]
		if n == c.blaster {
			dev += (t1.irq - t0.irq) + (t1.softirq - t0.softirq)
		} else {
			dev += t1.busy() - t0.busy()
		}
	}
	per := func(ticks uint64) float64 { return float64(ticks) / clkTck / secs }
	return cpuUse{device: per(dev), blaster: per(b.self - a.self), procs: per(b.devProc - a.devProc)}
}
