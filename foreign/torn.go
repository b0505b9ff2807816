package foreign

import (
	"fmt"
	"strings"
)

// ctrlC is how a terminal echoes the Ctrl-C that stopped a recorder.
const ctrlC = "^C"

// lastLine is the index of the last line of ls that is not blank, -1 when
// there is none: the line a recorder stopped by Ctrl-C may have torn.
func lastLine(ls []string) int {
	for i := len(ls) - 1; i >= 0; i-- {
		if strings.TrimSpace(ls[i]) != "" {
			return i
		}
	}
	return -1
}

// torn checks a data line with n values where the header has want (SPEC
// §12.1). On the file's last line (last) a line with a ^C in it, or with
// fewer or more values than the header, was torn by the Ctrl-C that
// stopped the recorder: why says so, and the caller drops the line. On any
// other line the same defect is refused, naming the file and line.
func torn(path string, line int, last bool, text string, n, want int) (why string, err error) {
	cut := strings.Contains(text, ctrlC)
	switch {
	case last && cut:
		return "torn last line: a ^C in it (the Ctrl-C that stopped the recorder)", nil
	case last && n != want:
		return fmt.Sprintf("torn last line: %d values, the header has %d columns (the recorder stopped mid-line)", n, want), nil
	case cut:
		return "", refuse(path, line, strings.Index(text, ctrlC)+1, "a ^C in a line that is not the last: only the last line may be torn by the Ctrl-C that stopped the recorder")
	case n != want:
		return "", refuse(path, line, 0, "%d values, the header has %d columns", n, want)
	}
	return "", nil
}
