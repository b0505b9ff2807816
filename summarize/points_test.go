package summarize_test

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/summarize"
)

func init() {
	for k, v := range pointScenarioWants {
		newScenarioWants[k] = v
	}
}

// wantPoint is what one point's clock block must say: judged or not, its
// window source ("" for null), and its median offset to 0.01 (-1: null).
type wantPoint struct {
	label  string
	judged bool
	window string
	offset float64
}

// checkPoints holds every comparison's points to want, in order.
func checkPoints(want []wantPoint) func(t *testing.T, s *summarize.Summary) {
	return func(t *testing.T, s *summarize.Summary) {
		t.Helper()
		for _, c := range s.Comparisons {
			if len(c.Throughput.Points) != len(want) {
				t.Fatalf("%d points, want %d", len(c.Throughput.Points), len(want))
			}
			for i, pt := range c.Throughput.Points {
				w, pc := want[i], pt.Clock
				if pc == nil {
					t.Fatalf("%s: no clock block", pt.ID.Label())
				}
				win := ""
				if pc.Window != nil {
					win = *pc.Window
				}
				off := -1.0
				if pc.OffsetPct != nil {
					off = *pc.OffsetPct
				}
				if pt.ID.Label() != w.label || pc.Judged != w.judged || win != w.window || off != w.offset {
					t.Errorf("%s: judged %v, window %q, offset %v; want %s judged %v, window %q, offset %v",
						pt.ID.Label(), pc.Judged, win, off, w.label, w.judged, w.window, w.offset)
				}
			}
		}
	}
}

func noWindowWarnings(engine string, runs []int, points []string, why string) []string {
	var out []string
	for _, p := range points {
		for _, r := range runs {
			out = append(out, fmt.Sprintf("%s/%s/r%d: point %s has no clock window: %s; the point is not judged on its own clock", llama, engine, r, p, why))
		}
	}
	return out
}

var allPoints = []string{"1/inf", "2/inf", "4/inf", "8/inf"}

