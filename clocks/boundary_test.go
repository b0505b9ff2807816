package clocks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// These tests pin the edges that mutation testing (scripts/gremlins.sh)
// showed no other test held: each names the mutant class it kills.

// fastLine returns s's stream line with edit applied to the sample.
func fastLine(edit func(*Sample)) []byte {
	s := gb10(1, boot13, 2470, 97)
	if edit != nil {
		edit(s)
	}
	return s.AppendJSON(nil)
}

// TestReaderTakesBoundaryLines: lines at the edge of every field are read,
// and read as the oracle reads them.
func TestReaderTakesBoundaryLines(t *testing.T) {
	cases := map[string]func(*Sample){
		"year 0000, January 1st, midnight, .000": func(s *Sample) { s.T = "0000-01-01T00:00:00.000Z" },
		"December 31st, 23:59:59.999":            func(s *Sample) { s.T = "2026-12-31T23:59:59.999Z" },
		"January 31st of a leap year":            func(s *Sample) { s.T = "2024-01-31T12:00:00.000Z" },
		"February 29th, 2024":                    func(s *Sample) { s.T = "2024-02-29T12:00:00.000Z" },
		"February 29th, 2000":                    func(s *Sample) { s.T = "2000-02-29T12:00:00.000Z" },
		"November 30th":                          func(s *Sample) { s.T = "2026-11-30T12:00:00.000Z" },
		"microseconds and an offset":             func(s *Sample) { s.T = "2026-11-30T12:00:00.123456+01:00" },
		"utilization 100":                        func(s *Sample) { s.UtilizationGPUPct = 100 },
		"utilization 1":                          func(s *Sample) { s.UtilizationGPUPct = 1 },
		"idle":                                   func(s *Sample) { s.UtilizationGPUPct = 0 },
		"idle with unseen bits 0x0":              func(s *Sample) { s.UtilizationGPUPct, s.ThrottleReasonsActive = 0, "0x0" },
		"idle with unseen bits in both cases":    func(s *Sample) { s.UtilizationGPUPct, s.ThrottleReasonsActive = 0, "0x00000000000000aB" },
		"busy with seen bits spelled short":      func(s *Sample) { s.ThrottleReasonsActive = "0x0" },
		"sm clock 1":                             func(s *Sample) { s.SMClockMHz = 1 },
		"sm clock of 12 digits":                  func(s *Sample) { s.SMClockMHz = 999999999999 },
		"pstate with a space and a tilde":        func(s *Sample) { s.PState = "P 0~" },
		"throttle field":                         func(s *Sample) { s.ThrottleField = "clocks_event_reasons.active" },
		"temperature 48.25, power 0":             func(s *Sample) { s.TemperatureGPUC, s.PowerDrawW = ptr(48.25), ptr(0.0) },
		"temperature 48.09":                      func(s *Sample) { s.TemperatureGPUC = ptr(48.09) },
		"temperature -5 last":                    func(s *Sample) { s.TemperatureGPUC = ptr(-5.0) },
		"temperature 0":                          func(s *Sample) { s.TemperatureGPUC = ptr(0.0) },
		"temperature of 15 digits":               func(s *Sample) { s.TemperatureGPUC = ptr(123456789012.345) },
		"power 0.5, memory clock 0":              func(s *Sample) { s.PowerDrawW, s.ClocksMemMHz = ptr(0.5), ptr(0) },
		"gpu name with a quote":                  func(s *Sample) { s.GPUName = `NVIDIA "GB10"` },
		"gpu name with a tilde":                  func(s *Sample) { s.GPUName = "NVIDIA ~ GB10" },
		"gpu name in UTF-8":                      func(s *Sample) { s.GPUName = "NVIDIA GB10 é 😀" },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			stream := append(append(append(fastLine(nil), '\n'), fastLine(edit)...), '\n')
			sameFold(t, stream)
			if _, err := FoldStream(bytes.NewReader(stream)); err != nil {
				t.Fatalf("refused: %v", err)
			}
		})
	}
}

// TestQuotedStaticText: a first sample whose gpu_name needs an escape in
// JSON; a later line holding the raw bytes is refused.
func TestQuotedStaticText(t *testing.T) {
	first := gb10(0, boot13, 2470, 97)
	first.GPUName = `NVIDIA "GB10"`
	line := first.AppendJSON(nil)
	raw := bytes.Replace(line, []byte(`NVIDIA \"GB10\"`), []byte(`NVIDIA "GB10"`), 1)
	raw = bytes.Replace(raw, []byte("10:15:03.123Z"), []byte("10:15:04.123Z"), 1)
	stream := append(append(append(bytes.Clone(line), '\n'), raw...), '\n')
	sameFold(t, stream)
	if _, err := FoldStream(bytes.NewReader(stream)); err == nil || !strings.HasPrefix(err.Error(), "line 2:") {
		t.Fatalf("a raw quote in gpu_name: err %v, want line 2 refused", err)
	}
}

