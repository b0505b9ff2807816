package sampler

import (
	"os"
	"testing"
)

func TestSamplerParseStat(t *testing.T) {
	// A command name may hold spaces and parentheses.
	line := []byte("4242 (my (weird) cmd) S 1 4242 4242 0 -1 4194560 120 0 0 0 3 1 0 0 20 0 1 0 987654 12345678 300 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n")
	state, start, err := parseStat(line)
	if err != nil || state != 'S' || start != "987654" {
		t.Fatalf("parseStat = %c, %q, %v", state, start, err)
	}
	for _, bad := range []string{"", "4242 cmd S 1", "4242 (cmd) S 1 2 3"} {
		if _, _, err := parseStat([]byte(bad)); err == nil {
			t.Errorf("parseStat(%q) accepted", bad)
		}
	}
}

func TestSamplerProcessWatch(t *testing.T) {
	p, err := watchProcess(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if !p.alive() {
		t.Fatal("this process is not alive")
	}
	if p.start == "" {
		t.Skip("no /proc start time here")
	}
	// A pid whose start time changed was reused by another process.
	reused := &process{pid: p.pid, start: p.start + "1"}
	if reused.alive() {
		t.Error("a reused pid counts as the watched process")
	}
	if _, err := watchProcess(0); err == nil {
		t.Error("pid 0 accepted")
	}
}
