package history

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/clockgate/clockgate/history/histgen"
)

// gridsOf is one grid per value of xs, a day apart, each holding key's
// value (established unless listed in unest).
func gridsOf(key Key, xs []float64, unest ...int) []*Grid {
	skip := map[int]bool{}
	for _, i := range unest {
		skip[i] = true
	}
	out := make([]*Grid, len(xs))
	for i, x := range xs {
		out[i] = &Grid{ID: fmt.Sprintf("g%03d", i), Date: start.Add(time.Duration(i) * 24 * time.Hour),
			Values: []Value{{key, x, !skip[i], nil}}}
	}
	return out
}

// flat is n values of seeded Gaussian noise of relative sd 0.004 around
// base.
func flat(seed uint64, n int, base float64) []float64 {
	r := rand.New(rand.NewPCG(seed, seed))
	xs := make([]float64, n)
	for i := range xs {
		xs[i] = base * (1 + 0.004*r.NormFloat64())
	}
	return xs
}

func judgeOne(t *testing.T, key Key, xs []float64, minChange float64, unest ...int) Judgement {
	t.Helper()
	c, err := CheckGrids(gridsOf(key, xs, unest...), DefaultDetection, minChange, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Judgements) != 1 {
		t.Fatalf("%d judgements, want 1", len(c.Judgements))
	}
	return c.Judgements[0]
}

var (
	tpKey     = Key{"m", "ours/vllm", MetricThroughputRatio, "", "GPU"}
	memKey    = Key{"m", "ours/vllm", MetricMemoryRatio, "", "GPU"}
	energyKey = Key{"m", "ours/vllm", "ENERGY ratio", "", "GPU"}
	engineKey = Key{"m", "ours", MetricThroughput, "8/inf", "GPU"}
)

// TestCheckDirectionPerFamily: a newest value 5% below the series is a
// regression of THROUGHPUT (the ratio and an engine's own throughput) and
// an improvement of MEMORY and ENERGY; 5% above, the other way round.
func TestCheckDirectionPerFamily(t *testing.T) {
	for _, tc := range []struct {
		key      Key
		down, up string
	}{
		{tpKey, VerdictRegression, VerdictImprovement},
		{engineKey, VerdictRegression, VerdictImprovement},
		{Key{"m", "ours/vllm", MetricPointRatio, "8/inf", "GPU"}, VerdictRegression, VerdictImprovement},
		{memKey, VerdictImprovement, VerdictRegression},
		{energyKey, VerdictImprovement, VerdictRegression},
	} {
		for _, f := range []struct {
			factor float64
			want   string
		}{{0.95, tc.down}, {1.05, tc.up}} {
			xs := flat(1, 30, 1.2)
			xs[29] = 1.2 * f.factor
			j := judgeOne(t, tc.key, xs, DefaultMinChangePct)
			if j.Verdict != f.want {
				t.Errorf("%s, newest ×%v: verdict %s, want %s (%s)", tc.key, f.factor, j.Verdict, f.want, j.How)
			}
			if !strings.HasPrefix(j.How, "outside the 99.9% prediction interval") {
				t.Errorf("%s: how %q", tc.key, j.How)
			}
		}
	}
	if _, err := CheckGrids(gridsOf(Key{"m", "e", "LATENCY ratio", "", "GPU"}, flat(1, 10, 1)), DefaultDetection, 1, false); err == nil ||
		err.Error() != `series m e LATENCY ratio [GPU]: metric "LATENCY ratio": no known family, so no direction that is worse` {
		t.Errorf("an unknown family: err %v", err)
	}
}