// TestFarClocks: busy clocks far from the first busy one, at the edges of
// the fold's dense counts and past them, fold as the oracle folds them.
func TestFarClocks(t *testing.T) {
	// The dense counts are centred on the first busy clock, 2470:
	// 2470+denseSpan/2 is the first value past them, 2470-denseSpan/2 the
	// first in them.
	busy := []int{2470, 2470, 2470 + denseSpan/2, 2470 + denseSpan/2 - 1, 2470 - denseSpan/2, 2470 - denseSpan/2 - 1, 100, 7000, 7000}
	stream := streamOf(window(boot13, busy, 2))
	sameFold(t, stream)
	f, err := FoldStream(bytes.NewReader(stream))
	if err != nil {
		t.Fatal(err)
	}
	want := []Count{{100, 1}, {2470 - denseSpan/2 - 1, 1}, {2470 - denseSpan/2, 1}, {2470, 2},
		{2470 + denseSpan/2 - 1, 1}, {2470 + denseSpan/2, 1}, {7000, 2}}
	if h := f.GPUs[0].Hist; !slices.Equal(h, want) {
		t.Fatalf("hist %v, want %v", h, want)
	}
}

func TestHexBits(t *testing.T) {
	for s, want := range map[string]uint64{"0x0": 0, "0xaF": 0xaf, "0XfEdCbA9876543210": 0xfedcba9876543210, "0x0000000000000004": 4} {
		var got uint64
		if !hexBits([]byte(s), &got) || got != want {
			t.Errorf("hexBits(%s) = %#x, want %#x", s, got, want)
		}
	}
	for _, s := range []string{"0x", "0xg", "0x00000000000000000", "1x0", "0y0"} {
		if hexBits([]byte(s), new(uint64)) {
			t.Errorf("hexBits(%s) accepted", s)
		}
	}
}

// TestLineLengthBoundary: a line of exactly MaxLineBytes before its
// newline is read; one byte more is refused unread, by the fold and by the
// reader alike.
func TestLineLengthBoundary(t *testing.T) {
	line := fastLine(nil)
	pad := func(n int) []byte {
		// White space before the closing brace is JSON.
		b := append(bytes.Clone(line[:len(line)-1]), bytes.Repeat([]byte(" "), n-len(line))...)
		return append(b, '}')
	}
	for _, c := range []struct {
		n    int
		want string
	}{{MaxLineBytes, ""}, {MaxLineBytes + 1, "line 1: longer than 65536 bytes; refused unread"}} {
		stream := append(pad(c.n), '\n')
		_, err := FoldStream(bytes.NewReader(stream))
		_, serr := scanAll(string(stream))
		if fmt.Sprint(err) != fmt.Sprint(serr) || (c.want == "") != (err == nil) || err != nil && err.Error() != c.want {
			t.Errorf("a %d-byte line: fold %v, scanner %v; want %q", c.n, err, serr, c.want)
		}
	}
}

// TestReadJSONFileBoundary: a file of exactly MaxJSONBytes is read whole;
// one byte more is refused.
func TestReadJSONFileBoundary(t *testing.T) {
	dir := t.TempDir()
	for _, c := range []struct {
		n    int
		want string
	}{{MaxJSONBytes, ""}, {MaxJSONBytes + 1, "larger than 16 MiB; refused unread"}} {
		p := filepath.Join(dir, fmt.Sprint(c.n))
		// Leading white space, the object last: a short read would cut it.
		data := append(bytes.Repeat([]byte(" "), c.n-2), '{', '}')
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		got, err := ReadJSONFile(p)
		switch {
		case c.want == "" && (err != nil || !bytes.Equal(got, data)):
			t.Errorf("%d bytes: read %d, %v", c.n, len(got), err)
		case c.want != "" && (err == nil || !strings.HasSuffix(err.Error(), c.want)):
			t.Errorf("%d bytes: err %v, want %q", c.n, err, c.want)
		}
	}
}

// TestSpreadEvaluatedAtTheFloor: at exactly MinBusySamples busy samples the
// spread is evaluated.
func TestSpreadEvaluatedAtTheFloor(t *testing.T) {
	l := legOf(t, "r1", window(bootF6, repeat([]int{2000, 2200}, MinBusySamples/2), 0), nil)
	wantCodes(t, l.Reasons, CodeSpread)
	wantReason(t, l.Reasons, CodeSpread, "spread 9.52% > 5.0%: min 2000, median 2100, max 2200 MHz, n=30")
}

