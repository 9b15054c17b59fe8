package xdp

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// A UMEM is mapped in small pages, whatever the kernel's default for
// transparent huge pages, and populated: its mapping carries the
// no-huge-page flag ("nh" in /proc/self/smaps), holds no huge page, and
// every page is resident before a frame is used.
func TestUMEMSmallPagesPopulated(t *testing.T) {
	const n = 32 << 20
	region, err := mapUMEM(n)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Munmap(region)
	start := uintptr(unsafe.Pointer(&region[0]))
	entry := smapsEntry(t, start)
	if !strings.Contains(entry["VmFlags"], " nh") {
		t.Errorf("UMEM mapping's flags %q: want nh (MADV_NOHUGEPAGE)", entry["VmFlags"])
	}
	if h := entry["AnonHugePages"]; h != "0 kB" {
		t.Errorf("UMEM mapping holds %s of huge pages, want none", h)
	}
	if rss, want := entry["Rss"], fmt.Sprintf("%d kB", n>>10); rss != want {
		t.Errorf("UMEM mapping resident %s, want all of it (%s)", rss, want)
	}
}

// smapsEntry is the /proc/self/smaps entry of the mapping starting at
// start, its fields by name (VmFlags with a leading space).
func smapsEntry(t *testing.T, start uintptr) map[string]string {
	t.Helper()
	b, err := os.ReadFile("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	head := fmt.Sprintf("%x-", start)
	var entry map[string]string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, head) {
			entry = map[string]string{}
			continue
		}
		if entry == nil {
			continue
		}
		k, v, ok := strings.Cut(line, ":")
		if !ok || strings.Contains(k, "-") {
			break // the next mapping
		}
		if k == "VmFlags" {
			entry[k] = v
			break
		}
		entry[k] = strings.TrimSpace(v)
	}
	if entry == nil {
		t.Fatalf("no mapping at %#x in /proc/self/smaps", start)
	}
	return entry
}
