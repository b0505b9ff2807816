package main

import (
	"bytes"
	"database/sql"
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/clockgate/clockgate/history/histgen"
)

var (
	checkTmplOnce sync.Once
	checkTmpl     *histgen.Template
	checkTmplErr  error
)

// writeNights writes a 30-night generated history into dir, one
// summarize --out directory per night, tonight's as the scenario says.
func writeNights(t *testing.T, dir string, seed uint64, tonight func(arms []histgen.Arm) []histgen.Step, unest bool) []string {
	t.Helper()
	checkTmplOnce.Do(func() { checkTmpl, checkTmplErr = histgen.New("../../testdata/trees/clean-grid") })
	if checkTmplErr != nil {
		t.Fatal(checkTmplErr)
	}
	var fast []histgen.Arm
	for _, a := range checkTmpl.Arms {
		if a.Engine == "fastengine" {
			fast = append(fast, a)
		}
	}
	sc := histgen.Scenario{Grids: 30, Start: time.Date(2026, 9, 1, 2, 0, 0, 0, time.UTC), Seed: seed, NoiseTP: 0.004, NoiseClock: 0.001,
		BaseClockMHz: 1980, NotEstablished: map[int]bool{}}
	if tonight != nil {
		sc.Steps = tonight(fast)
	}
	if unest {
		sc.NotEstablished[29] = true
	}
	var dirs []string
	for i, g := range checkTmpl.Grids(sc) {
		sum, all, err := checkTmpl.Documents(g)
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dir, fmt.Sprintf("night%02d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		for name, b := range map[string][]byte{"summary.json": sum, "all-runs.json": all} {
			if err := os.WriteFile(filepath.Join(d, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		dirs = append(dirs, d)
	}
	return dirs
}

// checkDBs are the histories the command is run on: a SQLite file, and a
// fresh schema of the PostgreSQL server CLOCKGATE_TEST_POSTGRES names.
func checkDBs(t *testing.T) map[string]func(t *testing.T) string {
	out := map[string]func(t *testing.T) string{
		"sqlite": func(t *testing.T) string { return filepath.Join(t.TempDir(), "h.sqlite") },
	}
	dsn := os.Getenv("CLOCKGATE_TEST_POSTGRES")
	if dsn == "" {
		return out
	}
	out["postgres"] = func(t *testing.T) string {
		db, err := sql.Open("pgx", dsn)
		if err != nil {
			t.Fatal(err)
		}
		defer db.Close()
		schema := fmt.Sprintf("check_%d", time.Now().UnixNano())
		if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() {
			if db, err := sql.Open("pgx", dsn); err == nil {
				db.Exec("DROP SCHEMA " + schema + " CASCADE")
				db.Close()
			}
		})
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("search_path", schema)
		u.RawQuery = q.Encode()
		return u.String()
	}
	return out
}

func runMain(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := Main(args, strings.NewReader(""), &out, &errb)
	return code, out.String(), errb.String()
}

// TestHistoryCheckCommand runs history add then history check on
// generated nightly histories, on SQLite and PostgreSQL alike, one per
// exit path, in both formats.
func TestHistoryCheckCommand(t *testing.T) {
	slower := func(arms []histgen.Arm) []histgen.Step {
		return []histgen.Step{{At: 29, Arms: arms, Throughput: 0.95, Clock: 1}}
	}
	faster := func(arms []histgen.Arm) []histgen.Step {
		return []histgen.Step{{At: 29, Arms: arms, Throughput: 1.05, Clock: 1}}
	}
	for name, open := range checkDBs(t) {
		for _, tc := range []struct {
			name    string
			tonight func([]histgen.Arm) []histgen.Step
			unest   bool
			flags   []string
			exit    int
			md      []string
			verdict map[string]int
		}{
			{"stable", nil, false, nil, 0, []string{"## clockgate history check: no regression\n", " 0 regression, 0 NOT ESTABLISHED, 0 insufficient, 0 improvement, 0 new, 28 stable. Exit 0.\n"}, map[string]int{"stable": 28}},
			{"regression", slower, false, nil, 1, []string{"## clockgate history check: REGRESSION\n", " 18 regression, 0 NOT ESTABLISHED, 0 insufficient, 0 improvement, 0 new, 10 stable. Exit 1.\n",
				"| llama-3.1-8b-instruct fastengine throughput 1/inf [NVIDIA GB10] | 2026-09-30T02:00:00.000Z | ", " | **regression** | -5.", " | no: free clock "}, map[string]int{"regression": 18, "stable": 10}},
			{"regression-under-min-change", slower, false, []string{"--min-change", "6%"}, 0, []string{"not beyond --min-change 6%"}, map[string]int{"stable": 28}},
			{"improvement", faster, false, nil, 0, []string{"## clockgate history check: no regression\n", " | improvement | 4."}, map[string]int{"improvement": 18, "stable": 10}},
			{"not-established", nil, true, nil, 1, []string{"## clockgate history check: NOT ESTABLISHED\n", "| **not_established** |"}, map[string]int{"not_established": 28}},
			{"not-established-allowed", nil, true, []string{"--allow-unestablished"}, 0, []string{"## clockgate history check: no regression\n", "A NOT ESTABLISHED newest value is allowed (--allow-unestablished)."}, map[string]int{"not_established": 28}},
		} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				db := open(t)
				dirs := writeNights(t, t.TempDir(), 40, tc.tonight, tc.unest)
				if code, _, errs := runMain(append([]string{"history", "add", "--db", db}, dirs...)...); code != 0 {
					t.Fatalf("history add: exit %d: %s", code, errs)
				}
				code, out, errs := runMain(append([]string{"history", "check", "--db", db}, tc.flags...)...)
				if code != tc.exit || errs != "" {
					t.Errorf("history check: exit %d, stderr %q; want exit %d, nothing on stderr", code, errs, tc.exit)
				}
				for _, want := range tc.md {
					if !strings.Contains(out, want) {
						t.Errorf("markdown lacks %q:\n%s", want, out)
					}
				}
				code, out, _ = runMain(append([]string{"history", "check", "--db", db, "--format", "json"}, tc.flags...)...)
				var doc struct {
					Exit   int `json:"exit"`
					Series []struct {
						Verdict string `json:"verdict"`
					} `json:"series"`
				}
				if err := json.Unmarshal([]byte(out), &doc); err != nil {
					t.Fatalf("json: %v\n%s", err, out)
				}
				got := map[string]int{}
				for _, s := range doc.Series {
					got[s.Verdict]++
				}
				if code != tc.exit || doc.Exit != tc.exit || fmt.Sprint(got) != fmt.Sprint(tc.verdict) {
					t.Errorf("json: exit %d, document exit %d, verdicts %v; want %d, %v", code, doc.Exit, got, tc.exit, tc.verdict)
				}
			})
		}
	}
}

