package foreign

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// smiLog builds a small nvidia-smi CSV log: header, then rows.
func smiLog(header string, rows ...string) []byte {
	return []byte(header + "\n" + strings.Join(rows, "\n") + "\n")
}

const smiHead = "timestamp, index, uuid, clocks.sm [MHz], utilization.gpu [%]"

func smiRow(ts string, idx int, clock, util string) string {
	return ts + ", " + string(rune('0'+idx)) + ", GPU-aaaa" + string(rune('0'+idx)) + ", " + clock + ", " + util
}

// TestRefusals: each source clockgate will not convert faithfully is
// refused with the file, line and column, and the reason.
func TestRefusals(t *testing.T) {
	utc := Options{TZ: time.UTC, TZName: "UTC"}
	withStart := utc
	withStart.Start, withStart.Interval = time.Date(2026, 7, 18, 17, 0, 0, 0, time.UTC), time.Second
	cases := []struct {
		name   string
		format string
		o      Options
		data   []byte
		want   string
	}{
		{"unknown column", FormatSMICSV, utc,
			smiLog("timestamp, clocks.sm [MHz], clocks.turbo [MHz], utilization.gpu [%]", "2026/07/18 17:00:00.000, 1980, 1, 50"),
			`x.csv:1:29: unknown column "clocks.turbo": not a --query-gpu field clockgate knows`},
		{"header unit contradicts", FormatSMICSV, utc,
			smiLog("timestamp, clocks.sm [kHz], utilization.gpu [%]", "2026/07/18 17:00:00.000, 1980000, 50"),
			`x.csv:1:12: column "clocks.sm" in [kHz]: nvidia-smi prints it in [MHz]: contradicting units`},
		{"value unit contradicts", FormatSMICSV, utc,
			smiLog("timestamp, clocks.sm [MHz], utilization.gpu [%]", "2026/07/18 17:00:00.000, 1980 kHz, 50 %"),
			`x.csv:2:26: clocks.sm: value "1980 kHz" is in kHz, the column is in MHz: contradicting units`},
		{"mixed units", FormatSMICSV, utc,
			smiLog("timestamp, clocks.sm [MHz], utilization.gpu [%]", "2026/07/18 17:00:00.000, 1980 MHz, 50 %", "2026/07/18 17:00:01.000, 1980, 50 %"),
			`x.csv:3:26: clocks.sm: value "1980" mixes units: earlier values were printed with MHz`},
		{"local time without --tz", FormatSMICSV, Options{},
			smiLog(smiHead, smiRow("2026/07/18 17:00:00.000", 0, "1980", "50")),
			`x.csv:2:1: timestamp: "2026/07/18 17:00:00.000" is local time without a zone; pass --tz (UTC, an IANA zone, or an offset like -07:00)`},
		{"time backwards per GPU", FormatSMICSV, utc,
			smiLog(smiHead, smiRow("2026/07/18 17:00:01.000", 0, "1980", "50"), smiRow("2026/07/18 17:00:01.000", 1, "1980", "50"),
				smiRow("2026/07/18 17:00:00.500", 0, "1980", "50")),
			`x.csv:4:1: time goes backwards for GPU 0: 2026-07-18T17:00:00.5Z after 2026-07-18T17:00:01Z (line 2)`},
		{"several GPUs without index or UUID", FormatSMICSV, utc,
			smiLog("timestamp, clocks.sm [MHz], utilization.gpu [%]", "2026/07/18 17:00:00.000, 1980, 50", "2026/07/18 17:00:00.000, 1410, 50"),
			`x.csv:3:1: several GPUs without index or UUID: two rows at 2026-07-18T17:00:00Z (lines 2 and 3); log index and uuid`},
		{"[N/A] where required", FormatSMICSV, utc,
			smiLog(smiHead, smiRow("2026/07/18 17:00:00.000", 0, "[N/A]", "50")),
			`x.csv:2:40: clocks.sm: "[N/A]" where a value is required`},
		{"[Not Supported] where required", FormatSMICSV, utc,
			smiLog(smiHead, smiRow("2026/07/18 17:00:00.000", 0, "1980", "[Not Supported]")),
			`x.csv:2:46: utilization.gpu: "[Not Supported]" where a value is required`},
		{"N/A where required", FormatSMICSV, utc,
			smiLog("timestamp, clocks.sm [MHz], utilization.gpu [%], enforced.power.limit [W]", "2026/07/18 17:00:00.000, 1980, 50, N/A"),
			`x.csv:2:36: enforced.power.limit: "N/A" where a value is required`},
		{"header changes mid-file", FormatSMICSV, utc,
			smiLog(smiHead, smiRow("2026/07/18 17:00:00.000", 0, "1980", "50"), "timestamp, index, uuid, clocks.sm [MHz], power.draw [W]"),
			`x.csv:3:42: the header changes mid-file (first at line 1)`},
		{"headerless without --columns", FormatSMICSV, utc,
			[]byte("2026/07/18 17:00:00.000, 0, GPU-a, 1980, 50\n"),
			`x.csv:1: a headerless CSV (--format=csv,noheader): pass --columns with the --query-gpu field list`},
		{"no time column", FormatSMICSV, utc,
			smiLog("index, clocks.sm [MHz], utilization.gpu [%]", "0, 1980, 50"),
			`x.csv:1: no time column: log the time, or pass --start and --interval`},
		{"no utilization", FormatSMICSV, utc,
			smiLog("timestamp, index, clocks.sm [MHz]", "2026/07/18 17:00:00.000, 0, 1980"),
			`x.csv:1: no utilization column: log it, or pass --busy-above-mhz N to count a sample busy when its SM clock is above N`},
		{"dmon without a date", FormatDmon, utc,
			[]byte("#Time        gpu   pwr  sm  pclk\n#HH:MM:SS    Idx     W   %   MHz\n 19:12:31      0    37   0   582\n"),
			`x.csv:1: dmon prints a date or a time alone (-o D or -o T): log -o DT so each row has both`},
		{"dmon unknown column", FormatDmon, utc,
			[]byte("#Date       Time        gpu   pwr  sm  turbo\n#YYYYMMDD   HH:MM:SS    Idx     W   %   MHz\n"),
			`x.csv:1:40: unknown dmon column "turbo"`},
		{"dmon contradicting unit", FormatDmon, utc,
			[]byte("#Date       Time        gpu   pwr  sm  pclk\n#YYYYMMDD   HH:MM:SS    Idx     W   %   GHz\n"),
			`x.csv:2:41: dmon column pclk in "GHz": dmon prints it in "MHz": contradicting units`},
		{"dmon header changes", FormatDmon, utc,
			[]byte("#Date       Time        gpu   sm  pclk\n#YYYYMMDD   HH:MM:SS    Idx    %   MHz\n 20210102   19:12:31      0    0   582\n#Date       Time        gpu   pwr  pclk\n"),
			`x.csv:4:1: the header changes mid-file (first at line 1): "#Date       Time        gpu   pwr  pclk"`},
		{"dmon - where required", FormatDmon, utc,
			[]byte("#Date       Time        gpu   sm  pclk\n#YYYYMMDD   HH:MM:SS    Idx    %   MHz\n 20210102   19:12:31      0    -   582\n"),
			`x.csv:3:32: sm: "-" where a value is required`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Convert(c.format, []Input{{Path: "x.csv", Data: c.data}}, c.o)
			if err == nil {
				t.Fatalf("converted; want %s", c.want)
			}
			if _, ok := err.(*Refusal); !ok {
				t.Errorf("err is %T, not a *Refusal", err)
			}
			if err.Error() != c.want {
				t.Errorf("err\n got %s\nwant %s", err, c.want)
			}
		})
	}
	_ = withStart
}