// TestCheckPredictionIntervalBoundary: the newest value exactly at the
// 99.9% interval's edge is inside (stable); the next float beyond it is a
// regression; a value between the 99% and the 99.9% edges is inside.
func TestCheckPredictionIntervalBoundary(t *testing.T) {
	xs := flat(3, 20, 100)
	lo, _ := predictionInterval(xs, PredictionLevel)
	lo99, _ := predictionInterval(xs, 0.99)
	for _, tc := range []struct {
		v    float64
		want string
	}{{lo, VerdictStable}, {math.Nextafter(lo, 0), VerdictRegression}, {(lo + lo99) / 2, VerdictStable}} {
		j := judgeOne(t, tpKey, append(append([]float64{}, xs...), tc.v), 0.1)
		if j.Verdict != tc.want {
			t.Errorf("newest %v (99.9%% edge %v, 99%% edge %v): %s, want %s (%s)", tc.v, lo, lo99, j.Verdict, tc.want, j.How)
		}
	}
	// The interval is the Student-t one: mean ± t(0.9995, n−1)·s·√(1+1/n).
	seg := []float64{1, 2, 3, 4, 5, 6, 7, 8}
	lo, hi := predictionInterval(seg, 0.999)
	// t(0.9995, 7) = 5.407882520624404; s = √6; √(1+1/8).
	half := 5.407882520624404 * math.Sqrt(6) * math.Sqrt(1.125)
	if math.Abs(lo-(4.5-half)) > 1e-9 || math.Abs(hi-(4.5+half)) > 1e-9 {
		t.Errorf("interval of 1…8: [%v, %v], want 4.5 ± %v", lo, hi, half)
	}
}

// TestCheckMinSegment: a last segment of 7 established values gives no
// prediction interval (and without legs, no leg test: insufficient,
// however far the newest value), one of 8 does; a NOT ESTABLISHED value
// in it does not count.
func TestCheckMinSegment(t *testing.T) {
	for _, tc := range []struct {
		n     int
		unest []int
		want  string
		how   string
	}{
		{7, nil, VerdictInsufficient, "the last segment has 7 established values, under 8: no prediction interval"},
		{8, nil, VerdictRegression, "outside the 99.9% prediction interval"},
		{9, []int{3}, VerdictRegression, "outside the 99.9% prediction interval"},
		{8, []int{3}, VerdictInsufficient, "the last segment has 7 established values, under 8: no prediction interval"},
	} {
		xs := append(flat(5, tc.n, 10), 8)
		j := judgeOne(t, tpKey, xs, DefaultMinChangePct, tc.unest...)
		if j.Verdict != tc.want || !strings.HasPrefix(j.How, tc.how) {
			t.Errorf("%d values before, %v NOT ESTABLISHED: %s (%s), want %s (%s…)", tc.n, tc.unest, j.Verdict, j.How, tc.want, tc.how)
		}
	}
}

// TestCheckMinChange: a 0.5% drop far outside the interval of very quiet
// values is stable at --min-change 1% and a regression at 0.4%; the
// bound is strict.
func TestCheckMinChange(t *testing.T) {
	xs := make([]float64, 20)
	for i := range xs {
		xs[i] = 100 + 0.001*float64(i%3)
	}
	m := mean(xs)
	drop := append(append([]float64{}, xs...), m*0.995)
	pctDrop := (m*0.995/m - 1) * 100
	for _, tc := range []struct {
		min  float64
		want string
	}{{1, VerdictStable}, {0.4, VerdictRegression}, {math.Abs(pctDrop), VerdictStable}} {
		j := judgeOne(t, tpKey, drop, tc.min)
		if j.Verdict != tc.want {
			t.Errorf("--min-change %v: %s (%s), want %s", tc.min, j.Verdict, j.How, tc.want)
		}
	}
	j := judgeOne(t, tpKey, drop, 1)
	if want := "outside the 99.9% prediction interval [99.9977, 100.0042] of the last 20 values (mean 100.0009), but by -0.50%, not beyond --min-change 1%"; j.How != want {
		t.Errorf("how %q, want %q", j.How, want)
	}
}

// TestCheckNotEstablished: a NOT ESTABLISHED newest value is its own
// verdict, fails the check, and passes it with --allow-unestablished.
func TestCheckNotEstablished(t *testing.T) {
	xs := flat(7, 20, 1)
	for _, allow := range []bool{false, true} {
		c, err := CheckGrids(gridsOf(tpKey, xs, 19), DefaultDetection, 1, allow)
		if err != nil {
			t.Fatal(err)
		}
		if v := c.Judgements[0].Verdict; v != VerdictNotEstablished {
			t.Errorf("verdict %s, want %s", v, VerdictNotEstablished)
		}
		want := 1
		if allow {
			want = 0
		}
		if c.Exit() != want {
			t.Errorf("allow %v: exit %d, want %d", allow, c.Exit(), want)
		}
	}
}

