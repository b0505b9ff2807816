package sampler

import (
	"bytes"
	"encoding/json"
	"math"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/clockgate/clockgate/clocks"
)

// csvFuzzFields are the field lists FuzzParseCSVLine reads a line with,
// chosen by the fuzz input's first byte.
var csvFuzzFields = [][]string{
	QueryFields(FieldEventReasons),
	QueryFields(FieldThrottleReasons),
	append(QueryFields(FieldEventReasons), OptionalQueryFields()...),
	csvGB10Fields,
	{"index", "gpu_uuid", "gpu_name", "clocks.applications.gr", "clocks_throttle_reasons.active", "clocks.current.memory", "power.draw", "temperature.gpu"},
}

// FuzzParseCSVLine holds the nvidia-smi CSV parser to its field contracts
// on any line, and holds the sampler to the summarizer: a reading it
// accepts under the canonical query becomes a stream line that the strict
// stream parser and the fast fold take as the same sample.
func FuzzParseCSVLine(f *testing.F) {
	f.Add(byte(0), csvH100Idle)
	f.Add(byte(0), csvH100Busy)
	f.Add(byte(1), strings.Replace(csvH100Busy, "[Requested functionality has been deprecated]", "1755", 1))
	f.Add(byte(2), csvH100Busy+", 47, 250.50 W, 2619 MHz")
	f.Add(byte(2), csvH100Busy+", -5, 0.5, 1")
	f.Add(byte(3), csvGB10Line)
	f.Add(byte(4), "1, GPU-x, NVIDIA H100 80GB HBM3, 1755 MHz, 0x0000000000000004, 2619 MHz, 250.50 W, 47")
	f.Add(byte(0), strings.Replace(csvH100Busy, ", 100", ", [N/A]", 1))
	f.Add(byte(0), strings.Replace(csvH100Busy, "Enabled", "[Unknown Error]", 1))
	f.Add(byte(0), csvH100Header)
	f.Fuzz(func(t *testing.T, which byte, line string) {
		fields := csvFuzzFields[int(which)%len(csvFuzzFields)]
		if h, err := ParseCSVHeader(line); err == nil {
			for _, c := range h {
				if fc, ok := canonicalField(c); !ok || fc != c {
					t.Fatalf("header %q gave a field %q that is not canonical", line, c)
				}
			}
		}
		r, err := ParseCSVLine(fields, line)
		if err != nil {
			if r != nil {
				t.Fatalf("a refused line returned a reading %+v", r)
			}
			return
		}
		checkReading(t, r, line)
		if !r.Has(FieldUUID) || !r.Has(FieldUtilizationGPU) || !r.Has(FieldEventReasons) {
			return
		}
		s, err := r.Sample(csvT0, "13dc5579-455c-45c8-8e4d-d09c457fa826")
		if err != nil {
			t.Fatalf("an accepted canonical reading made no sample: %v", err)
		}
		out := s.AppendJSON(nil)
		back, err := clocks.ParseSample(out)
		if err != nil {
			t.Fatalf("the sampler would write a line its own stream parser refuses:\nCSV  %q\nline %s\nerr  %v", line, out, err)
		}
		if !bytes.Equal(back.AppendJSON(nil), out) {
			t.Fatalf("the stream line does not read back as the sample:\n%s\n%s", out, back.AppendJSON(nil))
		}
		// Two lines of it: the second goes through the fast path.
		stream := append(append(append(append([]byte(nil), out...), '\n'), out...), '\n')
		fold, err := clocks.FoldStream(bytes.NewReader(stream))
		if err != nil || fold.Total != 2 {
			t.Fatalf("the fold refused or lost the sampler's lines: %v, total %d", err, fold.Total)
		}
		sameRecord(t, fold, stream)
	})
}

