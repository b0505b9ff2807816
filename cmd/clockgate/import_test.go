package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportRefusedExitsTwo: a refused import is exit 2 (an input that
// cannot be read faithfully), names the file, line and column, and leaves
// no file behind; a converted one is exit 0.
func TestImportRefusedExitsTwo(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "x.csv")
	if err := os.WriteFile(log, []byte("timestamp, index, clocks.sm [MHz], utilization.gpu [%]\n2026/07/18 17:00:00.000, 0, [N/A], 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out, errOut bytes.Buffer
	code := Main([]string{"import", "--format", "nvidia-smi-csv", "--tz", "UTC", log, "--out", filepath.Join(dir, "r1")}, nil, &out, &errOut)
	if code != ExitUsage {
		t.Errorf("exit %d, want %d", code, ExitUsage)
	}
	if want := log + `:2:29: clocks.sm: "[N/A]" where a value is required`; !strings.Contains(errOut.String(), want) {
		t.Errorf("stderr %q, want %q", errOut.String(), want)
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "r1.*")); len(left) != 0 {
		t.Errorf("a refused import wrote %v", left)
	}
	if err := os.WriteFile(log, []byte("timestamp, index, clocks.sm [MHz], utilization.gpu [%]\n2026/07/18 17:00:00.000, 0, 1980, 50\n2026/07/18 17:00:01.000, 0, 1980, 50\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code := Main([]string{"import", "--format", "nvidia-smi-csv", "--tz", "UTC", log, "--out", filepath.Join(dir, "r1")}, nil, &out, &errOut); code != ExitOK {
		t.Errorf("exit %d: %s", code, errOut.String())
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "r1.*")); len(left) != 3 {
		t.Errorf("wrote %v, want the stream, the record and import.json", left)
	}
}
