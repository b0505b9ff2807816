package history

import (
	"context"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestBoxMovedBoundary: the clock must move the same way by at least half
// the throughput's change, in percent of each value before; exactly half
// counts.
func TestBoxMovedBoundary(t *testing.T) {
	for _, tc := range []struct {
		name                 string
		tp0, tp1, clk0, clk1 float64
		want                 bool
	}{
		{"exactly half", 100, 96, 1000, 980, true}, // −4%, −2%
		{"just under half", 100, 96, 1000, 980.5, false},
		{"more than the throughput", 100, 95, 1000, 940, true},
		{"opposite directions", 100, 96, 1000, 1030, false},
		{"clock still", 100, 96, 1000, 1000, false},
		{"both up", 100, 104, 1000, 1020, true},
	} {
		if got := boxMoved(tc.tp0, tc.tp1, tc.clk0, tc.clk1); got != tc.want {
			t.Errorf("%s: throughput %v→%v, clock %v→%v: box moved %v, want %v", tc.name, tc.tp0, tc.tp1, tc.clk0, tc.clk1, got, tc.want)
		}
	}
}

// TestTransferNotIdentifiable: free clocks spanning under 3% give no
// elasticity, and the outputs say why, with the span found.
func TestTransferNotIdentifiable(t *testing.T) {
	r := scenarioReport(t, "code-regression")
	for _, s := range r.Series {
		if s.Key.Metric != MetricThroughput {
			if s.Transfer != nil || s.transferText() != "" {
				t.Errorf("%s: a transfer on a series not a throughput", s.Key)
			}
			continue
		}
		if s.Transfer != nil {
			t.Errorf("%s: transfer %+v over clocks spanning %.2f%%", s.Key, *s.Transfer, s.ClockSpanPct)
		}
		if txt := s.transferText(); !strings.HasPrefix(txt, "transfer: not identifiable: the established grids' free clocks span ") || !strings.HasSuffix(txt, "%, under 3%") {
			t.Errorf("%s: %q", s.Key, txt)
		}
	}
}

// TestTransferSpanBoundary: a span of exactly 3% is fitted, one just
// under is not; the fit recovers a known elasticity.
func TestTransferSpanBoundary(t *testing.T) {
	mk := func(top float64) (*Series, *Series) {
		tp, clk := &Series{Key: Key{Metric: MetricThroughput}}, &Series{Key: Key{Metric: MetricFreeClock}}
		for i := 0; i < 20; i++ {
			c := 1000 + (top-1000)*float64(i%5)/4
			id := string(rune('a' + i))
			clk.Points = append(clk.Points, Point{Grid: id, Value: c, Established: true})
			tp.Points = append(tp.Points, Point{Grid: id, Value: 50 * math.Pow(c/1000, 0.75), Established: true})
		}
		return tp, clk
	}
	tp, clk := mk(1030)
	tp.fit(clk)
	if tp.Transfer == nil {
		t.Fatalf("span %.4f%%: not fitted", tp.ClockSpanPct)
	}
	if math.Abs(tp.Transfer.Elasticity-0.75) > 1e-9 || tp.Transfer.Lo > 0.75+1e-9 || tp.Transfer.Hi < 0.75-1e-9 {
		t.Errorf("elasticity %+v, want 0.75 inside its interval", *tp.Transfer)
	}
	tp, clk = mk(1029.99)
	tp.fit(clk)
	if tp.Transfer != nil {
		t.Errorf("span %.4f%%: fitted %+v", tp.ClockSpanPct, *tp.Transfer)
	}
}

// TestParseFailsClosed: a malformed or incomplete document is an error
// that names the file and where.
func TestParseFailsClosed(t *testing.T) {
	dir := t.TempDir()
	tmpl := cleanGrid(t)
	sum, all, err := tmpl.Documents(tmpl.Grids(noiseOnly(t))[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		sum, all string
		want     string
	}{
		{"syntax", "{\n\"a\": 1,\n}", string(all), "s.json:3: "},
		{"duplicate key", `{"comparisons": [], "comparisons": []}`, string(all), "s.json:1: "},
		{"value a string", strings.Replace(string(sum), `"value": 1.`, `"value": "1.`, 1), string(all), ""},
		{"no legs", string(sum), `{"legs": []}`, "a.json: legs: no leg has a clock window (clock.window.first_t), so the grid has no date"},
		{"no binding_eligible", string(sum), strings.Replace(string(all), `"binding_eligible"`, `"binding"`, 1), "a.json: legs[0].binding_eligible: missing"},
		{"bad time", string(sum), strings.Replace(string(all), `"first_t": "2026`, `"first_t": "x2026`, 1), "a.json: legs[0].clock.window.first_t: want an RFC 3339 time, found \"x2026"},
		{"strategy not a name", strings.Replace(string(sum), `"ratio": `, `"strategy": 7, "ratio": `, 1), string(all), "s.json: comparisons[0].throughput.points[0].strategy: want the strategy of a rate point as a name (GuideLLM's constant, poisson), found number 7"},
		{"strategy empty", strings.Replace(string(sum), `"ratio": `, `"strategy": "", "ratio": `, 1), string(all), "s.json: comparisons[0].throughput.points[0].strategy: want the strategy of a rate point as a name (GuideLLM's constant, poisson), found string \"\""},
		{"ratio not a number", strings.Replace(string(sum), `"ratio": `, `"ratio": true, "x": `, 1), string(all), "s.json: comparisons[0].throughput.points[0].ratio: want number, found boolean"},
	} {
		_, err := Parse([]byte(tc.sum), []byte(tc.all), "s.json", "a.json")
		if err == nil {
			if tc.want != "" {
				t.Errorf("%s: accepted", tc.name)
			}
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	// A directory with one of the two files names the missing one.
	if err := os.WriteFile(filepath.Join(dir, SummaryFile), sum, 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), filepath.Join(dir, AllRunsFile)) {
		t.Errorf("summary.json alone: %v", err)
	}
}

// TestSummarizedTreeSameIdentity: a tree added as it is and its
// summarize --out directory are the same grid.
func TestSummarizedTreeSameIdentity(t *testing.T) {
	a, err := Load("../testdata/trees/clean-grid")
	if err != nil {
		t.Fatal(err)
	}
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "h.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if added, err := s.Add(context.Background(), a); err != nil || !added {
		t.Fatal(added, err)
	}
	grids, err := s.Grids(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(grids) != 1 || grids[0].ID != a.ID || !grids[0].Date.Equal(a.Date) || len(grids[0].Values) != len(a.Values) {
		t.Fatalf("read back %+v", grids[0])
	}
	for i, v := range grids[0].Values {
		if !reflect.DeepEqual(v, a.Values[i]) {
			t.Errorf("value %d: %+v, want %+v", i, v, a.Values[i])
		}
	}
	if got := a.Date.Format("2006-01-02T15:04:05.000Z"); got != "2026-08-12T09:00:00.836Z" {
		t.Errorf("date %s, want the earliest first_t, 2026-08-12T09:00:00.836Z", got)
	}
}

// TestArmReasonNotEstablished: the staircase tree's fastengine arm has an
// arm reason; its own series are NOT ESTABLISHED while vllm's are.
func TestArmReasonNotEstablished(t *testing.T) {
	g, err := Load("../testdata/trees/staircase")
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, v := range g.Values {
		if v.Key.Metric != MetricThroughput && v.Key.Metric != MetricFreeClock {
			continue
		}
		seen++
		if want := v.Key.Engines == "vllm"; v.Established != want {
			t.Errorf("%s: established %v, want %v", v.Key, v.Established, want)
		}
	}
	if seen != 10 {
		t.Errorf("%d engine values, want 10", seen)
	}
}

func TestMigrationVersioned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "h.sqlite")
	for i := 0; i < 2; i++ {
		s, err := Open(context.Background(), path)
		if err != nil {
			t.Fatal(err)
		}
		var v int
		if err := s.(*sqlStore).db.QueryRow(`SELECT MAX(version) FROM schema_migrations`).Scan(&v); err != nil || v != SchemaVersion {
			t.Fatalf("open %d: schema version %d (%v), want %d", i+1, v, err, SchemaVersion)
		}
		s.Close()
	}
	s, _ := Open(context.Background(), path)
	s.(*sqlStore).db.Exec(`INSERT INTO schema_migrations (version) VALUES (99)`)
	s.Close()
	if _, err := Open(context.Background(), path); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("history schema version 99 is newer than this clockgate's %d", SchemaVersion)) {
		t.Errorf("a newer schema: %v", err)
	}
}
