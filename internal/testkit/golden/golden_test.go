package golden

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fake records what Check reports, so a failure can be asserted.
type fake struct {
	testing.TB
	msg string
}

func (f *fake) Helper() {}
func (f *fake) Fatalf(format string, args ...any) {
	f.msg = format
	panic(f)
}

func check(t *testing.T, path, got string) (msg string) {
	f := &fake{TB: t}
	defer func() {
		if r := recover(); r != nil && r != any(f) {
			panic(r)
		}
		msg = f.msg
	}()
	Check(f, path, got)
	return ""
}

func TestCheck(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.golden")
	if err := os.WriteFile(path, []byte("a\nb\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if m := check(t, path, "a\nb\n"); m != "" {
		t.Errorf("same text reported: %s", m)
	}
	if m := check(t, path, "a\nc\n"); !strings.Contains(m, "differs at line") {
		t.Errorf("a changed line not reported: %q", m)
	}
	if m := check(t, path, "a\nb\nextra\n"); !strings.Contains(m, "differs at line") {
		t.Errorf("an added line not reported: %q", m)
	}
	if m := check(t, filepath.Join(t.TempDir(), "none"), "a"); !strings.Contains(m, "-update writes it") {
		t.Errorf("a missing file not reported: %q", m)
	}
}
