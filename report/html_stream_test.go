package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

const canonical = `{"t":"2026-08-12T09:00:00.484Z","boot_id":"13dc5579-455c-45c8-8e4d-d09c457fa826","gpu_index":0,"gpu_uuid":"GPU-5f3c","gpu_name":"NVIDIA GB10","driver_version":"580.159.03","sm_clock_mhz":2470,"clocks_max_sm_mhz":3003,"clocks_applications_graphics_mhz":2418,"throttle_reasons_active":"0x0000000000000004","persistence_mode":"Enabled","pstate":"P0","utilization_gpu_pct":95,"temperature_gpu_c":49,"power_draw_w":44.76,"throttle_field":"clocks_throttle_reasons.active"}`

// sameAsStrict checks one line read by the picture's reader, after a
// canonical first line (so that the in-place path is the one reading it),
// against clocks.ParseSample: accepted exactly when the strict parser
// accepts it, with the same values.
func sameAsStrict(t *testing.T, line string) {
	t.Helper()
	var got []streamLine
	err := readStream(strings.NewReader(canonical+"\n"+line+"\n"), func(l streamLine) error {
		l.boot = bytes.Clone(l.boot)
		got = append(got, l)
		return nil
	})
	got = got[min(1, len(got)):]
	s, perr := clocks.ParseSample([]byte(line))
	if (err == nil) != (perr == nil) {
		t.Fatalf("%q: the picture's reader says %v, clocks.ParseSample %v", line, err, perr)
	}
	if perr != nil {
		return
	}
	bits, _ := clocks.ParseThrottle(s.ThrottleReasonsActive)
	at, _ := time.Parse(time.RFC3339Nano, s.T)
	want := streamLine{t: at, boot: []byte(s.BootID), mhz: s.SMClockMHz, util: s.UtilizationGPUPct, bits: bits}
	if len(got) != 1 || !got[0].t.Equal(want.t) || string(got[0].boot) != string(want.boot) ||
		got[0].mhz != want.mhz || got[0].util != want.util || got[0].bits != want.bits {
		t.Errorf("%q: read %+v, clocks.ParseSample %+v", line, got, want)
	}
}

// TestStreamReaderAgreesWithParseSample: the picture reads what the
// contract's parser reads, and nothing it refuses.
func TestStreamReaderAgreesWithParseSample(t *testing.T) {
	var s clocks.Sample
	apps := 2418
	s = clocks.Sample{T: "2026-08-12T09:00:00Z", BootID: "b", GPUUUID: "u", GPUName: "n", DriverVersion: "d", SMClockMHz: 1,
		ClocksMaxSMMHz: 1, ClocksApplicationsGraphicsMHz: &apps, ThrottleReasonsActive: "0xF", PersistenceMode: "Enabled", PState: "P0"}
	edit := func(old, new string) string {
		if !strings.Contains(canonical, old) {
			t.Fatalf("%q is not in the canonical line", old)
		}
		return strings.Replace(canonical, old, new, 1)
	}
	for _, line := range []string{
		canonical,
		string(s.AppendJSON(nil)),
		edit(`"clocks_applications_graphics_mhz":2418`, `"clocks_applications_graphics_mhz":null`),
		edit(`"sm_clock_mhz":2470`, `"sm_clock_mhz":02470`),
		edit(`"sm_clock_mhz":2470`, `"sm_clock_mhz":0`),
		edit(`"sm_clock_mhz":2470`, `"sm_clock_mhz":-1`),
		edit(`"sm_clock_mhz":2470`, `"sm_clock_mhz":2470.0`),
		edit(`"sm_clock_mhz":2470`, `"sm_clock_mhz":99999999999999`),
		edit(`"utilization_gpu_pct":95`, `"utilization_gpu_pct":101`),
		edit(`"utilization_gpu_pct":95`, `"utilization_gpu_pct":0`),
		edit(`"boot_id":"13dc5579`, `"boot_id":"`+"\\u0031"+`3dc5579`),
		edit(`"boot_id":"13dc5579-455c-45c8-8e4d-d09c457fa826"`, `"boot_id":""`),
		edit(`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA GB10","gpu_name":"X"`),
		edit(`"throttle_reasons_active":"0x0000000000000004"`, `"throttle_reasons_active":"0x"`),
		edit(`"throttle_reasons_active":"0x0000000000000004"`, `"throttle_reasons_active":"0x00000000000000004"`),
		edit(`"throttle_reasons_active":"0x0000000000000004"`, `"throttle_reasons_active":"0XaB"`),
		edit(`"t":"2026-08-12T09:00:00.484Z"`, `"t":"yesterday"`),
		edit(`"temperature_gpu_c":49`, `"temperature_gpu_c":4.9e1`),
		edit(`"temperature_gpu_c":49`, `"temperature_gpu_c":049`),
		edit(`"temperature_gpu_c":49`, `"temperature_gpu_c":"hot"`),
		edit(`,"power_draw_w":44.76`, ``),
		edit(`"throttle_field":"clocks_throttle_reasons.active"`, `"throttle_field":""`),
		edit(`}`, `,"extra":1}`),
		edit(`{"t"`, `{ "t"`),
		canonical + " ",
		canonical + "\r",
		"",
		"{}",
	} {
		sameAsStrict(t, line)
	}
}

// TestStreamReaderEnds: a last line without its newline is read like
// clocks.Scanner reads it, and a bad line anywhere is an error naming it.
func TestStreamReaderEnds(t *testing.T) {
	count := func(stream string) (int, error) {
		n := 0
		err := readStream(strings.NewReader(stream), func(streamLine) error { n++; return nil })
		return n, err
	}
	if n, err := count(canonical + "\n" + canonical); err != nil || n != 2 {
		t.Errorf("a whole last line without newline: %d samples, %v; want 2, nil", n, err)
	}
	if _, err := count(canonical + "\n" + canonical[:100]); err == nil || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Errorf("a torn last line: %v; want an error at line 2", err)
	}
	if _, err := count(canonical + "\n\n" + canonical + "\n"); err == nil || !strings.HasPrefix(err.Error(), "line 2: ") {
		t.Errorf("an empty line: %v; want an error at line 2", err)
	}
	if _, err := count(strings.Repeat("x", clocks.MaxLineBytes+10) + "\n"); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Errorf("an overlong line: %v; want it refused", err)
	}
}

// FuzzStreamReader: the picture's reader takes what clocks.ParseSample
// takes, with the same values, and nothing else.
func FuzzStreamReader(f *testing.F) {
	f.Add(canonical)
	f.Add(strings.Replace(canonical, "2470", "02470", 1))
	f.Add(strings.Replace(canonical, `"P0"`, `""`, 1))
	f.Fuzz(func(t *testing.T, line string) {
		if strings.ContainsAny(line, "\n") {
			return
		}
		sameAsStrict(t, line)
	})
}
