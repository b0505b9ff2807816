package history

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clockgate/clockgate/history/histgen"
)

var (
	templateOnce sync.Once
	template     *histgen.Template
	templateErr  error
)

// cleanGrid is the template of every generated grid: the clean-grid tree
// summarized.
func cleanGrid(t testing.TB) *histgen.Template {
	t.Helper()
	templateOnce.Do(func() { template, templateErr = histgen.New("../testdata/trees/clean-grid") })
	if templateErr != nil {
		t.Fatal(templateErr)
	}
	return template
}

var start = time.Date(2026, 9, 1, 2, 0, 0, 0, time.UTC)

func fastengine(t testing.TB) []histgen.Arm {
	var out []histgen.Arm
	for _, a := range cleanGrid(t).Arms {
		if a.Engine == "fastengine" {
			out = append(out, a)
		}
	}
	return out
}

// The generated histories of the issue.
func codeRegression(t testing.TB) histgen.Scenario {
	return histgen.Scenario{Grids: 60, Start: start, Seed: 1, NoiseTP: 0.004, NoiseClock: 0.001, BaseClockMHz: 1980,
		Steps:          []histgen.Step{{At: 40, Arms: fastengine(t), Throughput: 0.95, Clock: 1}},
		NotEstablished: map[int]bool{10: true, 20: true, 33: true, 41: true, 47: true}}
}

func boxChange(t testing.TB) histgen.Scenario {
	return histgen.Scenario{Grids: 50, Start: start, Seed: 2, NoiseTP: 0.004, NoiseClock: 0.001, BaseClockMHz: 1980,
		Steps:          []histgen.Step{{At: 25, Throughput: 0.95, Clock: 0.94}},
		NotEstablished: map[int]bool{12: true, 26: true, 38: true}}
}

// noiseOnly ends in a run of eight NOT ESTABLISHED grids, wild enough
// that counted as established they would be a change
// (TestNotEstablishedNeverDetected).
func noiseOnly(t testing.TB) histgen.Scenario {
	ne := map[int]bool{15: true, 16: true, 44: true}
	for i := 52; i < 60; i++ {
		ne[i] = true
	}
	return histgen.Scenario{Grids: 60, Start: start, Seed: 4, NoiseTP: 0.004, NoiseClock: 0.001, BaseClockMHz: 1980,
		NotEstablished: ne}
}

// stores are the stores the scenarios run on: a SQLite file, and the
// PostgreSQL server CLOCKGATE_TEST_POSTGRES names (a fresh schema each).
func stores(t *testing.T) map[string]func(t *testing.T) Store {
	out := map[string]func(t *testing.T) Store{
		"sqlite": func(t *testing.T) Store {
			s, err := Open(context.Background(), filepath.Join(t.TempDir(), "h.sqlite"))
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { s.Close() })
			return s
		},
	}
	if os.Getenv(postgresEnv) != "" {
		out["postgres"] = func(t *testing.T) Store { return freshPostgres(t) }
	}
	return out
}

// addScenario adds a scenario's grids to s, each twice.
func addScenario(t *testing.T, s Store, sc histgen.Scenario) []*Grid {
	t.Helper()
	tmpl := cleanGrid(t)
	var grids []*Grid
	for i, g := range tmpl.Grids(sc) {
		sum, all, err := tmpl.Documents(g)
		if err != nil {
			t.Fatal(err)
		}
		gr, err := Parse(sum, all, fmt.Sprintf("grid%d/summary.json", i), fmt.Sprintf("grid%d/all-runs.json", i))
		if err != nil {
			t.Fatal(err)
		}
		for k := 0; k < 2; k++ {
			added, err := s.Add(context.Background(), gr)
			if err != nil {
				t.Fatal(err)
			}
			if added != (k == 0) {
				t.Fatalf("grid %d, add %d: added %v", i, k+1, added)
			}
		}
		grids = append(grids, gr)
	}
	return grids
}

// changesOf is every series' changes as "key@grid index (box moved?)".
func changesOf(series []*Series, sc histgen.Scenario) []string {
	var out []string
	for _, s := range series {
		for _, c := range s.Changes {
			i := int(c.Date.Sub(sc.Start) / (24 * time.Hour))
			box := ""
			if c.Clock != nil {
				box = fmt.Sprintf(" box_moved=%v", c.Clock.BoxMoved)
			}
			out = append(out, fmt.Sprintf("%s@%d%s", s.Key, i, box))
		}
	}
	sort.Strings(out)
	return out
}