// TestStaircaseOfTwoLegs: two trusted legs are enough for the merged
// spread.
func TestStaircaseOfTwoLegs(t *testing.T) {
	a := arm(t, "ours", false, flatWindow(boot13, 2470), flatWindow(boot13, 2190))
	wantCodes(t, a.Reasons, CodeStaircase)
	wantReason(t, a.Reasons, CodeStaircase, "arm ours merged spread 12.02% > 5.0%: min 2190, median 2330, max 2470 MHz over 2 legs, n=100")
}

// TestNoHardwareCompareWithoutTrustedLegs: an arm with no trusted leg has
// no machine to compare; the ratio lists its legs, nothing more.
func TestNoHardwareCompareWithoutTrustedLegs(t *testing.T) {
	missing := &Leg{Name: "r1", Reasons: []Reason{{Code: CodeMissing, Message: "no clock record"}}}
	for _, c := range []struct {
		name           string
		ours, baseline *Arm
	}{
		{"baseline untrusted", arm(t, "ours", false, h100Window(boot13, 1980)), Merge("vllm", []*Leg{missing}, false)},
		{"ours untrusted", Merge("ours", []*Leg{missing}, false), arm(t, "vllm", false, h100Window(boot13, 1980))},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := Compare(c.ours, c.baseline, false)
			wantCodes(t, b.Reasons, CodeLegIneligible)
		})
	}
}

// TestSpreadToleranceEdge: a record's spread_pct may sit exactly
// SpreadTolerancePct from the value its numbers give, and no further, both
// when the record is read and when it is reconciled with its stream.
func TestSpreadToleranceEdge(t *testing.T) {
	// min 1990, median 2000, max 2000: spread exactly 0.5%.
	busy := append(flat(2000, 40), 1990)
	for _, c := range []struct {
		spread float64
		want   string
	}{{0.505, ""}, {0.495, ""}, {0.5051, "spread_pct"}, {0.4949, "spread_pct"}} {
		t.Run(fmt.Sprint(c.spread), func(t *testing.T) {
			ss := window(boot13, busy, 0)
			r := recordOf(t, ss, StopPIDExit)
			r.GPUs[0].SMClockMHz.SpreadPct = ptr(c.spread)
			_, perr := ParseRecord(recordJSON(t, r))
			if (perr == nil) != (c.want == "") || perr != nil && !strings.Contains(perr.Error(), "sm_clock_mhz.spread_pct: ") {
				t.Fatalf("ParseRecord: %v, want %q", perr, c.want)
			}
			// reconcile, on a record that ParseRecord would not stop.
			f := NewFoldFrom(ss)
			bad := reconcile(r, f)
			if (len(bad) == 0) != (c.want == "") || len(bad) > 0 && !strings.HasPrefix(bad[0], "sm_clock_mhz.spread_pct: record") {
				t.Fatalf("reconcile: %q, want %q", bad, c.want)
			}
		})
	}
}

// TestMismatchAgainstAnAllIdleStream names the count, and no statistic:
// the stream has none to compare.
func TestMismatchAgainstAnAllIdleStream(t *testing.T) {
	r := recordOf(t, cleanWindow(boot13), StopPIDExit)
	idle := window(boot13, nil, 64)
	l := JudgeLeg("r1", recordJSON(t, r), bytes.NewReader(streamOf(idle)), nil)
	wantCodes(t, l.Reasons, CodeStreamMismatch)
	msg := l.Reasons[0].Message
	if !strings.Contains(msg, "sm_clock_mhz.n: record 61, stream 0") || strings.Contains(msg, "sm_clock_mhz.min") ||
		strings.Contains(msg, "sm_clock_mhz.median") || strings.Contains(msg, "sm_clock_mhz.spread_pct") {
		t.Fatalf("message %q", msg)
	}
}

// TestIntegerCeiling: integers up to 2^40 are read; above, refused.
func TestIntegerCeiling(t *testing.T) {
	line := string(fastLine(nil))
	for _, c := range []struct {
		v    string
		want string
	}{{"1099511627776", ""}, {"1099511627777", "sm_clock_mhz: want a positive integer, found 1099511627777"}} {
		_, err := ParseSample([]byte(strings.Replace(line, `"sm_clock_mhz":2470`, `"sm_clock_mhz":`+c.v, 1)))
		if fmt.Sprint(err) != map[bool]string{true: "<nil>", false: c.want}[c.want == ""] {
			t.Errorf("sm_clock_mhz %s: %v, want %q", c.v, err, c.want)
		}
	}
}

