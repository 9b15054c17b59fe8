package lab

import (
	"strings"
)

// An invalid run is one of two kinds. Either the emulation fell behind —
// a port lost link time because its daemon or worker was not scheduled in
// time, a kernel ring overflowed, the links missed the model's delay —
// and the run measured a late machine, not the fabric; running it again
// on a quieter moment may give a valid one. Or a process died, restarted
// or stopped answering, which no second run excuses. Late tells them
// apart, for whatever retries a run (a test, a script) and must retry
// only the first kind.

// lateSigns end the problems that Since reports when the emulation fell
// behind (one each: lost link time, ring drops, the links' RTT, a
// workload's late starts, a worker's skipped time), and begin the line
// that names the workers saturated meanwhile (Health.Saturated, only beside one of the others).
var lateSigns = []string{
	"was not scheduled in time",
	"did not drain its rings",
	"did not realise the target's delay",
	"did not start them on time",
	skippedSign,
	saturatedSign,
}

// skippedSign ends the problem of a worker's skipped time.
const skippedSign = "was later than its replay reaches"

// LateProblem says whether problem, one of a Health's Problems, is the
// emulation falling behind.
func LateProblem(problem string) bool {
	for _, s := range lateSigns {
		if strings.Contains(problem, s) {
			return true
		}
	}
	return false
}

// Lateness is problems joined by "; " and true when there is at least
// one and every one of them is the emulation falling behind; "" and
// false otherwise.
func Lateness(problems []string) (string, bool) {
	if len(problems) == 0 {
		return "", false
	}
	for _, p := range problems {
		if !LateProblem(p) {
			return "", false
		}
	}
	return strings.Join(problems, "; "), true
}

// Late is why h is invalid when it is only because the emulation fell
// behind, and true; "" and false for a valid run and for one with a
// problem no rerun excuses (a daemon died, restarted, did not answer).
func (h *Health) Late() (string, bool) {
	if h.Valid {
		return "", false
	}
	return Lateness(h.Problems)
}

// LateOutput reads a command's output for the emulation health it
// printed (Short's lines, "emulation health INVALID: ..."): their first
// problems joined by "; " and true when at least one health is INVALID
// and each names only the emulation falling behind and no further
// problem; "" and false otherwise, a problem not named in full included.
func LateOutput(out string) (string, bool) {
	var why []string
	for _, line := range strings.Split(out, "\n") {
		_, short, ok := strings.Cut(line, "emulation health INVALID: ")
		if !ok {
			continue
		}
		_, problem, ok := strings.Cut(short, " at most")
		if !ok {
			return "", false
		}
		if _, problem, ok = strings.Cut(problem, "; "); !ok || strings.Contains(problem, " more)") || !LateProblem(problem) {
			return "", false
		}
		why = append(why, problem)
	}
	return strings.Join(why, "; "), len(why) > 0
}
