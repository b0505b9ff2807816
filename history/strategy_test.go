package history

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/history/histgen"
)

// The GuideLLM strategies the tree of strategyTree holds at one rate, in
// place of guidellm-aa's concurrent points of 2 and 4 streams.
const (
	constantAtHalf = `{"type_": "constant", "rate": 0.5}`
	poissonAtHalf  = `{"type_": "poisson", "rate": 0.5}`
)

// strategyTree is testdata/trees/guidellm-aa copied with each leg's
// concurrent benchmark of 2 streams made a constant one at 0.5
// requests/s and that of 4 streams a Poisson one at the same rate (their
// windows, totals and throughputs as they were): a GuideLLM tree with a
// constant and a Poisson point at one rate.
func strategyTree(t testing.TB) string {
	t.Helper()
	src, dst := "../testdata/trees/guidellm-aa", t.TempDir()
	reports := 0
	err := filepath.WalkDir(src, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(src, path)
		data, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if d.Name() == "benchmarks.json" {
			s := string(data)
			for old, new := range map[string]string{
				`{"type_": "concurrent", "worker_count": 2, "max_concurrency": 2, "streams": 2, "rampup_duration": 0.0}`: constantAtHalf,
				`{"type_": "concurrent", "worker_count": 4, "max_concurrency": 4, "streams": 4, "rampup_duration": 0.0}`: poissonAtHalf,
			} {
				if strings.Count(s, old) != 1 {
					return fmt.Errorf("%s: %d strategies %s, want 1", path, strings.Count(s, old), old)
				}
				s = strings.Replace(s, old, new, 1)
			}
			data = []byte(s)
			reports++
		}
		out := filepath.Join(dst, rel)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			return err
		}
		return os.WriteFile(out, data, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	if reports != 4 {
		t.Fatalf("%d GuideLLM reports rewritten, want 4", reports)
	}
	return dst
}

// pointSeries is each series of g at a point, "metric engines point",
// sorted; a key g holds twice is listed twice.
func pointSeries(g *Grid) []string {
	var out []string
	for _, v := range g.Values {
		if v.Key.Point != "" {
			out = append(out, v.Key.Metric+" "+v.Key.Engines+" "+v.Key.Point)
		}
	}
	sort.Strings(out)
	return out
}

// TestGuideLLMStrategySeries: a GuideLLM grid with a constant and a
// Poisson point at one rate has two series there, for each engine's
// throughput, for the point ratio and for the ENERGY ratio, keyed as
// report.md labels the points (none/0.5:constant, none/0.5:poisson): history add stores both
// (on SQLite and PostgreSQL; one key for the two was a duplicate row),
// and history check judges each on its own: the Poisson point of
// vllm-again 20% slower on the last of twelve nights is a regression of
// its series and its point ratio, while the constant point at the same
// rate stays stable.
func TestGuideLLMStrategySeries(t *testing.T) {
	tree := strategyTree(t)
	g, err := Load(tree)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"ENERGY ratio vllm-again/vllm 1/inf", "ENERGY ratio vllm-again/vllm 8/inf",
		"ENERGY ratio vllm-again/vllm none/0.5:constant", "ENERGY ratio vllm-again/vllm none/0.5:poisson",
		"point ratio vllm-again/vllm 1/inf", "point ratio vllm-again/vllm 8/inf",
		"point ratio vllm-again/vllm none/0.5:constant", "point ratio vllm-again/vllm none/0.5:poisson",
		"throughput vllm 1/inf", "throughput vllm 8/inf", "throughput vllm none/0.5:constant", "throughput vllm none/0.5:poisson",
		"throughput vllm-again 1/inf", "throughput vllm-again 8/inf",
		"throughput vllm-again none/0.5:constant", "throughput vllm-again none/0.5:poisson",
	}
	if got := pointSeries(g); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("series at a point:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	tm, err := histgen.New(tree)
	if err != nil {
		t.Fatal(err)
	}
	sc := histgen.Scenario{Grids: 12, Start: start, Seed: 11, NoiseTP: 0.004, NoiseClock: 0.001, BaseClockMHz: 2468}
	for store, open := range stores(t) {
		t.Run(store, func(t *testing.T) {
			s := open(t)
			if added, err := s.Add(context.Background(), g); err != nil || !added {
				t.Fatalf("history add of the tree: added %v, %v", added, err)
			}
			grids := tm.Grids(sc)
			for i, ng := range grids {
				sum, all, err := tm.Documents(ng)
				if err != nil {
					t.Fatal(err)
				}
				if i == len(grids)-1 {
					sum = slowerPoisson(t, sum, 0.8)
				}
				gr, err := Parse(sum, all, fmt.Sprintf("night%d/summary.json", i), fmt.Sprintf("night%d/all-runs.json", i))
				if err != nil {
					t.Fatal(err)
				}
				if _, err := s.Add(context.Background(), gr); err != nil {
					t.Fatalf("night %d: %v", i, err)
				}
			}
			stored, err := s.Grids(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if len(stored) != 13 {
				t.Fatalf("%d grids read back, want 13", len(stored))
			}
			if got := pointSeries(stored[0]); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("series read back:\n%s", strings.Join(got, "\n"))
			}
			// The tree itself is dated before the nights: drop it, so the
			// nights alone are the history.
			c, err := CheckGrids(stored[1:], DefaultDetection, DefaultMinChangePct, false)
			if err != nil {
				t.Fatal(err)
			}
			verdicts := map[string]string{}
			for _, j := range c.Judgements {
				verdicts[j.Key.Metric+" "+j.Key.Engines+" "+j.Key.Point] = j.Verdict
			}
			for k, v := range map[string]string{
				"throughput vllm-again none/0.5:poisson":        VerdictRegression,
				"point ratio vllm-again/vllm none/0.5:poisson":  VerdictRegression,
				"throughput vllm-again none/0.5:constant":       VerdictStable,
				"point ratio vllm-again/vllm none/0.5:constant": VerdictStable,
				"throughput vllm none/0.5:poisson":              VerdictStable,
				"throughput vllm-again 8/inf":                   VerdictStable,
			} {
				if verdicts[k] != v {
					t.Errorf("%s: %q, want %s", k, verdicts[k], v)
				}
			}
		})
	}
}

// slowerPoisson is summary.json with vllm-again's throughput at the
// Poisson point (and so the point's ratio) times f, nothing else moved.
func slowerPoisson(t *testing.T, summary []byte, f float64) []byte {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(summary, &doc); err != nil {
		t.Fatal(err)
	}
	moved := 0
	for _, c := range doc["comparisons"].([]any) {
		for _, p := range c.(map[string]any)["throughput"].(map[string]any)["points"].([]any) {
			p := p.(map[string]any)
			if p["strategy"] == "poisson" {
				p["ours"] = round4(p["ours"].(float64) * f)
				p["ratio"] = round4(p["ours"].(float64) / p["baseline"].(float64))
				moved++
			}
		}
	}
	if moved != 1 {
		t.Fatalf("%d Poisson points in summary.json, want 1", moved)
	}
	out, err := json.Marshal(doc)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func round4(v float64) float64 { return float64(int64(v*1e4+0.5)) / 1e4 }

// TestStrategyKeyOldStore: a store written before points carried a
// strategy reads on: its values at a point without one (every vLLM,
// SGLang and AIPerf point, and GuideLLM's synchronous and concurrent
// ones) are the series a new grid's same points join, keyed as they
// always were.
func TestStrategyKeyOldStore(t *testing.T) {
	path := filepath.Join(t.TempDir(), "old.sqlite")
	db, err := sql.Open("sqlite", path)
	if err != nil {
		t.Fatal(err)
	}
	stmts := append(strings.Split(migrations[0], ";"), strings.Split(migrations[1], ";")...)
	stmts = append(stmts,
		`CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY)`,
		`INSERT INTO schema_migrations (version) VALUES (1), (2)`,
		`INSERT INTO grids (id, date) VALUES ('old', '2026-08-01T02:00:00.000000000Z')`,
		`INSERT INTO grid_values VALUES ('old', 'llama-3.1-8b-instruct', 'vllm', 'throughput', '1/inf', 'NVIDIA GB10', 12.3, 1)`,
		`INSERT INTO grid_values VALUES ('old', 'llama-3.1-8b-instruct', 'vllm', 'throughput', 'none/0.5', 'NVIDIA GB10', 24.6, 1)`)
	for _, stmt := range stmts {
		if _, err := db.Exec(stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	db.Close()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	g, err := Load(strategyTree(t))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Add(context.Background(), g); err != nil {
		t.Fatal(err)
	}
	grids, err := s.Grids(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	n := map[string]int{}
	for _, sr := range Analyze(grids, DefaultDetection) {
		if sr.Key.Engines == "vllm" && sr.Key.Metric == MetricThroughput {
			n[sr.Key.Point] = len(sr.Points)
		}
	}
	if fmt.Sprint(n) != "map[1/inf:2 8/inf:1 none/0.5:1 none/0.5:constant:1 none/0.5:poisson:1]" {
		t.Errorf("vllm's throughput series, values each: %v", n)
	}
}
