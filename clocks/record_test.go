package clocks

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
)

func TestBuildRecordCleanWindow(t *testing.T) {
	r := recordOf(t, cleanWindow(bootF6), StopPIDExit)
	st := r.GPUs[0].SMClockMHz
	if st.N != 61 || *st.Min != 2398 || *st.Median != 2470 || *st.Max != 2489 || *st.SpreadPct != 3.68 {
		t.Fatalf("stats = n %d min %d median %v max %d spread %v", st.N, *st.Min, *st.Median, *st.Max, *st.SpreadPct)
	}
	if r.GPUs[0].IdleSamplesExcluded != 3 || r.Window.SamplesTotal != 64 {
		t.Fatalf("idle %d of %d", r.GPUs[0].IdleSamplesExcluded, r.Window.SamplesTotal)
	}
	if r.Window.FirstT != "2026-08-12T10:15:03.123Z" || r.Window.LastT != "2026-08-12T10:16:06.123Z" {
		t.Fatalf("window %s .. %s", r.Window.FirstT, r.Window.LastT)
	}
	if r.BootID != bootF6 || r.GPUs[0].Name != "NVIDIA GB10" || *r.GPUs[0].ClocksApplicationsGraphicsMHz != 2418 {
		t.Fatalf("static fields %+v", r)
	}
}

func TestBuildRecordIdleExcludedAndCounted(t *testing.T) {
	// Idle samples at a far lower clock must not move min or median.
	r := recordOf(t, window(bootF6, flat(2190, 40), 10), StopSignal)
	if r.GPUs[0].SMClockMHz.N != 40 || *r.GPUs[0].SMClockMHz.Min != 2190 || r.GPUs[0].IdleSamplesExcluded != 10 {
		t.Fatalf("idle samples priced work: n %d min %d idle %d", r.GPUs[0].SMClockMHz.N, *r.GPUs[0].SMClockMHz.Min, r.GPUs[0].IdleSamplesExcluded)
	}
}

func TestBuildRecordMedianOfEvenCount(t *testing.T) {
	r := recordOf(t, window(bootF6, []int{2100, 2200, 2301, 2400}, 0), StopSignal)
	if *r.GPUs[0].SMClockMHz.Median != 2250.5 {
		t.Fatalf("median of 2100 2200 2301 2400 = %v, want 2250.5", *r.GPUs[0].SMClockMHz.Median)
	}
}

func TestBuildRecordThrottleUnionOverBusySamples(t *testing.T) {
	ss := window(bootF6, flat(2190, 4), 2)
	ss[1].ThrottleReasonsActive = "0x0000000000000004"
	ss[2].ThrottleReasonsActive = "0x0000000000000004"
	ss[3].ThrottleReasonsActive = "0x0000000000000100"
	ss[4].ThrottleReasonsActive = "0x0000000000000008" // idle: not in the union
	r := recordOf(t, ss, StopSignal)
	if got := strings.Join(r.GPUs[0].ThrottleReasonsActive, " "); got != "0x0000000000000000 0x0000000000000004 0x0000000000000100" {
		t.Fatalf("throttle union = %s", got)
	}
}

func TestBuildRecordAllIdle(t *testing.T) {
	r := recordOf(t, window(bootF6, nil, 5), StopSignal)
	if r.GPUs[0].SMClockMHz.N != 0 || r.GPUs[0].SMClockMHz.Min != nil || r.GPUs[0].SMClockMHz.Median != nil {
		t.Fatalf("all-idle stats %+v", r.GPUs[0].SMClockMHz)
	}
	if _, err := ParseRecord(recordJSON(t, r)); err == nil || !strings.Contains(err.Error(), "sm_clock_mhz.n: 0: no busy sample") {
		t.Fatalf("n == 0 record: err = %v", err)
	}
}

