package history

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

var update = flag.Bool("update", false, "rewrite golden files")

// golden compares got with testdata/golden/name, or rewrites it.
func golden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name)
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run go test ./history/ -update)", err)
	}
	if !bytes.Equal(got, want) {
		gl, wl := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
		for i := 0; i < len(gl) || i < len(wl); i++ {
			var g, w string
			if i < len(gl) {
				g = gl[i]
			}
			if i < len(wl) {
				w = wl[i]
			}
			if g != w {
				t.Fatalf("%s differs at line %d:\n got: %s\nwant: %s", path, i+1, g, w)
			}
		}
	}
}

// scenarioReport adds a scenario to a SQLite history and builds its report.
func scenarioReport(t *testing.T, name string) *Report {
	t.Helper()
	s, err := Open(context.Background(), filepath.Join(t.TempDir(), "h.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	switch name {
	case "code-regression":
		addScenario(t, s, codeRegression(t))
	case "box-change":
		addScenario(t, s, boxChange(t))
	default:
		t.Fatalf("no scenario %s", name)
	}
	grids, err := s.Grids(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return Build(grids, DefaultDetection)
}

// TestGoldenMarkdown: history.md of the generated histories, and each
// of its tables is a table.
func TestGoldenMarkdown(t *testing.T) {
	for _, name := range []string{"code-regression", "box-change"} {
		t.Run(name, func(t *testing.T) {
			r := scenarioReport(t, name)
			var b bytes.Buffer
			if err := r.Markdown(&b); err != nil {
				t.Fatal(err)
			}
			golden(t, name+".md", b.Bytes())
			tables := 0
			doc := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(b.Bytes()))
			ast.Walk(doc, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
				if entering && n.Kind().String() == "Table" {
					tables++
				}
				return ast.WalkContinue, nil
			})
			changed := 0
			for _, s := range r.Series {
				if len(s.Changes) > 0 {
					changed++
				}
			}
			if tables != changed || changed == 0 {
				t.Errorf("%d Markdown tables for %d changed series", tables, changed)
			}
		})
	}
}

// TestCSVReadsBack: history.csv parses as CSV, one row per grid in date
// order with an ISO 8601 UTC time, one column per series; established
// values read back as the numbers, the others empty.
func TestCSVReadsBack(t *testing.T) {
	r := scenarioReport(t, "code-regression")
	var b bytes.Buffer
	if err := r.CSV(&b); err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1+60 {
		t.Fatalf("%d records, want a header and 60 rows", len(recs))
	}
	if recs[0][0] != "time" || recs[0][1] != "grid" || len(recs[0]) != 2+len(r.Series) {
		t.Fatalf("header %q", recs[0][:2])
	}
	for i, s := range r.Series {
		if recs[0][2+i] != s.Key.String() {
			t.Fatalf("column %d is %q, want %q", 2+i, recs[0][2+i], s.Key)
		}
		for j, p := range s.Points {
			cell := recs[1+j][2+i]
			if recs[1+j][0] != p.Date.UTC().Format("2006-01-02T15:04:05.000Z") || recs[1+j][1] != p.Grid {
				t.Fatalf("row %d: %q %q, want %s %s", j, recs[1+j][0], recs[1+j][1], p.Date, p.Grid)
			}
			if !p.Established {
				if cell != "" {
					t.Errorf("%s row %d: NOT ESTABLISHED value written as %q", s.Key, j, cell)
				}
				continue
			}
			v, err := strconv.ParseFloat(cell, 64)
			if err != nil || v != p.Value {
				t.Errorf("%s row %d: %q reads back as %v (%v), want %v", s.Key, j, cell, v, err, p.Value)
			}
		}
	}
}

// TestJSONShape: --json's document as the contract states it.
func TestJSONShape(t *testing.T) {
	r := scenarioReport(t, "box-change")
	var b bytes.Buffer
	if err := r.JSON(&b); err != nil {
		t.Fatal(err)
	}
	var d struct {
		Series []struct {
			Key    string `json:"key"`
			Values []struct {
				Date        string   `json:"date"`
				Value       *float64 `json:"value"`
				Established *bool    `json:"established"`
			} `json:"values"`
			Changes []map[string]any `json:"changes"`
			// Transfer is present, an object or null.
			Transfer json.RawMessage `json:"transfer"`
		} `json:"series"`
	}
	dec := json.NewDecoder(&b)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&d); err != nil {
		t.Fatal(err)
	}
	if len(d.Series) != len(r.Series) {
		t.Fatalf("%d series", len(d.Series))
	}
	boxed, fitted := 0, 0
	for _, s := range d.Series {
		if s.Transfer == nil {
			t.Fatalf("%s: no transfer member", s.Key)
		}
		if string(s.Transfer) != "null" {
			var tr map[string]float64
			if err := json.Unmarshal(s.Transfer, &tr); err != nil || len(tr) != 3 || !(tr["lo"] <= tr["elasticity"] && tr["elasticity"] <= tr["hi"]) {
				t.Errorf("%s: transfer %s", s.Key, s.Transfer)
			}
			fitted++
		}
		for _, v := range s.Values {
			if v.Value == nil || v.Established == nil || !strings.HasSuffix(v.Date, "Z") {
				t.Fatalf("%s: value %+v", s.Key, v)
			}
		}
		for _, c := range s.Changes {
			for _, k := range []string{"date", "magnitude_pct", "mean_before", "mean_after", "p", "box_moved"} {
				if _, ok := c[k]; !ok {
					t.Errorf("%s: change without %s", s.Key, k)
				}
			}
			if c["box_moved"] == true {
				boxed++
			}
		}
	}
	if boxed != 16 {
		t.Errorf("%d changes with box_moved true, want the 16 throughputs", boxed)
	}
	if fitted != 16 {
		t.Errorf("%d series with a transfer, want the 16 throughputs (the box change spans 6%%)", fitted)
	}
}
