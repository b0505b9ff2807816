package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/report"
	"github.com/clockgate/clockgate/summarize"
)

// aggregatedRun is what the report part measures on a healthy build: two
// arms of 1,000 legs, each picture aggregated.
func aggregatedRun() reportResult {
	return reportResult{tree: "2000 legs × 60 samples as two arms", legs: 2000, html: 310_000, md: 60_000, browser: "chromium",
		render: 2600 * time.Millisecond, blank: 2100 * time.Millisecond, widest: "c1-throughput-spread-p1", widestLegs: 21}
}

func TestReportGuardPassesAnAggregatedReport(t *testing.T) {
	if bad := shortReportBounds.check(aggregatedRun()); len(bad) > 0 {
		t.Fatalf("an aggregated report failed the guard: %q", bad)
	}
}

// TestReportGuardFailsAPictureOfEveryLeg: the guard counts the legs a real
// report's pictures draw one by one (the staircase tree's, three an arm)
// and fails a picture past its bound, naming it; a picture that draws
// every leg of a 10,000-leg arm fails -short's bound.
func TestReportGuardFailsAPictureOfEveryLeg(t *testing.T) {
	s, err := summarize.Summarize("../../testdata/trees/staircase", summarize.Options{Baseline: "vllm", Traces: true})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := report.HTML(&b, s); err != nil {
		t.Fatal(err)
	}
	r := aggregatedRun()
	r.widest, r.widestLegs = widestPicture(b.String())
	if r.widest != "c1-throughput-spread-p1" || r.widestLegs != 3 {
		t.Fatalf("widest picture %q of %d legs, want c1-throughput-spread-p1 of 3 (the staircase arm's legs, drawn one by one; the clock pictures draw as many, after it)", r.widest, r.widestLegs)
	}
	// The clock pictures are counted too: without the spread's dots, the
	// ours arm's clock picture is the widest.
	if id, n := widestPicture(strings.ReplaceAll(b.String(), `<circle class="leg"`, "<circle ")); id != "c1-ours" || n != 3 {
		t.Errorf("without the spread's dots the widest picture is %q of %d legs, want c1-ours of 3", id, n)
	}
	injected := shortReportBounds
	injected.MaxLegsDraw = 2
	bad := injected.check(r)
	want := "2000 legs × 60 samples as two arms: picture c1-throughput-spread-p1 draws 3 legs one by one; the bound is 2 (an arm of more legs is drawn aggregated)"
	if len(bad) != 1 || bad[0] != want {
		t.Errorf("with the bound at 2: %q, want [%q]", bad, want)
	}
	injected.MaxLegsDraw = 3
	if bad := injected.check(r); len(bad) > 0 {
		t.Errorf("a picture of exactly the bound failed: %q", bad)
	}

	r = aggregatedRun()
	r.widest, r.widestLegs = "c1-ours", 10000
	bad = shortReportBounds.check(r)
	if len(bad) != 1 || !strings.Contains(bad[0], "picture c1-ours draws 10000 legs one by one; the bound is 200") {
		t.Errorf("a picture of every leg of a 10,000-leg arm: %q", bad)
	}
}

// TestReportGuardFailsSizeAndRenderTime: report.html past the size bound,
// and a render past the time bound beyond a blank page, fail the guard,
// naming what and the bound; at the bounds exactly they pass.
func TestReportGuardFailsSizeAndRenderTime(t *testing.T) {
	r := aggregatedRun()
	r.html = 1_000_000
	r.render = r.blank + 3*time.Second
	if bad := shortReportBounds.check(r); len(bad) > 0 {
		t.Fatalf("a report at exactly the bounds failed: %q", bad)
	}
	r.html = 5_600_000
	r.render = r.blank + 3010*time.Millisecond
	bad := shortReportBounds.check(r)
	want := []string{
		"2000 legs × 60 samples as two arms: report.html is 5.60 MB; the bound is 1.00 MB",
		"2000 legs × 60 samples as two arms: headless Chromium rendered report.html in 3.01 s beyond a blank page's 2.10 s; the bound is 3.00 s",
	}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Errorf("got %q, want %q", bad, want)
	}
	// Without a browser the render time is not judged.
	r.browser = ""
	if bad := shortReportBounds.check(r); len(bad) != 1 {
		t.Errorf("without a browser: %q, want the size failure only", bad)
	}
}