// TestGivenTimes: a source without a time column imports with --start and
// --interval, each GPU's rows one interval apart, and carries
// clock.unproven_coverage saying so.
func TestGivenTimes(t *testing.T) {
	o := Options{Start: time.Date(2026, 7, 18, 17, 0, 0, 0, time.UTC), Interval: 250 * time.Millisecond}
	res, err := Convert(FormatSMICSV, []Input{{Path: "x.csv", Data: smiLog("index, clocks.sm [MHz], utilization.gpu [%]", "0, 1980, 50", "1, 1980, 50", "0, 1980, 50", "1, 1410, 50")}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Window.LastT != "2026-07-18T17:00:00.250Z" || res.Record.Window.IntervalS != 0.25 {
		t.Errorf("window %+v", res.Record.Window)
	}
	want := "no time column: times are --start 2026-07-18T17:00:00Z plus --interval 250ms per sample, not the source's"
	if res.Import.UnprovenWhy["clock.unproven_coverage"] != want {
		t.Errorf("unproven_coverage: %q", res.Import.UnprovenWhy["clock.unproven_coverage"])
	}
}

// TestBusyAboveMHz: without utilization, --busy-above-mhz N counts a
// sample busy exactly when its clock is above N, and the leg carries
// clock.unproven_busy naming N.
func TestBusyAboveMHz(t *testing.T) {
	o := Options{TZ: time.UTC, BusyAboveMHz: 1000}
	res, err := Convert(FormatSMICSV, []Input{{Path: "x.csv", Data: smiLog("timestamp, index, clocks.sm [MHz]",
		"2026/07/18 17:00:00.000, 0, 1000", "2026/07/18 17:00:01.000, 0, 1001")}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if g := res.Record.GPUs[0]; g.SMClockMHz.N != 1 || g.IdleSamplesExcluded != 1 {
		t.Errorf("busy %d idle %d: a sample at exactly 1000 MHz is idle, at 1001 busy", g.SMClockMHz.N, g.IdleSamplesExcluded)
	}
	want := "no utilization: a sample is counted busy when its SM clock is above 1000 MHz (--busy-above-mhz) (log utilization.gpu)"
	if got := res.Import.UnprovenWhy["clock.unproven_busy"]; got != want {
		t.Errorf("unproven_busy %q", got)
	}
}

// TestColumnsFlag: a headerless CSV reads with --columns; a repeated
// header (a log appended by a second nvidia-smi run) is dropped and
// recorded.
func TestColumnsFlag(t *testing.T) {
	o := Options{TZ: time.UTC, Columns: strings.Split("timestamp,index,clocks.sm,utilization.gpu", ",")}
	res, err := Convert(FormatSMICSV, []Input{{Path: "x.csv", Data: []byte("2026/07/18 17:00:00.000, 0, 1980, 50\n2026/07/18 17:00:01.000, 0, 1980, 50\n")}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Window.SamplesTotal != 2 {
		t.Errorf("samples %d", res.Record.Window.SamplesTotal)
	}
	res, err = Convert(FormatSMICSV, []Input{{Path: "x.csv", Data: smiLog(smiHead, smiRow("2026/07/18 17:00:00.000", 0, "1980", "50"), smiHead, smiRow("2026/07/18 17:00:01.000", 0, "1980", "50"))}}, Options{TZ: time.UTC})
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Import.DroppedLines; len(d) != 1 || d[0].Line != 3 || d[0].Why != "repeated header" {
		t.Errorf("dropped %v", d)
	}
}

// TestPersistenceJudged: a log that records persistence_mode is judged on
// it as a sampler's stream is; only a log without it is unproven.
func TestPersistenceJudged(t *testing.T) {
	var rows []string
	for i := 0; i < 40; i++ {
		rows = append(rows, fmt.Sprintf("2026/07/18 17:00:%02d.000, 0, GPU-a, Disabled, 1980, 90", i))
	}
	res, leg := importLegData(t, FormatSMICSV, Options{TZ: time.UTC}, "x.csv",
		smiLog("timestamp, index, uuid, persistence_mode, clocks.sm [MHz], utilization.gpu [%]", rows...))
	for _, c := range res.Import.Unproven {
		if c == clocks.CodeUnprovenPersistence {
			t.Errorf("persistence recorded, yet unproven")
		}
	}
	want := `persistence_mode "Disabled" in 40 of 40 samples (first at line 1); want "Enabled" in every sample`
	if got := reasonMap(leg)[clocks.CodePersistence]; got != want {
		t.Errorf("persistence %q", got)
	}
}

// TestThrottleCoverage: per-reason columns and event counters each cover
// their bit; clock.unproven_throttle names only the bits none covers, and
// a covered reason that was active is judged (clock.throttle).
func TestThrottleCoverage(t *testing.T) {
	head := "timestamp, index, clocks.sm [MHz], utilization.gpu [%], clocks_throttle_reasons.hw_slowdown"
	for _, k := range counterKeys {
		head += ", clocks_event_reasons_counters." + k + " [us]"
	}
	var rows []string
	for i := 0; i < 40; i++ {
		hw := "Not Active"
		if i == 20 {
			hw = "Active"
		}
		rows = append(rows, fmt.Sprintf("2026/07/18 17:00:%02d.000, 0, 1980, 90, %s, 5, 5, 5, 5, 5", i, hw))
	}
	res, leg := importLegData(t, FormatSMICSV, Options{TZ: time.UTC}, "x.csv", smiLog(head, rows...))
	want := "no throttle bitmask column (per-reason columns and event counters cover 0x00000000000000fc); bits not covered: " +
		"0x0000000000000200 BoardLimit, 0x0000000000000400 Reliability (log clocks_event_reasons.active, or DCGM_FI_DEV_CLOCKS_EVENT_REASONS)"
	if got := res.Import.UnprovenWhy[clocks.CodeUnprovenThrottle]; got != want {
		t.Errorf("unproven_throttle\n got %q\nwant %q", got, want)
	}
	if got := reasonMap(leg)[clocks.CodeThrottle]; !strings.HasPrefix(got, "non-benign throttle bits in busy samples: 0x0000000000000008 HwSlowdown") {
		t.Errorf("throttle %q", got)
	}
}

// TestIntervalFromTheStreamsTimes: a log whose times carry more digits
// than the stream's millisecond infers its interval from the times as the
// stream writes them. At 17:00:00.0000, .0909 and .2019 the stream holds
// .000, .090 and .201: gaps of 90 and 111 ms, a mean spacing of 100.5 ms,
// so 0.100 s (111 ms is over 110% of it). From the log's own digits the
// median, 111 ms, stood within 110% of their mean (100.95 ms): a record of
// 0.111 s that its stream's mean spacing refuses (clock.stream_mismatch).
func TestIntervalFromTheStreamsTimes(t *testing.T) {
	o := Options{TZ: time.UTC, TZName: "UTC"}
	res, err := Convert(FormatSMICSV, []Input{{Path: "x.csv", Data: smiLog(smiHead,
		smiRow("2026/07/18 17:00:00.0000", 0, "1980", "50"), smiRow("2026/07/18 17:00:00.0909", 0, "1980", "50"),
		smiRow("2026/07/18 17:00:00.2019", 0, "1980", "50"))}}, o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Record.Window.IntervalS != 0.1 || res.Record.Window.LastT != "2026-07-18T17:00:00.201Z" {
		t.Errorf("interval_s %v, last %s; want 0.1 and 2026-07-18T17:00:00.201Z", res.Record.Window.IntervalS, res.Record.Window.LastT)
	}
}

// TestGPUSelectionAcrossFilesAndWindow: --gpu keeps a GPU's rows from
// whichever file holds them, a file whose rows it all drops being no file
// without data; and a --gpu whose readings all fall outside --from/--to
// names a GPU the source has: what is refused is the empty window.
func TestGPUSelectionAcrossFilesAndWindow(t *testing.T) {
	var a, b []string
	for i := 0; i < 4; i++ {
		ts := fmt.Sprintf("2026/07/18 17:00:%02d.000", i)
		a = append(a, smiRow(ts, 0, "1980", "50"))
		b = append(b, smiRow(ts, 1, "1410", "50"))
	}
	in := []Input{{Path: "a.csv", Data: smiLog(smiHead, a...)}, {Path: "b.csv", Data: smiLog(smiHead, b...)}}
	res, err := Convert(FormatSMICSV, in, Options{TZ: time.UTC, TZName: "UTC", GPU: "0"})
	if err != nil {
		t.Fatalf("--gpu 0 over a.csv (GPU 0) and b.csv (GPU 1): %v", err)
	}
	if len(res.Record.GPUs) != 1 || *res.Record.GPUs[0].SMClockMHz.Median != 1980 || len(res.Import.DroppedLines) != 4 {
		t.Errorf("record GPUs %+v, dropped %+v", res.Record.GPUs, res.Import.DroppedLines)
	}
	late := Options{TZ: time.UTC, TZName: "UTC", GPU: "0", From: time.Date(2026, 7, 18, 18, 0, 0, 0, time.UTC)}
	_, err = Convert(FormatSMICSV, in, late)
	if err == nil || strings.Contains(err.Error(), "no GPU in the source has that index or UUID") || !strings.Contains(err.Error(), "no samples") {
		t.Errorf("--gpu 0 with every reading before --from: %v; want no samples, never that the source lacks GPU 0", err)
	}
}
