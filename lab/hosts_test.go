package lab

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Up writes every namespace's hosts file, naming each server at its
// address; Down removes the files, and the directories only where Up
// created them, and leaves what is not the lab's alone.
func TestHostsFiles(t *testing.T) {
	etcNetnsDir = t.TempDir()
	defer func() { etcNetnsDir = "/etc/netns" }()
	spec := Defaults()
	spec.Name, spec.RunRoot, spec.N, spec.K = "hx", t.TempDir(), 2, 1
	p, err := NewPlan(spec)
	if err != nil {
		t.Fatal(err)
	}
	// The user's own: a directory with a resolv.conf, and one with a hosts file.
	mine := filepath.Join(etcNetnsDir, "hx-h1")
	if err := os.MkdirAll(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(mine, "resolv.conf"), []byte("nameserver 10.0.0.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	theirs := filepath.Join(etcNetnsDir, "hx-h2")
	if err := os.MkdirAll(theirs, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(theirs, "hosts"), []byte("10.1.1.1 mine\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	other := filepath.Join(etcNetnsDir, "hx1-h0") // another lab's namespace
	if err := os.MkdirAll(other, 0o755); err != nil {
		t.Fatal(err)
	}

	if err := writeHosts(p); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(HostsPath("hx-h0"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"127.0.0.1 localhost\n", "198.18.0.0 h0\n", "198.18.0.3 h3\n"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("hosts of hx-h0 lacks %q:\n%s", want, b)
		}
	}
	if _, err := os.Stat(HostsPath("hx-s1.1")); err != nil {
		t.Errorf("a switch's namespace has no hosts file: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(theirs, "hosts")); string(b) != "10.1.1.1 mine\n" {
		t.Errorf("the user's hosts file was overwritten: %q", b)
	}

	if err := removeHosts("hx", p.Namespaces()); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(etcNetnsDir)
	var left []string
	for _, e := range ents {
		left = append(left, e.Name())
	}
	if strings.Join(left, " ") != "hx-h1 hx-h2 hx1-h0" {
		t.Errorf("left in /etc/netns: %v, want hx-h1 hx-h2 hx1-h0 (the user's and another lab's)", left)
	}
	if _, err := os.Stat(HostsPath("hx-h1")); err == nil {
		t.Errorf("hx-h1's hosts file is left")
	}
	if _, err := os.Stat(filepath.Join(mine, "resolv.conf")); err != nil {
		t.Errorf("the user's resolv.conf: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(theirs, "hosts")); string(b) != "10.1.1.1 mine\n" {
		t.Errorf("the user's hosts file was touched: %q", b)
	}
}
