package foreign

import (
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// TestTornLastLine: a last line torn by the Ctrl-C that stopped the
// recorder (fewer or more values than the header, or a ^C in it) is
// dropped and listed in dropped_lines with why, in every text format; the
// same defect on any other line is refused with file and line (SPEC
// §12.1). The logs are real captures with the torn line appended.
func TestTornLastLine(t *testing.T) {
	read := func(parts ...string) string {
		data, err := os.ReadFile(filepath.Join(append([]string{"..", "testdata"}, parts...)...))
		if err != nil {
			t.Fatal(err)
		}
		return string(data)
	}
	smi := read("smi-real", "a100-vllm-qwen3-8b-tp1", "capture.csv")
	smiRows := strings.Count(smi, "\n")
	smiLine := smiRows + 1 // the appended line's number
	dmon := read("foreign-real", "dmon-535-mutc", "capture.txt")
	dmonLine := strings.Count(dmon, "\n") + 1
	amd := "timestamp,gpu,gfx_activity,gfx_0_clk,used_vram\n" +
		"1754000000,0,90,2100,1000\n1754000001,0,90,2100,1000\n1754000002,0,90,2100,1000\n"
	smiOpts := Options{TZ: zone(t, "-07:00"), TZName: "-07:00"}
	dmonOpts := Options{TZ: time.UTC, TZName: "UTC"}
	const fewer, more, ctrl = "fewer", "more", "^C"
	for _, c := range []struct {
		format, name, log string
		o                 Options
		line              int
		torn              map[string]string // kind → the torn line
		rows              int               // rows kept
		wantFewer         string
		wantMore          string
	}{
		{FormatSMICSV, "capture.csv", smi, smiOpts, smiLine, map[string]string{
			fewer: "2026/07/18 16:02:38.672,0,GPU-713d5b24-2a1e-fd4a-7685-c3d195ff9230,83.05,14",
			more:  "2026/07/18 16:02:38.672,0,GPU-713d5b24-2a1e-fd4a-7685-c3d195ff9230,83.05,1410,1593,0,0,73877,33,1",
			ctrl:  "2026/07/18 16:02:38.672,0,GPU-713d5b24-2a1e-fd4a-7685-c3d195ff9230,83.05,1410,1593,0,0,73877,^C"},
			smiRows - 1, "5 values, the header has 10 columns", "11 values, the header has 10 columns"},
		{FormatDmon, "capture.txt", dmon, dmonOpts, dmonLine, map[string]string{
			fewer: " 20240104   13:54:41      0      7      2      0      3",
			more:  " 20240104   13:54:41      0      7      2      0      3      0      0      0      0      0      0      0   6250   1695   9",
			ctrl:  "^C"},
			6, "7 values, the header has 16 columns", "17 values, the header has 16 columns"},
		{FormatAMDCSV, "a.csv", amd, Options{}, 5, map[string]string{
			fewer: "1754000003,0,9",
			more:  "1754000003,0,90,2100,1000,7",
			ctrl:  "1754000003,0,90,2100,^C"},
			3, "3 values, the header has 5 columns", "6 values, the header has 5 columns"},
	} {
		for _, kind := range []string{fewer, more, ctrl} {
			t.Run(c.format+"/"+kind, func(t *testing.T) {
				line := c.torn[kind]
				res, err := Convert(c.format, []Input{{Path: c.name, Data: []byte(c.log + line)}}, c.o)
				if err != nil {
					t.Fatalf("a torn last line refused: %v", err)
				}
				if n := strings.Count(string(res.Stream), "\n"); n != c.rows {
					t.Errorf("%d samples, want %d", n, c.rows)
				}
				var why string
				switch kind {
				case fewer:
					why = "torn last line: " + c.wantFewer + " (the recorder stopped mid-line)"
				case more:
					why = "torn last line: " + c.wantMore + " (the recorder stopped mid-line)"
				default:
					why = "torn last line: a ^C in it (the Ctrl-C that stopped the recorder)"
				}
				var got *clocks.Dropped
				for i, d := range res.Import.DroppedLines {
					if d.Line == c.line {
						got = &res.Import.DroppedLines[i]
					}
				}
				switch {
				case got == nil:
					t.Fatalf("line %d not in dropped_lines %v", c.line, res.Import.DroppedLines)
				case got.File != c.name || got.Why != why:
					t.Errorf("dropped %+v, want why %q", *got, why)
				}
				// The same line followed by a whole row: refused, naming it.
				_, err = Convert(c.format, []Input{{Path: c.name, Data: []byte(c.log + line + "\n" + strings.TrimSuffix(lastRow(c.log), "\n") + "\n")}}, c.o)
				var want string
				switch kind {
				case ctrl:
					want = c.name + ":" + itoa(c.line) + ":" + itoa(strings.Index(line, "^C")+1) + ": a ^C in a line that is not the last: only the last line may be torn by the Ctrl-C that stopped the recorder"
				case fewer:
					want = c.name + ":" + itoa(c.line) + ": " + c.wantFewer
				default:
					want = c.name + ":" + itoa(c.line) + ": " + c.wantMore
				}
				if err == nil || err.Error() != want {
					t.Errorf("mid-file: %v\nwant %s", err, want)
				}
			})
		}
	}
	// A trailing newline after the torn line, or blank lines, keep it the
	// last line.
	res, err := Convert(FormatAMDCSV, []Input{{Path: "a.csv", Data: []byte(amd + "1754000003,0,9\n\n")}}, Options{})
	if err != nil || !reflect.DeepEqual(res.Import.DroppedLines, []clocks.Dropped{
		{File: "a.csv", Line: 5, Why: "torn last line: 3 values, the header has 5 columns (the recorder stopped mid-line)"},
		{File: "a.csv", Line: 6, Why: "blank"}}) {
		t.Errorf("%v, %+v", err, res)
	}
}

// lastRow is a log's last line, with its newline.
func lastRow(log string) string {
	s := strings.TrimSuffix(log, "\n")
	return s[strings.LastIndexByte(s, '\n')+1:] + "\n"
}

func itoa(n int) string { return strconv.Itoa(n) }