// TestHistoryCheckRefuses: a history that is missing or empty, a bad
// --min-change or --format are usage errors (exit 2), never a pass.
func TestHistoryCheckRefuses(t *testing.T) {
	empty := filepath.Join(t.TempDir(), "empty.sqlite")
	if code, _, errs := runMain("history", "add", "--db", empty, "../../testdata/trees/clean-grid"); code != 0 {
		t.Fatalf("add: %d %s", code, errs)
	}
	none := filepath.Join(t.TempDir(), "none.sqlite")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--db", filepath.Join(t.TempDir(), "missing.sqlite")}, "missing.sqlite: no such file or directory"},
		{[]string{"--db", empty, "--min-change", "1.5x"}, "clockgate: --min-change 1.5x: want a percentage such as 1% or 0.5\n"},
		{[]string{"--db", empty, "--min-change", "-1%"}, "clockgate: --min-change -1%: want a percentage at least 0% and below 100%\n"},
		{[]string{"--db", empty, "--format", "html"}, "clockgate: --format html: want md or json\n"},
	} {
		code, _, errs := runMain(append([]string{"history", "check"}, tc.args...)...)
		if code != 2 || !strings.Contains(errs, tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want 2 and %q", tc.args, code, errs, tc.want)
		}
	}
	// A history file with its tables but no grid.
	if code, _, _ := runMain("history", "add", "--db", none); code != 2 {
		t.Fatalf("add without TREE: exit %d", code)
	}
	f, err := os.Create(none)
	if err != nil {
		t.Fatal(err)
	}
	f.Close()
	code, _, errs := runMain("history", "check", "--db", none)
	if code != 2 || !strings.Contains(errs, "the history holds no grid: nothing to check") {
		t.Errorf("an empty history: exit %d, stderr %q", code, errs)
	}
	// One grid: every series has its first value, new.
	code, out, errs := runMain("history", "check", "--db", empty)
	if code != 0 || !strings.Contains(out, "| new | — | — | the series' first grid: nothing to compare it with |") {
		t.Errorf("one grid: exit %d, stderr %q:\n%s", code, errs, out)
	}
}