var pointScenarioWants = map[string]wantScenario{
	"points-drift": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", memory: true, codes: []string{clocks.CodePointOffset}, memCodes: []string{}}},
		fragments: []string{"point 8/inf, over its marks windows (82 free busy samples of fastengine, 88 of vllm): free median offset 2.02% > 1.0%: " +
			"fastengine 2420 MHz, vllm 2470 MHz (estimated effect 1.53% at transfer 0.7548); the free mean offset 2.02% is over it too (fastengine 2419.95 MHz, vllm 2469.95 MHz)"},
		extra: func(t *testing.T, s *summarize.Summary) {
			checkPoints([]wantPoint{{"1/inf", true, "marks", 0}, {"2/inf", true, "marks", 0.2}, {"4/inf", true, "marks", 0.61}, {"8/inf", true, "marks", 2.02}})(t, s)
			// The leg's own checks pass: spread, and the whole leg's offset.
			b := s.Comparisons[0].Throughput.Clock
			if !b.Established || *b.OffsetPct > clocks.MaxOffsetPct || *b.MeanOffsetPct > clocks.MaxOffsetPct {
				t.Errorf("leg clock block established %v, offset %v, mean %v: want the leg to pass", b.Established, *b.OffsetPct, *b.MeanOffsetPct)
			}
		},
	},
	"points-drift-dates": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", memory: true, codes: []string{clocks.CodePointOffset}, memCodes: []string{}}},
		fragments:   []string{"point 8/inf, over its vllm-date windows (76 free busy samples of fastengine, 82 of vllm): free median offset 2.02% > 1.0%: fastengine 2420 MHz, vllm 2470 MHz"},
		extra: checkPoints([]wantPoint{{"1/inf", true, "vllm-date", 0}, {"2/inf", true, "vllm-date", 0.2},
			{"4/inf", true, "vllm-date", 0.61}, {"8/inf", true, "vllm-date", 2.02}}),
	},
	"points-utc-client": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		extra: func(t *testing.T, s *summarize.Summary) {
			checkPoints([]wantPoint{{"1/inf", true, "vllm-date", 0.08}, {"2/inf", true, "vllm-date", 0.26},
				{"4/inf", true, "vllm-date", 0.08}, {"8/inf", true, "vllm-date", 0.06}})(t, s)
			for _, l := range s.Legs {
				w := l.Clock.Record.Window
				if w.UTCOffsetS == nil || *w.UTCOffsetS != 7200 || w.TimeZone != "Europe/Berlin" {
					t.Errorf("%s %s: utc_offset_s %v, time_zone %q", l.Engine, l.Name(), w.UTCOffsetS, w.TimeZone)
				}
				if l.Clock.PointSource != clocks.WindowVLLMDate || len(l.Clock.Points) != 4 {
					t.Errorf("%s %s: source %q, %d windows", l.Engine, l.Name(), l.Clock.PointSource, len(l.Clock.Points))
				}
			}
		},
	},
	"points-zone-neither": {
		legs:        map[string][]string{llama + "/vllm/r2": {clocks.CodeBenchOutsideWindow}},
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: []string{clocks.CodeLegIneligible}}},
		fragments: []string{"bench/" + llama + "/vllm/r2/c8.json: point 8/inf ran, by its date 20260812-071011 and duration 42.984 s (within date − duration − 1 s to date + 1 s), " +
			"at 2026-08-12T07:09:27.016Z to 2026-08-12T07:10:12.000Z under the host's zone (Etc/UTC, +00:00 at the first sample), which is UTC's too, " +
			"outside the leg's clock window 2026-08-12T11:07:00.833Z to 2026-08-12T11:10:10.837Z: these results are no evidence about this clock"},
		warnings: append([]string{llama + "/vllm/r2: vLLM dates lie inside the clock window (2026-08-12T11:07:00.833Z to 2026-08-12T11:10:10.837Z) " +
			"under no zone: not under the host's zone (Etc/UTC, +00:00 at the first sample), which is UTC's too; no point of the leg has a window: record the points with clockgate mark"},
			noWindowWarnings("vllm", []int{2}, allPoints, "its vLLM date fits no one zone")...),
		extra: checkPoints([]wantPoint{{"1/inf", false, "", -1}, {"2/inf", false, "", -1}, {"4/inf", false, "", -1}, {"8/inf", false, "", -1}}),
	},
	"points-open-mark": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		warnings: noWindowWarnings("fastengine", []int{2}, []string{"8/inf"},
			"clockgate mark began it at 2026-08-12T09:09:17.071Z (line 7) and wrote no end: the command was killed, or is still running"),
		extra: checkPoints([]wantPoint{{"1/inf", true, "marks", 0.28}, {"2/inf", true, "marks", 0.2}, {"4/inf", true, "marks", 0.16}, {"8/inf", false, "", -1}}),
	},
	"points-sglang": {
		comparisons: []wantRatio{{model: llama, ours: "sglang", throughput: true, memory: true}},
		gatePass:    true,
		warnings: noWindowWarnings("sglang", []int{1, 2}, allPoints,
			"no points file (clockgate mark) beside its stream and no vLLM result with a date (SGLang's results carry no time)"),
		extra: checkPoints([]wantPoint{{"1/inf", false, "", -1}, {"2/inf", false, "", -1}, {"4/inf", false, "", -1}, {"8/inf", false, "", -1}}),
	},
	"points-power-managed": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		extra: func(t *testing.T, s *summarize.Summary) {
			checkPoints([]wantPoint{{"1/inf", true, "marks", 0}, {"2/inf", true, "marks", 0}, {"4/inf", true, "marks", 0}, {"8/inf", true, "marks", 0}})(t, s)
			// The shares are the fold's own classification, counted per
			// window: fastengine capped about half its busy seconds, vllm
			// about a third.
			for i, want := range [][2]float64{{52.86, 37.5}, {56.76, 33.75}, {53.66, 30.68}, {53.06, 35.58}} {
				pc := s.Comparisons[0].Throughput.Points[i].Clock
				if *pc.Ours.PowerManagedPct != want[0] || *pc.Baseline.PowerManagedPct != want[1] || *pc.Ours.MedianMHz != 1980 {
					t.Errorf("point %d: power-managed %v%% and %v%%, free median %v; want %v", i, *pc.Ours.PowerManagedPct, *pc.Baseline.PowerManagedPct, *pc.Ours.MedianMHz, want)
				}
			}
		},
	},
	"points-thin": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		extra: func(t *testing.T, s *summarize.Summary) {
			checkPoints([]wantPoint{{"1/inf", true, "marks", 0.12}, {"2/inf", false, "", 0.22}, {"4/inf", false, "", 0.12}, {"8/inf", false, "", 0.1}})(t, s)
			for _, pt := range s.Comparisons[0].Throughput.Points[1:] {
				if want := "too thin: fastengine 24, vllm 24 free busy samples, under 30"; pt.Clock.NotJudged != want {
					t.Errorf("%s: not judged %q, want %q", pt.ID.Label(), pt.Clock.NotJudged, want)
				}
			}
		},
	},
}