// sameRecord holds the fold of a whole stream (fold, from
// clocks.FoldStream) to the fold of its samples one by one (read with
// clocks.Reader, added with Fold.Add): both must recompute the stream to
// one record.
func sameRecord(t *testing.T, fold *clocks.Fold, stream []byte) {
	t.Helper()
	sc := clocks.NewReader(bytes.NewReader(stream), "")
	slow := clocks.NewFold()
	for sc.Scan() {
		slow.Add(sc.Sample(), sc.Line())
	}
	if err := sc.Err(); err != nil {
		t.Fatalf("the reader refused what the fold took: %v\n%s", err, stream)
	}
	a, errA := fold.Record(1, clocks.StopSignal)
	b, errB := slow.Record(1, clocks.StopSignal)
	ja, _ := json.Marshal(a)
	jb, _ := json.Marshal(b)
	if errA != nil || errB != nil || !bytes.Equal(ja, jb) {
		t.Fatalf("the two folds differ:\nwhole  %s (%v)\nsample %s (%v)\nstream:\n%s", ja, errA, jb, errB, stream)
	}
}

// checkReading asserts every field of an accepted reading is what its
// nvidia-smi field promises.
func checkReading(t *testing.T, r *Reading, line string) {
	t.Helper()
	for _, f := range r.Fields {
		bad := func(format string, args ...any) {
			t.Helper()
			t.Fatalf("line %q accepted with %s: "+format, append([]any{line, f}, args...)...)
		}
		switch f {
		case FieldUUID, FieldName, FieldDriverVersion:
			v := map[string]string{FieldUUID: r.UUID, FieldName: r.Name, FieldDriverVersion: r.DriverVersion}[f]
			if v == "" || v != strings.TrimSpace(v) || strings.Contains(v, ",") || strings.HasPrefix(v, "[") && strings.HasSuffix(v, "]") {
				bad("%q", v)
			}
			if !utf8.ValidString(v) || strings.ContainsFunc(v, func(c rune) bool { return c < 0x20 || c == 0x7f }) {
				bad("%q, which is not printable UTF-8", v)
			}
		case FieldClocksSM:
			if r.SMClockMHz < 1 {
				bad("%d", r.SMClockMHz)
			}
		case FieldClocksMaxSM:
			if r.ClocksMaxSMMHz < 1 {
				bad("%d", r.ClocksMaxSMMHz)
			}
		case FieldClocksApplicationsGraphics:
			if p := r.ClocksApplicationsGraphicsMHz; p == nil && !strings.Contains(line, DeprecatedToken) || p != nil && *p < 1 {
				bad("%v", p)
			}
		case FieldClocksMem:
			if r.ClocksMemMHz == nil || *r.ClocksMemMHz < 1 {
				bad("%v", r.ClocksMemMHz)
			}
		case FieldUtilizationGPU:
			if r.UtilizationGPUPct < 0 || r.UtilizationGPUPct > 100 {
				bad("%d", r.UtilizationGPUPct)
			}
		case FieldEventReasons, FieldThrottleReasons:
			if _, err := clocks.ParseThrottle(r.ThrottleReasonsActive); err != nil || r.ThrottleField != f {
				bad("%q from %q: %v", r.ThrottleReasonsActive, r.ThrottleField, err)
			}
		case FieldPersistenceMode:
			if r.PersistenceMode != "Enabled" && r.PersistenceMode != "Disabled" {
				bad("%q", r.PersistenceMode)
			}
		case FieldPState:
			if !pstateRE.MatchString(r.PState) {
				bad("%q", r.PState)
			}
		case FieldTemperatureGPU:
			if r.TemperatureGPUC == nil || math.IsInf(*r.TemperatureGPUC, 0) || math.IsNaN(*r.TemperatureGPUC) {
				bad("%v", r.TemperatureGPUC)
			}
		case FieldPowerDraw:
			if r.PowerDrawW == nil || !(*r.PowerDrawW >= 0) || math.IsInf(*r.PowerDrawW, 0) {
				bad("%v", r.PowerDrawW)
			}
		}
	}
}