// TestHistoryCheckTwoNights is the new user's case on real trees, SQLite
// and PostgreSQL alike: significance-separated as the first night (every
// series new, exit 0), then nightly-drop, the next night with fastengine
// 20% slower and every ratio ESTABLISHED: a regression of fastengine's
// throughput, of the THROUGHPUT ratio and of every point's ratio, exit 1,
// in both formats; vllm's throughput and the MEMORY ratio stable.
func TestHistoryCheckTwoNights(t *testing.T) {
	for name, open := range checkDBs(t) {
		t.Run(name, func(t *testing.T) {
			db := open(t)
			verdicts := func(flags ...string) (int, map[string]int) {
				t.Helper()
				code, out, errs := runMain(append([]string{"history", "check", "--db", db, "--format", "json"}, flags...)...)
				var doc struct {
					Exit   int `json:"exit"`
					Series []struct {
						Key          string   `json:"key"`
						Verdict      string   `json:"verdict"`
						MagnitudePct *float64 `json:"magnitude_pct"`
					} `json:"series"`
				}
				if err := json.Unmarshal([]byte(out), &doc); err != nil || doc.Exit != code {
					t.Fatalf("json (%v), exit %d, document exit %d, stderr %q:\n%s", err, code, doc.Exit, errs, out)
				}
				got := map[string]int{}
				for _, s := range doc.Series {
					got[s.Verdict]++
					if s.Verdict == "regression" && (s.MagnitudePct == nil || *s.MagnitudePct > -19.9 || *s.MagnitudePct < -20.1) {
						t.Errorf("%s: magnitude %v, want -20%%", s.Key, s.MagnitudePct)
					}
				}
				return code, got
			}
			if code, _, errs := runMain("history", "add", "--db", db, "../../testdata/trees/significance-separated"); code != 0 {
				t.Fatalf("add the first night: exit %d: %s", code, errs)
			}
			if code, got := verdicts(); code != 0 || fmt.Sprint(got) != "map[new:14]" {
				t.Errorf("one night: exit %d, verdicts %v; want 0, 14 new", code, got)
			}
			if code, _, errs := runMain("history", "add", "--db", db, "../../testdata/trees/nightly-drop"); code != 0 {
				t.Fatalf("add the second night: exit %d: %s", code, errs)
			}
			if code, got := verdicts(); code != 1 || fmt.Sprint(got) != "map[regression:9 stable:5]" {
				t.Errorf("two nights: exit %d, verdicts %v; want 1, 9 regression and 5 stable", code, got)
			}
			code, out, _ := runMain("history", "check", "--db", db)
			for _, want := range []string{
				"## clockgate history check: REGRESSION\n",
				"| llama-3.1-8b-instruct fastengine/vllm THROUGHPUT ratio [NVIDIA GB10] | 2026-08-13T",
				" | **regression** | -20.0",
				"worse beyond --min-change 1% (one-sided Mann–Whitney against the legs before moved by it) at p 0.003968 < 0.02, the medians 20.0",
			} {
				if code != 1 || !strings.Contains(out, want) {
					t.Errorf("markdown (exit %d) lacks %q:\n%s", code, want, out)
				}
			}
		})
	}
}