// TestMarksAndDatesAgree: one drifting clock, its windows from clockgate
// mark in one tree and from vLLM's dates in the other, gives one verdict:
// the same codes, the same points judged, the same point failing.
func TestMarksAndDatesAgree(t *testing.T) {
	verdict := func(name string) string {
		s, err := summarize.Summarize(treesDir+"/"+name, summarize.Options{Baseline: "vllm"})
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		for _, c := range s.Comparisons {
			fmt.Fprintf(&b, "%s %v %v %v;", c.Ours, c.Throughput.BindingEligible, c.Memory.BindingEligible, clocks.Codes(c.Throughput.Reasons))
			for _, pt := range c.Throughput.Points {
				fmt.Fprintf(&b, " %s judged=%v", pt.ID.Label(), pt.Clock.Judged)
			}
			for _, r := range c.Throughput.Reasons {
				fmt.Fprintf(&b, " %s", r.Message[:len("point 8/inf")])
			}
		}
		return b.String()
	}
	marks, dates := verdict("points-drift"), verdict("points-drift-dates")
	if marks != dates || !strings.Contains(marks, "clock.point_offset") {
		t.Errorf("marks: %s\ndates: %s", marks, dates)
	}
}

// TestNoWindowsNoClockKey: a tree without marks and with records that name
// no zone gives points without a clock block, as before point windows.
func TestNoWindowsNoClockKey(t *testing.T) {
	s, err := summarize.Summarize(treesDir+"/clean-grid", summarize.Options{Baseline: "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range s.Comparisons {
		for _, pt := range c.Throughput.Points {
			if pt.Clock != nil {
				t.Errorf("%s %s: a clock block without windows", c.Model, pt.ID.Label())
			}
		}
	}
}

// TestMalformedPointsFile: a points file that cannot be read is a warning
// naming its line, and its leg's points have no window (its vLLM dates
// are not consulted in its place); the leg's own verdict stands.
func TestMalformedPointsFile(t *testing.T) {
	root := t.TempDir()
	if err := os.CopyFS(root, os.DirFS(treesDir+"/points-drift")); err != nil {
		t.Fatal(err)
	}
	rel := "clocks/" + llama + "/fastengine/r1.points.jsonl"
	if err := os.WriteFile(root+"/"+rel, []byte(`{"point":"1/inf","event":"begin","t":"2026-08-12T09:00:00.000Z"}`+"\n"+`{"point":"1/inf","event":"stop"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	s, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm"})
	if err != nil {
		t.Fatal(err)
	}
	want := llama + "/fastengine/r1: " + rel + `:2: t: want an RFC 3339 time, found nothing (key missing); its points have no window`
	if len(s.Warnings) == 0 || s.Warnings[0] != want {
		t.Fatalf("warnings %q, want first %q", s.Warnings, want)
	}
	c := s.Comparisons[0]
	if !c.Memory.BindingEligible || c.Throughput.Points[3].Clock.Judged || len(clocks.Codes(c.Throughput.Reasons)) != 0 {
		t.Errorf("memory %v, 8/inf judged %v, codes %v", c.Memory.BindingEligible, c.Throughput.Points[3].Clock.Judged, clocks.Codes(c.Throughput.Reasons))
	}
}
