package summarize_test

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/benchfmt"
	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/summarize"
)

func init() {
	for k, v := range outsideScenarioWants {
		newScenarioWants[k] = v
	}
}

// legsWith are the legs of an imported scenario's two arms, each
// carrying code alone.
func legsWith(code string) map[string][]string {
	out := map[string][]string{}
	for _, e := range []string{"fastengine", "vllm"} {
		for _, r := range []string{"r1", "r2"} {
			out[llama+"/"+e+"/"+r] = []string{code}
		}
	}
	return out
}

// The new user's case (SPEC §12.1.1): results three months away from the
// imported log are NOT ESTABLISHED; the same log with its own run's
// results is ESTABLISHED, every point judged on its vLLM date.
var outsideScenarioWants = map[string]wantScenario{
	"imported-months-apart": {
		legs:        legsWith(clocks.CodeBenchOutsideWindow),
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: repeat(clocks.CodeLegIneligible, 4)}},
		fragments: []string{"bench/" + llama + "/vllm/r1/c8.json: point 8/inf ran, by its date 20260818-180343 and duration 50.987 s " +
			"(within date − duration − 1 s to date + 1 s), at 2026-08-19T01:02:51.013Z to 2026-08-19T01:03:44.000Z under the host's zone (-07:00) " +
			"and at 2026-08-18T18:02:51.013Z to 2026-08-18T18:03:44.000Z under UTC, outside the leg's clock window 2026-11-03T18:00:00.123Z " +
			"to 2026-11-03T18:03:43.128Z: these results are no evidence about this clock"},
		// As before SPEC §12.1.1: the dates fit no zone, so no point is
		// judged on its own clock.
		warnings: monthsApartWarnings(),
		extra: func(t *testing.T, s *summarize.Summary) {
			for _, l := range s.Legs {
				n := 0
				for _, r := range l.Reasons {
					if r.Code == clocks.CodeBenchOutsideWindow {
						n++
					}
				}
				if n != 4 {
					t.Errorf("%s %s: %d bench.outside_window, want one per point (4)", l.Engine, l.Name(), n)
				}
			}
		},
	},
	"imported-no-time": {
		legs:        legsWith(clocks.CodeUnprovenWindow),
		comparisons: []wantRatio{{model: llama, ours: "fastengine", codes: repeat(clocks.CodeLegIneligible, 4)}},
		fragments: []string{"imported record: none of the leg's 4 bench results has a time (no date, no epoch window) and no clockgate mark gives one, " +
			"so nothing ties these results to this log; keep each result's time (vLLM's --save-result writes its date, and import the log with --tz " +
			"naming the bench host's zone), or run each point under clockgate mark"},
	},
	"imported-same-run": {
		comparisons: []wantRatio{{model: llama, ours: "fastengine", throughput: true, memory: true}},
		gatePass:    true,
		extra: func(t *testing.T, s *summarize.Summary) {
			checkPoints([]wantPoint{{"1/inf", true, "vllm-date", 0}, {"2/inf", true, "vllm-date", 0},
				{"4/inf", true, "vllm-date", 0}, {"8/inf", true, "vllm-date", 0}})(t, s)
			for _, l := range s.Legs {
				if w := l.Clock.Record.Window; w.UTCOffsetS == nil || *w.UTCOffsetS != -7*3600 || w.TimeZone != "" {
					t.Errorf("%s %s: utc_offset_s %v, time_zone %q; want -25200 as import --tz -07:00 records it", l.Engine, l.Name(), w.UTCOffsetS, w.TimeZone)
				}
			}
		},
	},
}

func monthsApartWarnings() []string {
	var out []string
	for _, e := range []string{"fastengine", "vllm"} {
		for _, r := range []string{"r1", "r2"} {
			out = append(out, llama+"/"+e+"/"+r+": vLLM dates lie inside the clock window (2026-11-03T")
		}
		out = append(out, noWindowWarnings(e, []int{1, 2}, allPoints, "its vLLM date fits no one zone")...)
	}
	return out
}