// TestAppendJSONNumbers: optional readings are written as the shortest
// decimal that reads back the same.
func TestAppendJSONNumbers(t *testing.T) {
	line := string(fastLine(func(s *Sample) { s.TemperatureGPUC, s.PowerDrawW = ptr(48.25), ptr(40.675) }))
	if want := `"temperature_gpu_c":48.25,"power_draw_w":40.675}`; !strings.HasSuffix(line, want) {
		t.Fatalf("line %s does not end %s", line, want)
	}
	var v map[string]any
	if err := json.Unmarshal([]byte(line), &v); err != nil || v["temperature_gpu_c"] != 48.25 {
		t.Fatalf("%v %v", err, v)
	}
}

// TestLoadLegRecordNotAFile: a record path that holds a directory is
// clock.invalid, its message naming the path once.
func TestLoadLegRecordNotAFile(t *testing.T) {
	dir := t.TempDir()
	rec := filepath.Join(dir, "r1.summary.json")
	if err := os.Mkdir(rec, 0o755); err != nil {
		t.Fatal(err)
	}
	l := LoadLeg(LegFiles{Name: "r1", RecordPath: rec, StreamPath: filepath.Join(dir, "r1.samples.jsonl")})
	wantCodes(t, l.Reasons, CodeInvalid)
	if want := "clock record " + rec + ": not a regular file (a directory)"; l.Reasons[0].Message != want || l.Unreadable == nil {
		t.Fatalf("message %q, unreadable %v; want %q", l.Reasons[0].Message, l.Unreadable, want)
	}
}

// TestIntegerBoundsEveryKey: every integer field of a sample is read from
// its least value (0, or 1 for a clock) up to maxSampleInt, and refused one
// past either end, naming the field and the value; the reader and the
// oracle agree on each line (a utilization over 100 is read, then refused
// as a percentage). A value at the ceiling is no defect: a later key's
// defect is the one named.
func TestIntegerBoundsEveryKey(t *testing.T) {
	for _, c := range []struct {
		key   string
		least int
		set   func(*Sample, int)
	}{
		{"gpu_index", 0, func(s *Sample, v int) { s.GPUIndex = v }},
		{"sm_clock_mhz", 1, func(s *Sample, v int) { s.SMClockMHz = v }},
		{"clocks_max_sm_mhz", 1, func(s *Sample, v int) { s.ClocksMaxSMMHz = v }},
		{"utilization_gpu_pct", 0, func(s *Sample, v int) { s.UtilizationGPUPct = v }},
		{"clocks_applications_graphics_mhz", 1, func(s *Sample, v int) { s.ClocksApplicationsGraphicsMHz = &v }},
		{"clocks_mem_mhz", 0, func(s *Sample, v int) { s.ClocksMemMHz = &v }},
	} {
		want := "want an integer ≥ 0, found %d"
		if c.least == 1 {
			want = "want a positive integer, found %d"
		}
		for _, v := range []int{c.least - 1, c.least, maxSampleInt, maxSampleInt + 1} {
			line := fastLine(func(s *Sample) { c.set(s, v) })
			_, err := ParseSample(line)
			if c.key == "utilization_gpu_pct" && v > 100 && v <= maxSampleInt {
				// Read as an integer, refused as a percentage.
				if msg := fmt.Sprintf("utilization_gpu_pct: want 0 to 100, found %d", v); err == nil || !strings.Contains(err.Error(), msg) {
					t.Errorf("%s %d: %v, want %q", c.key, v, err, msg)
				}
			} else if v >= c.least && v <= maxSampleInt {
				if err != nil {
					t.Errorf("%s %d: %v, want it read", c.key, v, err)
				}
			} else if msg := c.key + ": " + fmt.Sprintf(want, v); err == nil || !strings.Contains(err.Error(), msg) {
				t.Errorf("%s %d: %v, want %q", c.key, v, err, msg)
			}
			sameStream(t, append(line, '\n'))
		}
		// At the ceiling, with a defect in a key checked after it.
		later, defect := "throttle_reasons_active: empty string", func(s *Sample) { s.ThrottleReasonsActive = "" }
		switch c.key {
		case "utilization_gpu_pct":
			later, defect = "clocks_applications_graphics_mhz: want a positive integer, found 0", func(s *Sample) { s.ClocksApplicationsGraphicsMHz = ptr(0) }
		case "clocks_applications_graphics_mhz", "clocks_mem_mhz":
			continue
		}
		line := fastLine(func(s *Sample) { c.set(s, maxSampleInt); defect(s) })
		if _, err := ParseSample(line); err == nil || !strings.Contains(err.Error(), later) {
			t.Errorf("%s at %d with a later defect: %v, want %q", c.key, maxSampleInt, err, later)
		}
		sameStream(t, append(line, '\n'))
	}
}
