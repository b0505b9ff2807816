package clocks

import (
	"bytes"
	"strings"
	"testing"
)

// The design document's live sample, as SPEC §2.3 writes it.
const specSample = `{"t":"2026-08-12T10:15:03.123Z","boot_id":"13dc5579-455c-45c8-8e4d-d09c457fa826","gpu_index":0,"gpu_uuid":"GPU-5f3c","gpu_name":"NVIDIA GB10","driver_version":"580.159.03","sm_clock_mhz":2190,"clocks_max_sm_mhz":3003,"clocks_applications_graphics_mhz":2418,"throttle_reasons_active":"0x0000000000000000","persistence_mode":"Enabled","pstate":"P0","utilization_gpu_pct":97}`

func TestParseSampleSpecRow(t *testing.T) {
	s, err := ParseSample([]byte(specSample))
	if err != nil {
		t.Fatal(err)
	}
	if s.SMClockMHz != 2190 || s.ClocksMaxSMMHz != 3003 || *s.ClocksApplicationsGraphicsMHz != 2418 ||
		s.BootID != boot13 || s.Idle() || s.PersistenceMode != "Enabled" {
		t.Fatalf("parsed %+v", s)
	}
	// Round trip: AppendJSON writes what ParseSample reads.
	again, err := ParseSample(s.AppendJSON(nil))
	if err != nil || string(again.AppendJSON(nil)) != string(s.AppendJSON(nil)) {
		t.Fatalf("round trip: %v\n%s", err, again.AppendJSON(nil))
	}
}

func TestParseSampleNullApplicationsClock(t *testing.T) {
	s, err := ParseSample([]byte(strings.Replace(specSample, `"clocks_applications_graphics_mhz":2418`, `"clocks_applications_graphics_mhz":null`, 1)))
	if err != nil {
		t.Fatal(err)
	}
	if s.ClocksApplicationsGraphicsMHz != nil {
		t.Fatalf("deprecated applications clock read as %d", *s.ClocksApplicationsGraphicsMHz)
	}
}

func TestParseSampleRefuses(t *testing.T) {
	for _, tc := range []struct{ name, from, to, want string }{
		{"missing clock", `"sm_clock_mhz":2190,`, ``, "sm_clock_mhz: missing"},
		{"clock as string", `"sm_clock_mhz":2190`, `"sm_clock_mhz":"2190"`, `sm_clock_mhz: want an integer, found string "2190"`},
		{"fractional clock", `"sm_clock_mhz":2190`, `"sm_clock_mhz":2190.5`, `sm_clock_mhz: want an integer, found number 2190.5`},
		{"negative clock", `"sm_clock_mhz":2190`, `"sm_clock_mhz":-2190`, `sm_clock_mhz: want a positive integer, found -2190`},
		{"zero clock", `"sm_clock_mhz":2190`, `"sm_clock_mhz":0`, `sm_clock_mhz: want a positive integer, found 0`},
		{"zero max clock", `"clocks_max_sm_mhz":3003`, `"clocks_max_sm_mhz":0`, `clocks_max_sm_mhz: want a positive integer`},
		{"overflowing clock", `"sm_clock_mhz":2190`, `"sm_clock_mhz":1e999`, `not finite`},
		{"NaN clock", `"sm_clock_mhz":2190`, `"sm_clock_mhz":NaN`, `NaN`},
		{"utilization over 100", `"utilization_gpu_pct":97`, `"utilization_gpu_pct":101`, `utilization_gpu_pct: want 0 to 100, found 101`},
		{"applications clock N/A", `"clocks_applications_graphics_mhz":2418`, `"clocks_applications_graphics_mhz":"[N/A]"`, `clocks_applications_graphics_mhz: want an integer, found string "[N/A]"`},
		{"throttle not hex", `"0x0000000000000000"`, `"0"`, `throttle_reasons_active: "0" is not a hex bit set`},
		{"bad time", `"2026-08-12T10:15:03.123Z"`, `"yesterday"`, `t: want an RFC 3339 time, found "yesterday"`},
		{"empty boot id", `"boot_id":"13dc5579-455c-45c8-8e4d-d09c457fa826"`, `"boot_id":""`, `boot_id: empty string`},
		{"duplicate key", `"pstate":"P0"`, `"pstate":"P0","pstate":"P8"`, `duplicate key "pstate"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			line := strings.Replace(specSample, tc.from, tc.to, 1)
			if line == specSample {
				t.Fatalf("fixture edit %q did not apply", tc.from)
			}
			_, err := ParseSample([]byte(line))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
		})
	}
}

func scanAll(in string) (n int, err error) {
	sc := NewReader(strings.NewReader(in), "")
	for sc.Scan() {
		n++
	}
	return n, sc.Err()
}

func TestReaderLines(t *testing.T) {
	good := specSample + "\n"
	for _, tc := range []struct {
		name  string
		in    string
		n     int
		error string
	}{
		{"three lines", good + good + good, 3, ""},
		{"final line without newline but whole", good + specSample, 2, ""},
		{"crlf", strings.ReplaceAll(good+good, "\n", "\r\n"), 2, ""},
		{"torn final line", good + good + specSample[:80], 2, "line 3:81: torn final line (no newline): unexpected end of input in an object"},
		{"bad middle line", good + "{\"t\":1}\n" + good, 1, "line 2: t: want a string"},
		{"empty line", good + "\n" + good, 1, "line 2: empty line"},
		{"empty stream", "", 0, ""},
		{"long line", good + strings.Repeat(" ", MaxLineBytes+10) + "\n", 1, "line 2: longer than 65536 bytes; refused unread"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := scanAll(tc.in)
			if n != tc.n {
				t.Errorf("samples = %d, want %d", n, tc.n)
			}
			if tc.error == "" && err != nil || tc.error != "" && (err == nil || !strings.Contains(err.Error(), tc.error)) {
				t.Errorf("err = %v, want %q", err, tc.error)
			}
		})
	}
}

func TestReaderRefusesHugeLineInBoundedMemory(t *testing.T) {
	// A 100 MB single line is refused after reading one buffer of it.
	r := &countingReader{left: 100 << 20}
	sc := NewReader(r, "")
	if sc.Scan() {
		t.Fatal("scanned a 100 MB line")
	}
	if err := sc.Err(); err == nil || !strings.Contains(err.Error(), "line 1: longer than") {
		t.Fatalf("err = %v", err)
	}
	if r.read > 2*MaxLineBytes {
		t.Fatalf("read %d bytes of a line it refused", r.read)
	}
}

type countingReader struct{ left, read int }

func (r *countingReader) Read(p []byte) (int, error) {
	n := len(p)
	if n > r.left {
		n = r.left
	}
	copy(p, bytes.Repeat([]byte("x"), n))
	r.left -= n
	r.read += n
	return n, nil
}

func TestErrorAtNamesFileAndLine(t *testing.T) {
	_, err := scanAll(specSample + "\n" + "{\n")
	if got := ErrorAt("clocks/m/vllm/r1.samples.jsonl", err); got != "clocks/m/vllm/r1.samples.jsonl:2:2: want a key string, found end of input" {
		t.Fatalf("ErrorAt = %q", got)
	}
}
