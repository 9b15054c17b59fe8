package progress

import "golang.org/x/sys/unix"

// isTerminal says whether fd is a terminal: it has terminal attributes.
func isTerminal(fd uintptr) bool {
	_, err := unix.IoctlGetTermios(int(fd), unix.TCGETS)
	return err == nil
}

// terminalWidth is the columns of terminal fd (0: not known).
func terminalWidth(fd uintptr) int {
	ws, err := unix.IoctlGetWinsize(int(fd), unix.TIOCGWINSZ)
	if err != nil {
		return 0
	}
	return int(ws.Col)
}
