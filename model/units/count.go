package units

import "fmt"

// Count is n things, the word singular for one: Count(1, "frame",
// "frames") is "1 frame", Count(3, ...) "3 frames", Count(0, ...) "0
// frames".
func Count[T ~int | ~int64 | ~uint64 | ~uint32](n T, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