// TestOutsideWindowEitherArm: imported-same-run with one leg's results
// changed, on each side in turn: one result of 16 August in ours' or the
// baseline's r1 is bench.outside_window on that leg alone, and voids
// both ratios (leg.ineligible naming it); every result of that leg
// stripped of its date is clock.unproven_window on that leg alone.
func TestOutsideWindowEitherArm(t *testing.T) {
	for _, side := range []string{"fastengine", "vllm"} {
		for _, c := range []struct {
			code string
			edit func(t *testing.T, dir string)
		}{
			{clocks.CodeBenchOutsideWindow, func(t *testing.T, dir string) {
				rewrite(t, filepath.Join(dir, "c8.json"), func(s string) string { return strings.Replace(s, `"date": "20261103-`, `"date": "20260816-`, 1) })
			}},
			{clocks.CodeUnprovenWindow, func(t *testing.T, dir string) {
				for _, f := range []string{"c1.json", "c2.json", "c4.json", "c8.json"} {
					rewrite(t, filepath.Join(dir, f), func(s string) string { return regexp.MustCompile(`"date": "[0-9-]+", `).ReplaceAllString(s, "") })
				}
			}},
		} {
			root := copyTree(t, "imported-same-run")
			c.edit(t, filepath.Join(root, "bench", llama, side, "r1"))
			s := run(t, root)
			for _, l := range s.Legs {
				want := []string(nil)
				if l.Engine == side && l.Run == 1 {
					want = []string{c.code}
				}
				if got := clocks.Codes(l.Reasons); !slices.Equal(got, want) {
					t.Errorf("%s on %s: leg %s %s codes %v, want %v", c.code, side, l.Engine, l.Name(), got, want)
				}
			}
			cmp := s.Comparisons[0]
			for fam, f := range map[string]struct {
				ok      bool
				reasons []clocks.Reason
			}{"THROUGHPUT": {cmp.Throughput.BindingEligible, cmp.Throughput.Reasons}, "MEMORY": {cmp.Memory.BindingEligible, cmp.Memory.Reasons}} {
				msg := "leg " + side + " r1 is not binding-eligible: " + c.code
				if f.ok || len(f.reasons) != 1 || f.reasons[0].Code != clocks.CodeLegIneligible || f.reasons[0].Message != msg {
					t.Errorf("%s on %s: %s eligible %v, reasons %v; want leg.ineligible %q", c.code, side, fam, f.ok, f.reasons, msg)
				}
			}
		}
	}
}