// TestCheckChangePointAtNewest: a change point dated at the newest grid
// starts a regression by itself. The calibrated detection never dates one
// there (a single value's rank statistic is at most √3), Otava's can: a
// value 40% below twenty quiet ones.
func TestCheckChangePointAtNewest(t *testing.T) {
	xs := append(flat(9, 20, 1), 0.6)
	otava := Detection{Method: Otava, P: DefaultP, Window: Window}
	c, err := CheckGrids(gridsOf(tpKey, xs), otava, 1, false)
	if err != nil {
		t.Fatal(err)
	}
	j := c.Judgements[0]
	if j.Verdict != VerdictRegression || !strings.HasPrefix(j.How, "a change point at the newest grid") {
		t.Errorf("verdict %s (%s), want a regression by the change point", j.Verdict, j.How)
	}
	if c.Exit() != 1 {
		t.Errorf("exit %d, want 1", c.Exit())
	}
}

// checkScenario adds sc to s and checks the history.
func checkScenario(t *testing.T, s Store, sc histgen.Scenario, allow bool) *Check {
	t.Helper()
	addScenario(t, s, sc)
	grids, err := s.Grids(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	c, err := CheckGrids(grids, DefaultDetection, DefaultMinChangePct, allow)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The generated histories of history check: 30 nights, what happens on
// the newest.
func tonight(t testing.TB, seed uint64, steps []histgen.Step, unest bool) histgen.Scenario {
	sc := histgen.Scenario{Grids: 30, Start: start, Seed: seed, NoiseTP: 0.004, NoiseClock: 0.001, BaseClockMHz: 1980, Steps: steps,
		NotEstablished: map[int]bool{9: true}}
	if unest {
		sc.NotEstablished[29] = true
	}
	return sc
}

var checkScenarios = []struct {
	name  string
	sc    func(t testing.TB) histgen.Scenario
	allow bool
	exit  int
}{
	{"stable", func(t testing.TB) histgen.Scenario { return tonight(t, 21, nil, false) }, false, 0},
	{"code-regression", func(t testing.TB) histgen.Scenario {
		return tonight(t, 22, []histgen.Step{{At: 29, Arms: fastengine(t), Throughput: 0.95, Clock: 1}}, false)
	}, false, 1},
	{"box-moved", func(t testing.TB) histgen.Scenario {
		return tonight(t, 23, []histgen.Step{{At: 29, Throughput: 0.95, Clock: 0.94}}, false)
	}, false, 1},
	{"improvement", func(t testing.TB) histgen.Scenario {
		return tonight(t, 24, []histgen.Step{{At: 29, Arms: fastengine(t), Throughput: 1.05, Clock: 1}}, false)
	}, false, 0},
	{"not-established", func(t testing.TB) histgen.Scenario { return tonight(t, 25, nil, true) }, false, 1},
	{"not-established-allowed", func(t testing.TB) histgen.Scenario { return tonight(t, 25, nil, true) }, true, 0},
}

// TestCheckScenarios checks generated histories, on SQLite and on
// PostgreSQL alike, one per exit path: stable (0), a regression of the
// code tonight (1, the box did not move), one where the box moved too
// (1), an improvement (0, reported), a NOT ESTABLISHED night (1, or 0
// with --allow-unestablished); the markdown of each is a golden, and the
// JSON document holds the same verdicts.
func TestCheckScenarios(t *testing.T) {
	for store, open := range stores(t) {
		for _, tc := range checkScenarios {
			t.Run(store+"/"+tc.name, func(t *testing.T) {
				c := checkScenario(t, open(t), tc.sc(t), tc.allow)
				if c.Exit() != tc.exit {
					t.Errorf("exit %d, want %d", c.Exit(), tc.exit)
				}
				counts := map[string]int{}
				for _, j := range c.Judgements {
					counts[j.Verdict]++
					// The generated grids never change memory.
					fast := strings.Contains(j.Key.Engines, "fastengine") && j.Key.Metric != MetricMemoryRatio
					var want string
					switch tc.name {
					case "stable":
						want = VerdictStable
					case "code-regression":
						want = map[bool]string{true: VerdictRegression, false: VerdictStable}[fast]
					case "improvement":
						want = map[bool]string{true: VerdictImprovement, false: VerdictStable}[fast]
					case "box-moved":
						// Every engine slowed with its clock; the ratios held.
						want = map[bool]string{true: VerdictRegression, false: VerdictStable}[j.Key.Metric == MetricThroughput]
					default:
						want = VerdictNotEstablished
					}
					if j.Verdict != want {
						t.Errorf("%s: %s (%s), want %s", j.Key, j.Verdict, j.How, want)
					}
					if j.Verdict == VerdictRegression && j.Key.Metric == MetricThroughput {
						moved := tc.name == "box-moved"
						if j.Clock == nil || j.Clock.BoxMoved != moved {
							t.Errorf("%s: clock %+v, want box moved %v", j.Key, j.Clock, moved)
						}
					}
				}
				var md, js bytes.Buffer
				if err := c.Markdown(&md); err != nil {
					t.Fatal(err)
				}
				checkTable(t, md.Bytes(), len(c.Judgements))
				golden(t, "check-"+tc.name+".md", md.Bytes())
				if err := c.JSON(&js); err != nil {
					t.Fatal(err)
				}
				var doc struct {
					Exit   int `json:"exit"`
					Series []struct {
						Key          string   `json:"key"`
						Newest       float64  `json:"newest"`
						Verdict      string   `json:"verdict"`
						MagnitudePct *float64 `json:"magnitude_pct"`
						BoxMoved     *bool    `json:"box_moved"`
					} `json:"series"`
				}
				if err := json.Unmarshal(js.Bytes(), &doc); err != nil {
					t.Fatal(err)
				}
				if doc.Exit != tc.exit || len(doc.Series) != len(c.Judgements) {
					t.Fatalf("json: exit %d, %d series; want %d, %d", doc.Exit, len(doc.Series), tc.exit, len(c.Judgements))
				}
				for i, s := range doc.Series {
					j := c.Judgements[i]
					if s.Key != j.Key.String() || s.Verdict != j.Verdict || s.Newest != j.Newest.Value {
						t.Errorf("json series %d: %+v, want %s %s", i, s, j.Key, j.Verdict)
					}
					if (s.MagnitudePct == nil) != (j.Verdict == VerdictNotEstablished) {
						t.Errorf("json %s: magnitude %v with verdict %s", s.Key, s.MagnitudePct, s.Verdict)
					}
					if j.Verdict == VerdictRegression && j.Key.Metric == MetricThroughput && (s.BoxMoved == nil || *s.BoxMoved != (tc.name == "box-moved")) {
						t.Errorf("json %s: box_moved %v", s.Key, s.BoxMoved)
					}
				}
			})
		}
	}
}

// checkTable wants md to hold one GFM table of rows rows below its header.
func checkTable(t *testing.T, md []byte, rows int) {
	t.Helper()
	tables, got := 0, 0
	doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(md))
	ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if entering {
			switch n.Kind().String() {
			case "Table":
				tables++
			case "TableRow":
				got++
			}
		}
		return ast.WalkContinue, nil
	})
	if tables != 1 || got != rows {
		t.Errorf("markdown: %d tables, %d rows; want 1 table of %d rows", tables, got, rows)
	}
}