// recordMap is a valid record as a generic map, for editing field by field.
func recordMap(t *testing.T) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(recordJSON(t, recordOf(t, cleanWindow(bootF6), StopPIDExit)), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func TestParseRecordValid(t *testing.T) {
	b, _ := json.Marshal(recordMap(t))
	r, err := ParseRecord(b)
	if err != nil {
		t.Fatal(err)
	}
	if r.GPUs[0].SMClockMHz.N != 61 || r.Window.StopReason != StopPIDExit {
		t.Fatalf("%+v", r)
	}
}

func TestParseRecordFailClosed(t *testing.T) {
	type edit func(m map[string]any)
	sm := func(m map[string]any) map[string]any { return m["sm_clock_mhz"].(map[string]any) }
	win := func(m map[string]any) map[string]any { return m["window"].(map[string]any) }
	cases := []struct {
		name string
		edit edit
		raw  func(string) string
		want string
	}{
		{name: "missing boot_id", edit: func(m map[string]any) { delete(m, "boot_id") }, want: "boot_id: missing"},
		{name: "missing sm_clock_mhz", edit: func(m map[string]any) { delete(m, "sm_clock_mhz") }, want: "sm_clock_mhz: missing"},
		{name: "missing median", edit: func(m map[string]any) { delete(sm(m), "median") }, want: "sm_clock_mhz.median: missing"},
		{name: "missing window", edit: func(m map[string]any) { delete(m, "window") }, want: "window: missing"},
		{name: "missing stop reason", edit: func(m map[string]any) { delete(win(m), "stop_reason") }, want: "window.stop_reason: missing"},
		{name: "missing gpu_uuid", edit: func(m map[string]any) { delete(m, "gpu_uuid") }, want: "gpu_uuid: missing"},
		{name: "missing persistence", edit: func(m map[string]any) { delete(m, "persistence_mode") }, want: "persistence_mode: missing"},
		{name: "missing applications clock", edit: func(m map[string]any) { delete(m, "clocks_applications_graphics_mhz") }, want: "clocks_applications_graphics_mhz: missing"},
		{name: "missing idle count", edit: func(m map[string]any) { delete(m, "idle_samples_excluded") }, want: "idle_samples_excluded: missing"},
		{name: "median as string", edit: func(m map[string]any) { sm(m)["median"] = "2470" }, want: `sm_clock_mhz.median: want a number, found string "2470"`},
		{name: "n as float", edit: func(m map[string]any) { sm(m)["n"] = 61.5 }, want: "sm_clock_mhz.n: want an integer, found number 61.5"},
		{name: "non-finite spread", raw: func(s string) string { return strings.Replace(s, `"spread_pct":3.68`, `"spread_pct":1e999`, 1) }, want: "not finite"},
		{name: "NaN median", raw: func(s string) string { return strings.Replace(s, `"median":2470`, `"median":NaN`, 1) }, want: "NaN"},
		{name: "negative min clock", edit: func(m map[string]any) { sm(m)["min"] = -2398 }, want: "sm_clock_mhz.min: want a positive integer, found -2398"},
		{name: "negative max clock", edit: func(m map[string]any) { m["clocks_max_sm_mhz"] = -3003 }, want: "clocks_max_sm_mhz: want a positive integer, found -3003"},
		{name: "negative spread", edit: func(m map[string]any) { sm(m)["spread_pct"] = -3.68 }, want: "sm_clock_mhz.spread_pct: negative"},
		{name: "empty throttle list", edit: func(m map[string]any) { m["throttle_reasons_active"] = []any{} }, want: "throttle_reasons_active: empty list"},
		{name: "throttle as string", edit: func(m map[string]any) { m["throttle_reasons_active"] = "0x0" }, want: "throttle_reasons_active: want an array of hex strings"},
		{name: "throttle element not hex", edit: func(m map[string]any) { m["throttle_reasons_active"] = []any{"zero"} }, want: `throttle_reasons_active[0]: "zero" is not a hex bit set`},
		{name: "idle count non-integer", edit: func(m map[string]any) { m["idle_samples_excluded"] = 2.5 }, want: "idle_samples_excluded: want an integer, found number 2.5"},
		{name: "idle count as string", edit: func(m map[string]any) { m["idle_samples_excluded"] = "3" }, want: `idle_samples_excluded: want an integer, found string "3"`},
		{name: "idle count negative", edit: func(m map[string]any) { m["idle_samples_excluded"] = -3 }, want: "idle_samples_excluded: want an integer ≥ 0, found -3"},
		{name: "median above max", edit: func(m map[string]any) { sm(m)["median"] = 2500 }, want: "sm_clock_mhz.median: want min ≤ median ≤ max, found min 2398, median 2500, max 2489"},
		{name: "min above median", edit: func(m map[string]any) { sm(m)["min"] = 2480 }, want: "want min ≤ median ≤ max"},
		{name: "median not a whole or half MHz", edit: func(m map[string]any) { sm(m)["median"] = 2470.3 }, want: "sm_clock_mhz.median: 2470.3 is not a median of integer MHz"},
		{name: "spread disagrees", edit: func(m map[string]any) { sm(m)["spread_pct"] = 0.0 }, want: "sm_clock_mhz.spread_pct: 0 disagrees with (max − min) / median × 100 = 3.6842"},
		{name: "spread just outside tolerance", edit: func(m map[string]any) { sm(m)["spread_pct"] = 3.6842 + 0.006 }, want: "disagrees"},
		{name: "n zero", edit: func(m map[string]any) { sm(m)["n"] = 0 }, want: "sm_clock_mhz.n: 0: no busy sample"},
		{name: "samples total disagrees", edit: func(m map[string]any) { win(m)["samples_total"] = 65 }, want: "window.samples_total: 65, but sm_clock_mhz.n 61 + idle_samples_excluded 3 = 64"},
		{name: "unknown stop reason", edit: func(m map[string]any) { win(m)["stop_reason"] = "crash" }, want: `window.stop_reason: want one of pid-exit, command-exit, signal, max-duration, refused, rebuilt, imported; found "crash"`},
		{name: "zero interval", edit: func(m map[string]any) { win(m)["interval_s"] = 0 }, want: "window.interval_s: want a positive number of seconds"},
		{name: "bad first_t", edit: func(m map[string]any) { win(m)["first_t"] = "noon" }, want: `window.first_t: want an RFC 3339 time, found "noon"`},
		{name: "not an object", raw: func(string) string { return `[1,2]` }, want: "want an object, found array"},
		{name: "duplicate key", raw: func(s string) string { return strings.Replace(s, `"boot_id":`, `"boot_id":"x","boot_id":`, 1) }, want: `duplicate key "boot_id"`},
		{name: "truncated", raw: func(s string) string { return s[:strings.Index(s, `"window"`)] }, want: "want a key string, found end of input"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := recordMap(t)
			if tc.edit != nil {
				tc.edit(m)
			}
			b, _ := json.Marshal(m)
			if tc.raw != nil {
				edited := tc.raw(string(b))
				if edited == string(b) {
					t.Fatal("raw edit did not apply")
				}
				b = []byte(edited)
			}
			_, err := ParseRecord(b)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want %q", err, tc.want)
			}
			// Through the leg, the same defect is clock.invalid alone.
			l := JudgeLeg("r1", b, bytes.NewReader(streamOf(cleanWindow(bootF6))), nil)
			wantCodes(t, l.Reasons, CodeInvalid)
			wantReason(t, l.Reasons, CodeInvalid, tc.want)
			if l.Trusted() {
				t.Fatal("an invalid record is trusted")
			}
		})
	}
}

func TestSpreadToleranceAcceptsTwoDecimalRounding(t *testing.T) {
	// 3.6842% rounds to 3.68: 0.0042 away, inside the 0.005 tolerance.
	m := recordMap(t)
	m["sm_clock_mhz"].(map[string]any)["spread_pct"] = 3.6842 + 0.0049
	b, _ := json.Marshal(m)
	if _, err := ParseRecord(b); err != nil {
		t.Fatalf("spread within tolerance refused: %v", err)
	}
}