// rewrite changes a file's text in place.
func rewrite(t *testing.T, path string, edit func(string) string) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	out := edit(string(data))
	if out == string(data) {
		t.Fatalf("%s: the edit changed nothing", path)
	}
	if err := os.WriteFile(path, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestOutsideWindowSGLangDate: an SGLang result that carries a date (a
// fork's, in either layout) is checked as a vLLM one: inside its leg's
// window it is no reason, a day later it is bench.outside_window naming
// the file and its line.
func TestOutsideWindowSGLangDate(t *testing.T) {
	for _, c := range []struct {
		date    string
		outside bool
	}{
		{"2026-08-12 09:01:10", false},
		{"20260813-090110", true},
	} {
		root := copyTree(t, "points-sglang")
		rewrite(t, filepath.Join(root, "bench", llama, "sglang", "r1", "results.jsonl"), func(s string) string {
			return strings.Replace(s, `{"backend": "sglang", `, `{"date": "`+c.date+`", "backend": "sglang", `, 1)
		})
		s := run(t, root)
		l := legOf(t, s, llama+"/sglang/r1")
		want := []string(nil)
		if c.outside {
			want = []string{clocks.CodeBenchOutsideWindow}
		}
		if got := clocks.Codes(l.Reasons); !slices.Equal(got, want) {
			t.Fatalf("date %s: codes %v (%v), want %v", c.date, got, l.Reasons, want)
		}
		if c.outside && !strings.HasPrefix(l.Reasons[0].Message, "bench/"+llama+"/sglang/r1/results.jsonl:1: point 1/inf ran, by its date 20260813-090110 and duration 58.999 s") {
			t.Errorf("message %q", l.Reasons[0].Message)
		}
	}
}

// TestOutsideWindowMarks: imported-no-time with one leg's points run
// under clockgate mark, on each side in turn. Marks inside the leg's
// clock window tie its undated results to the log (no reason on that
// leg); the same marks 90 days later tie nothing: each is
// bench.outside_window naming the points file, the point, its time and
// the window, and the leg stays clock.unproven_window.
func TestOutsideWindowMarks(t *testing.T) {
	first := map[string]string{"fastengine": "2026-11-03T16:00:00.868Z", "vllm": "2026-11-03T18:00:00.708Z"}
	last := map[string]string{"fastengine": "2026-11-03T16:03:28.848Z", "vllm": "2026-11-03T18:03:43.680Z"}
	for _, side := range []string{"fastengine", "vllm"} {
		for _, later := range []time.Duration{0, 90 * 24 * time.Hour} {
			root := copyTree(t, "imported-no-time")
			start, err := time.Parse(time.RFC3339Nano, first[side])
			if err != nil {
				t.Fatal(err)
			}
			var lines []string
			for i, p := range []string{"1/inf", "2/inf", "4/inf", "8/inf"} {
				b := start.Add(later + time.Duration(5+45*i)*time.Second)
				exit := 0
				lines = append(lines, benchfmt.MarkLine(p, "begin", b, nil), benchfmt.MarkLine(p, "end", b.Add(30*time.Second), &exit))
			}
			marks := filepath.Join("clocks", llama, side, "r1"+summarize.PointsSuffix)
			if err := os.WriteFile(filepath.Join(root, marks), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			s := run(t, root)
			for _, l := range s.Legs {
				want := []string{clocks.CodeUnprovenWindow}
				if l.Engine == side && l.Run == 1 {
					want = nil
					if later > 0 {
						want = []string{clocks.CodeBenchOutsideWindow, clocks.CodeUnprovenWindow}
					}
				}
				if got := clocks.Codes(l.Reasons); !slices.Equal(got, want) {
					t.Errorf("marks %v later on %s: leg %s %s codes %v (%v), want %v", later, side, l.Engine, l.Name(), got, l.Reasons, want)
				}
				if l.Engine == side && l.Run == 1 && later > 0 {
					if len(l.Reasons) != 5 {
						t.Fatalf("marks %v later on %s: %d reasons, want one bench.outside_window per mark (4) and clock.unproven_window: %v", later, side, len(l.Reasons), l.Reasons)
					}
					b := start.Add(later + 5*time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
					e := start.Add(later + 35*time.Second).UTC().Format("2006-01-02T15:04:05.000Z")
					want := marks + ": point 1/inf ran " + b + " to " + e + " (its clockgate mark, in UTC), outside the leg's clock window " +
						first[side] + " to " + last[side] + ": nothing ties these results to this clock"
					if m := l.Reasons[0].Message; !strings.HasPrefix(m, want) {
						t.Errorf("message %q, want it to start %q", m, want)
					}
				}
			}
		}
	}
}

// TestUnprovenWindowUnreadDate: imported-no-time whose one leg's results
// carry a date in no format clockgate reads, on each side in turn: the
// leg's clock.unproven_window names the date as unreadable rather than
// saying the results have none.
func TestUnprovenWindowUnreadDate(t *testing.T) {
	for _, side := range []string{"fastengine", "vllm"} {
		root := copyTree(t, "imported-no-time")
		rewrite(t, filepath.Join(root, "bench", llama, side, "r1", "results.jsonl"), func(s string) string {
			return strings.ReplaceAll(s, `{"backend": "sglang", `, `{"date": "03/11/2026 18:01:00", "backend": "sglang", `)
		})
		l := legOf(t, run(t, root), llama+"/"+side+"/r1")
		if got := clocks.Codes(l.Reasons); !slices.Equal(got, []string{clocks.CodeUnprovenWindow}) {
			t.Fatalf("%s: codes %v, want clock.unproven_window", side, got)
		}
		want := "imported record: none of the leg's 4 bench results has a time (bench/" + llama + "/" + side + `/r1/results.jsonl:1 (point 1/inf) has the date "03/11/2026 18:01:00", `
		if m := l.Reasons[0].Message; !strings.HasPrefix(m, want) || !strings.Contains(m, "in neither %Y%m%d-%H%M%S nor %Y-%m-%d %H:%M:%S, so clockgate cannot read it) and no clockgate mark gives one") {
			t.Errorf("%s: message %q, want it to start %q and say the date cannot be read", side, m, want)
		}
	}
}
