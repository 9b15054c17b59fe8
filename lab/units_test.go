package lab

import (
	"strings"
	"testing"
)

// Package units has the tables; the lab's wrappers add only the bound of
// a Spec's int fields.
func TestParseSizeBound(t *testing.T) {
	if n, err := ParseSize("1M"); err != nil || n != 1<<20 {
		t.Errorf("ParseSize(1M) = %d, %v", n, err)
	}
	if n, err := ParseSize("4GiB"); err == nil || !strings.Contains(err.Error(), `size "4GiB": at most`) {
		t.Errorf("ParseSize(4GiB) = %d, %v; want an error", n, err)
	}
}