func analyzeStore(t *testing.T, s Store) []*Series {
	t.Helper()
	grids, err := s.Grids(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return Analyze(grids, DefaultDetection)
}

func want(lines ...string) []string {
	sort.Strings(lines)
	return lines
}

func diff(t *testing.T, got, want []string) {
	t.Helper()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("changes:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
}

func TestCodeRegressionAtGrid40(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			sc := codeRegression(t)
			addScenario(t, s, sc)
			series := analyzeStore(t, s)
			var w []string
			for _, m := range []string{"llama-3.1-8b-instruct", "qwen2.5-7b-instruct"} {
				w = append(w, m+" fastengine/vllm THROUGHPUT ratio [NVIDIA GB10]@40")
				for _, p := range []string{"1/inf", "2/inf", "4/inf", "8/inf"} {
					w = append(w, m+" fastengine/vllm point ratio "+p+" [NVIDIA GB10]@40",
						m+" fastengine throughput "+p+" [NVIDIA GB10]@40 box_moved=false")
				}
			}
			diff(t, changesOf(series, sc), want(w...))
			checkNotEstablishedDrawn(t, series, sc)
		})
	}
}

func TestBoxChangeAtGrid25(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			sc := boxChange(t)
			addScenario(t, s, sc)
			series := analyzeStore(t, s)
			var w []string
			for _, m := range []string{"llama-3.1-8b-instruct", "qwen2.5-7b-instruct"} {
				for _, e := range []string{"fastengine", "vllm"} {
					w = append(w, m+" "+e+" free clock [NVIDIA GB10]@25")
					for _, p := range []string{"1/inf", "2/inf", "4/inf", "8/inf"} {
						w = append(w, m+" "+e+" throughput "+p+" [NVIDIA GB10]@25 box_moved=true")
					}
				}
			}
			diff(t, changesOf(series, sc), want(w...))
			for _, s := range series {
				for _, c := range s.Changes {
					if c.Clock == nil {
						continue
					}
					if pct := c.Clock.Pct(); pct > -5.5 || pct < -6.5 {
						t.Errorf("%s: free clock moved %.2f%%, want about −6%%", s.Key, pct)
					}
					if pct := c.MagnitudePct(); pct > -4.5 || pct < -5.5 {
						t.Errorf("%s: throughput moved %.2f%%, want about −5%%", s.Key, pct)
					}
				}
			}
			checkNotEstablishedDrawn(t, series, sc)
		})
	}
}

func TestNoiseOnlyNoChange(t *testing.T) {
	for name, open := range stores(t) {
		t.Run(name, func(t *testing.T) {
			s := open(t)
			sc := noiseOnly(t)
			addScenario(t, s, sc)
			series := analyzeStore(t, s)
			diff(t, changesOf(series, sc), nil)
			checkNotEstablishedDrawn(t, series, sc)
		})
	}
}

// checkNotEstablishedDrawn: every series has a value at every grid, the
// NOT ESTABLISHED grids' values marked so, and no change is dated at one.
func checkNotEstablishedDrawn(t *testing.T, series []*Series, sc histgen.Scenario) {
	t.Helper()
	if len(series) != 32 {
		t.Errorf("%d series, want 32 (per model: 2 ratio families, 4 point ratios, 2 engines × (4 throughputs, 1 clock))", len(series))
	}
	for _, s := range series {
		if len(s.Points) != sc.Grids {
			t.Errorf("%s: %d values, want %d", s.Key, len(s.Points), sc.Grids)
			continue
		}
		for i, p := range s.Points {
			if p.Established == sc.NotEstablished[i] {
				t.Errorf("%s: grid %d established %v", s.Key, i, p.Established)
			}
		}
		for _, c := range s.Changes {
			if i := int(c.Date.Sub(sc.Start) / (24 * time.Hour)); sc.NotEstablished[i] {
				t.Errorf("%s: a change dated at NOT ESTABLISHED grid %d", s.Key, i)
			}
		}
	}
}

// TestNotEstablishedNeverDetected: the same history with its NOT
// ESTABLISHED grids counted as established gives changes at them; the
// filter is what keeps them out.
func TestNotEstablishedNeverDetected(t *testing.T) {
	sc := noiseOnly(t)
	tmpl := cleanGrid(t)
	var grids []*Grid
	for i, g := range tmpl.Grids(sc) {
		sum, all, err := tmpl.Documents(g)
		if err != nil {
			t.Fatal(err)
		}
		gr, err := Parse(sum, all, "s", "a")
		if err != nil {
			t.Fatal(err)
		}
		if sc.NotEstablished[i] {
			for k := range gr.Values {
				gr.Values[k].Established = true
			}
		}
		grids = append(grids, gr)
	}
	if got := changesOf(Analyze(grids, DefaultDetection), sc); len(got) == 0 {
		t.Fatal("the wild grids, counted as established, gave no change: the scenario does not test the filter")
	}
}
