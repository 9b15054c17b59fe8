package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/bcfab/bcfab/lab"
)

// When the emulator drops frames itself - the receiver's daemon is not
// scheduled and the kernel's XSK rings overflow - a lossless flow meets a
// gap that is not the fabric's: rperf says the emulation did not keep up
// and exits 3, for a timed test and a perftest size alike, never blaming
// the flow. The receiver's daemon is stopped (SIGSTOP) for a moment while
// the flow runs, which is what a loaded machine does to it.
func TestRperfRingDrops(t *testing.T) {
	spec := upLab(t, "r", lab.Spec{Workers: lab.PerNode})
	st, err := lab.LoadState(spec.RunRoot, spec.Name)
	if err != nil {
		t.Fatal(err)
	}
	h3, ok := st.Node("h3")
	if !ok || h3.Pid == 0 {
		t.Fatalf("h3: no pid in the lab's state")
	}
	for _, args := range [][]string{
		{"-c", "h3", "-t", "3", "--timeout", "2"},
		{"-c", "h3", "-s", "1K", "--iters", "30000", "--timeout", "2"},
	} {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			done := make(chan result, 1)
			go func() {
				r, err := runRperf(spec, "h0", args...)
				if err != nil {
					r.stderr, r.code = err.Error(), -1
				}
				done <- r
			}()
			// Stop the receiver once the flow is moving, however long
			// rperf took to start on a busy machine: a receiver stopped
			// before the flow began overflows nothing.
			rx := func() uint64 {
				st, err := lab.Stats(spec.RunRoot, spec.Name, "h3")
				if err != nil {
					return 0
				}
				var n uint64
				for _, p := range st.Ports {
					n += p.RxPackets
				}
				return n
			}
			start := rx()
			for deadline := time.Now().Add(10 * time.Second); rx() < start+1000; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatalf("h3 received %d frames in 10 s: the flow did not start", rx()-start)
				}
			}
			if err := syscall.Kill(h3.Pid, syscall.SIGSTOP); err != nil {
				t.Fatal(err)
			}
			time.Sleep(400 * time.Millisecond)
			if err := syscall.Kill(h3.Pid, syscall.SIGCONT); err != nil {
				t.Fatal(err)
			}
			r := <-done
			t.Logf("exit %d: %s", r.code, r.stderr)
			if r.code != 3 || !strings.Contains(r.stderr, "the emulation did not keep up") || !strings.Contains(r.stderr, "XSK") {
				t.Errorf("rperf %q with its receiver stopped: exit %d, %q; want exit 3 saying the emulation did not keep up, with the rings' drops\n%s",
					args, r.code, r.stderr, r.stdout)
			}
			if strings.Contains(r.stdout, "rperf Done.") {
				t.Errorf("an invalid run reported done:\n%s", r.stdout)
			}
		})
	}
}
