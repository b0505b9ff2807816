package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportZoneTiesDates: import --tz records the zone in the record as
// the sampler does (utc_offset_s at the first sample; time_zone where the
// flag names an IANA zone), so that the bench results' dates are placed
// in time; without --tz a log with its own zone records none.
func TestImportZoneTiesDates(t *testing.T) {
	log := "timestamp, index, clocks.sm [MHz], utilization.gpu [%]\n2026/11/03 10:00:00.000, 0, 1980, 50\n2026/11/03 10:00:01.000, 0, 1980, 50\n"
	for _, c := range []struct {
		tz       string
		offset   int
		zoneName string
	}{
		{"America/Los_Angeles", -8 * 3600, "America/Los_Angeles"}, // PST on 3 November
		{"-07:00", -7 * 3600, ""},
		{"UTC", 0, "UTC"},
	} {
		dir := t.TempDir()
		in := filepath.Join(dir, "x.csv")
		if err := os.WriteFile(in, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		if code := Main([]string{"import", "--format", "nvidia-smi-csv", "--tz", c.tz, in, "--out", filepath.Join(dir, "r1")}, nil, &out, &errOut); code != ExitOK {
			t.Fatalf("--tz %s: exit %d: %s", c.tz, code, errOut.String())
		}
		data, err := os.ReadFile(filepath.Join(dir, "r1.summary.json"))
		if err != nil {
			t.Fatal(err)
		}
		var rec struct {
			Window map[string]any `json:"window"`
		}
		if err := json.Unmarshal(data, &rec); err != nil {
			t.Fatal(err)
		}
		off, ok := rec.Window["utc_offset_s"].(float64)
		zone, _ := rec.Window["time_zone"].(string)
		if !ok || int(off) != c.offset || zone != c.zoneName {
			t.Errorf("--tz %s: utc_offset_s %v, time_zone %q; want %d, %q", c.tz, rec.Window["utc_offset_s"], zone, c.offset, c.zoneName)
		}
	}
}

// TestStrictFailsResultsMonthsApart: the new user's case (SPEC §12.1.1):
// imported telemetry of 3 November with vLLM results of 16 and 18 August
// fails summarize --strict (exit 1) naming bench.outside_window; the same
// logs with their own run's results pass.
func TestStrictFailsResultsMonthsApart(t *testing.T) {
	for _, c := range []struct {
		tree string
		code int
		gate string
	}{
		{"imported-months-apart", ExitFailed, "Gate: **FAIL**"},
		{"imported-same-run", ExitOK, "Gate: **PASS**"},
	} {
		dir := t.TempDir()
		var out, errOut bytes.Buffer
		code := Main([]string{"summarize", filepath.Join("..", "..", "testdata", "trees", c.tree), "--out", dir, "--strict"}, nil, &out, &errOut)
		if code != c.code {
			t.Errorf("%s: exit %d, want %d; stderr %s", c.tree, code, c.code, errOut.String())
		}
		md, err := os.ReadFile(filepath.Join(dir, "report.md"))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(md), c.gate) {
			t.Errorf("%s: report.md lacks %q", c.tree, c.gate)
		}
		if has := strings.Contains(string(md), "bench.outside_window"); has != (c.code == ExitFailed) {
			t.Errorf("%s: report.md names bench.outside_window: %v", c.tree, has)
		}
	}
}

// TestRealLogRealResultMonthsApart: real files written by others, one
// leg: the nvidia-smi log of testdata/smi-real/h100-vllm-qwen3-8b-tp1
// (18 July 2026, at -07:00), imported with --tz -07:00, beside the real
// vllm bench serve result of testdata/bench-real/vllm-0.25 (dated
// 20260816-160853): the result ran a month after the log, and the leg
// carries bench.outside_window naming the file, its date and the window.
func TestRealLogRealResultMonthsApart(t *testing.T) {
	tree := t.TempDir()
	leg := filepath.Join(tree, "clocks", "qwen3-8b", "vllm")
	bench := filepath.Join(tree, "bench", "qwen3-8b", "vllm", "r1")
	for _, d := range []string{leg, bench} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	var out, errOut bytes.Buffer
	if code := Main([]string{"import", "--format", "nvidia-smi-csv", "--tz", "-07:00", "../../testdata/smi-real/h100-vllm-qwen3-8b-tp1/capture.csv",
		"--out", filepath.Join(leg, "r1")}, nil, &out, &errOut); code != ExitOK {
		t.Fatalf("import: exit %d: %s", code, errOut.String())
	}
	result, err := os.ReadFile("../../testdata/bench-real/vllm-0.25/bench_serve_v0.25.1.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bench, "bench_serve_v0.25.1.json"), result, 0o644); err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	Main([]string{"summarize", tree, "--out", dir}, nil, &out, &errOut)
	data, err := os.ReadFile(filepath.Join(dir, "all-runs.json"))
	if err != nil {
		t.Fatalf("%v; stderr %s", err, errOut.String())
	}
	want := `bench/qwen3-8b/vllm/r1/bench_serve_v0.25.1.json: point 2/inf ran, by its date 20260816-160853 and duration 1.5441598830002476 s (within date − duration − 1 s to date + 1 s), at 2026-08-16T23:08:50.455Z to 2026-08-16T23:08:54.000Z under the host's zone (-07:00) and at 2026-08-16T16:08:50.455Z to 2026-08-16T16:08:54.000Z under UTC, outside the leg's clock window 2026-07-19T00:57:49.469Z to 2026-07-19T00:58:55.553Z`
	if !strings.Contains(string(data), want) {
		t.Errorf("all-runs.json lacks bench.outside_window %q", want)
	}
}

// TestImportZoneRefusesLocal: --tz Local (in any case) and an empty --tz
// name no zone, only whichever machine reads the record: refused (exit 2)
// asking for an IANA name or an offset, nothing written.
func TestImportZoneRefusesLocal(t *testing.T) {
	log := "timestamp, index, clocks.sm [MHz], utilization.gpu [%]\n2026/11/03 10:00:00.000, 0, 1980, 50\n2026/11/03 10:00:01.000, 0, 1980, 50\n"
	for _, tz := range []string{"Local", "local", "", " "} {
		dir := t.TempDir()
		in := filepath.Join(dir, "x.csv")
		if err := os.WriteFile(in, []byte(log), 0o644); err != nil {
			t.Fatal(err)
		}
		var out, errOut bytes.Buffer
		code := Main([]string{"import", "--format", "nvidia-smi-csv", "--tz", tz, in, "--out", filepath.Join(dir, "r1")}, nil, &out, &errOut)
		want := "clockgate: import: --tz \"" + tz + "\" names no zone (it would be read as the zone of whichever machine reads the record): give the bench host's IANA zone (--tz America/Los_Angeles) or its UTC offset (--tz -07:00)\n"
		if code != ExitUsage || errOut.String() != want {
			t.Errorf("--tz %q: exit %d, %q; want exit 2, %q", tz, code, errOut.String(), want)
		}
		if _, err := os.Stat(filepath.Join(dir, "r1.summary.json")); err == nil {
			t.Errorf("--tz %q: a record was written", tz)
		}
	}
}