// TestCheckLastSegment: the newest value is judged against the values
// since the last change point only. After a step up from 100 to 110, 104
// is a regression of the new level, though well inside what all the
// values together would allow.
func TestCheckLastSegment(t *testing.T) {
	xs := append(flat(11, 20, 100), flat(12, 20, 110)...)
	j := judgeOne(t, tpKey, append(xs, 104), DefaultMinChangePct)
	if j.Verdict != VerdictRegression || !strings.Contains(j.How, "of the last 20 values (mean 109.9048)") {
		t.Errorf("verdict %s (%s), want a regression against the last 20 values", j.Verdict, j.How)
	}
}

// TestDocsCheckExcerpt: the markdown excerpt of docs/history-check.md is
// the code-regression golden's, row for row (rows shortened with "…"
// aside).
func TestDocsCheckExcerpt(t *testing.T) {
	doc, err := os.ReadFile("../docs/history-check.md")
	if err != nil {
		t.Fatal(err)
	}
	gold, err := os.ReadFile("testdata/golden/check-code-regression.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(doc), "```markdown\n")
	if !ok {
		t.Fatal("docs/history-check.md has no markdown excerpt")
	}
	block, _, _ = strings.Cut(block, "```")
	n := 0
	for _, line := range strings.Split(block, "\n") {
		if line == "" || strings.Contains(line, "…") {
			continue
		}
		n++
		if !strings.Contains(string(gold), line+"\n") {
			t.Errorf("the excerpt's line is not in check-code-regression.md: %s", line)
		}
	}
	if n < 4 {
		t.Errorf("the excerpt has %d lines to check", n)
	}
}
