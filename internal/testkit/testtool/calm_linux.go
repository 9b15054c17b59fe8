package testtool

import (
	"runtime"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probeWake runs a thread on each CPU the test may use, at a lab worker's
// real-time priority (ProbePriority), sleeping calmTick at a
// time for window, and returns the latest any of its wake-ups came: what
// a worker sleeping until its next deadline would have seen. The sleep
// is a raw clock_nanosleep, so the lateness is the kernel's and the
// host's, not Go's scheduler's. A thread that may not be real-time
// (no CAP_SYS_NICE) measures as an ordinary one.
func probeWake(window time.Duration) time.Duration {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil || set.Count() == 0 {
		time.Sleep(window)
		return 0
	}
	var (
		wg    sync.WaitGroup
		mu    sync.Mutex
		worst time.Duration
	)
	for cpu := 0; cpu < len(set)*64; cpu++ {
		if !set.IsSet(cpu) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			late := probeCPU(cpu, window)
			mu.Lock()
			worst = max(worst, late)
			mu.Unlock()
		}()
	}
	wg.Wait()
	return worst
}

// probeCPU sleeps on cpu for window and returns its latest wake-up. The
// goroutine keeps its OS thread locked, so the thread, with its affinity
// and priority, ends with it.
func probeCPU(cpu int, window time.Duration) time.Duration {
	runtime.LockOSThread()
	var one unix.CPUSet
	one.Set(cpu)
	_ = unix.SchedSetaffinity(0, &one)
	param := struct{ priority int32 }{ProbePriority}
	syscall.RawSyscall(unix.SYS_SCHED_SETSCHEDULER, 0, unix.SCHED_FIFO, uintptr(unsafe.Pointer(&param)))
	tick := unix.NsecToTimespec(calmTick.Nanoseconds())
	var worst time.Duration
	for end := time.Now().Add(window); time.Now().Before(end); {
		t0 := time.Now()
		syscall.RawSyscall6(unix.SYS_CLOCK_NANOSLEEP, unix.CLOCK_MONOTONIC, 0, uintptr(unsafe.Pointer(&tick)), 0, 0, 0)
		worst = max(worst, time.Since(t0)-calmTick)
	}
	return worst
}
