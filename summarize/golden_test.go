package summarize_test

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/report"
	"github.com/clockgate/clockgate/summarize"
	"github.com/clockgate/clockgate/summarize/internal/treegen"
)

var update = flag.Bool("update", false, "rewrite golden files")

const (
	treesDir  = "../testdata/trees"
	goldenDir = "../golden"
)

// variant is one way a scenario is summarized; dir is its folder under
// golden/<scenario>/.
type variant struct {
	dir   string
	allow bool
}

func variants(sc treegen.Scenario) []variant {
	v := []variant{{"", false}}
	if sc.Override {
		v = append(v, variant{"with-override", true})
	}
	return v
}

// outputs summarizes one scenario and renders every output file.
func outputs(t *testing.T, scenario string, allow bool) (*summarize.Summary, map[string][]byte) {
	t.Helper()
	baseline := "vllm"
	for _, sc := range treegen.Scenarios() {
		if sc.Name == scenario {
			baseline = sc.BaselineEngine()
		}
	}
	s, err := summarize.Summarize(filepath.Join(treesDir, scenario), summarize.Options{Baseline: baseline, AllowCrossBoot: allow})
	if err != nil {
		t.Fatal(err)
	}
	sum, err := s.SummaryJSON()
	if err != nil {
		t.Fatal(err)
	}
	all, err := s.AllRunsJSON()
	if err != nil {
		t.Fatal(err)
	}
	var md bytes.Buffer
	if err := report.Markdown(&md, s); err != nil {
		t.Fatal(err)
	}
	return s, map[string][]byte{"summary.json": sum, "all-runs.json": all, "report.md": md.Bytes()}
}

// TestGolden compares every scenario's summary.json, all-runs.json and
// report.md with golden/<scenario>/ (and golden/<scenario>/with-override/
// where the override matters). go test ./... -update rewrites them.
func TestGolden(t *testing.T) {
	known := map[string]bool{}
	for _, sc := range treegen.Scenarios() {
		known[sc.Name] = true
		for _, v := range variants(sc) {
			t.Run(filepath.Join(sc.Name, v.dir), func(t *testing.T) {
				_, files := outputs(t, sc.Name, v.allow)
				dir := filepath.Join(goldenDir, sc.Name, v.dir)
				for name, got := range files {
					path := filepath.Join(dir, name)
					if *update {
						if err := os.MkdirAll(dir, 0o755); err != nil {
							t.Fatal(err)
						}
						if err := os.WriteFile(path, got, 0o644); err != nil {
							t.Fatal(err)
						}
						continue
					}
					want, err := os.ReadFile(path)
					if err != nil {
						t.Fatalf("%v (run go test ./summarize -update to write it)", err)
					}
					if !bytes.Equal(got, want) {
						t.Errorf("%s differs from the golden file (go test ./... -update rewrites it):\n%s", path, diff(want, got))
					}
				}
			})
		}
	}
	// A golden folder whose scenario is gone would never be checked again.
	entries, err := os.ReadDir(goldenDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if !known[e.Name()] {
			t.Errorf("golden/%s has no scenario in testdata/trees", e.Name())
		}
	}
}

// TestSameTreeSameBytes summarizes one tree twice, the second time from a
// copy at another path reached by a relative path: the outputs must not
// change by a byte.
func TestSameTreeSameBytes(t *testing.T) {
	_, first := outputs(t, "cross-boot", true)
	tmp := t.TempDir()
	if err := os.CopyFS(filepath.Join(tmp, "copied"), os.DirFS(filepath.Join(treesDir, "cross-boot"))); err != nil {
		t.Fatal(err)
	}
	t.Chdir(tmp)
	s, err := summarize.Summarize("copied", summarize.Options{Baseline: "vllm", AllowCrossBoot: true})
	if err != nil {
		t.Fatal(err)
	}
	sum, _ := s.SummaryJSON()
	all, _ := s.AllRunsJSON()
	var md bytes.Buffer
	if err := report.Markdown(&md, s); err != nil {
		t.Fatal(err)
	}
	for name, got := range map[string][]byte{"summary.json": sum, "all-runs.json": all, "report.md": md.Bytes()} {
		if !bytes.Equal(got, first[name]) {
			t.Errorf("%s differs for the same tree at another path:\n%s", name, diff(first[name], got))
		}
	}
}

// diff shows the first differing line of two texts with a little context.
func diff(want, got []byte) string {
	w, g := strings.Split(string(want), "\n"), strings.Split(string(got), "\n")
	i := 0
	for i < len(w) && i < len(g) && w[i] == g[i] {
		i++
	}
	var b strings.Builder
	from := max(0, i-3)
	for j := from; j < i; j++ {
		fmt.Fprintf(&b, "  %4d   %s\n", j+1, w[j])
	}
	for j := i; j < min(len(w), i+6); j++ {
		fmt.Fprintf(&b, "- %4d   %s\n", j+1, w[j])
	}
	for j := i; j < min(len(g), i+6); j++ {
		fmt.Fprintf(&b, "+ %4d   %s\n", j+1, g[j])
	}
	fmt.Fprintf(&b, "(want %d lines, got %d)", len(w), len(g))
	return b.String()
}

// TestDocsExcerptsAreReal checks every excerpt in README.md and docs/*.md,
// marked <!-- excerpt: golden/<file> -->, is a verbatim part of that golden
// file, which TestGolden checks against the real output: the docs cannot
// rot.
func TestDocsExcerptsAreReal(t *testing.T) {
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	pages = append([]string{"../README.md"}, pages...)
	const marker = "<!-- excerpt: "
	found := map[string]int{}
	for _, page := range pages {
		doc, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(string(doc), marker)
		for _, p := range parts[1:] {
			name, rest, _ := strings.Cut(p, " -->\n```\n")
			block, _, ok := strings.Cut(rest, "\n```\n")
			if !ok {
				t.Fatalf("%s: the excerpt of %s is not followed by a fenced block", page, name)
			}
			golden, err := os.ReadFile(filepath.Join("..", name))
			if err != nil {
				t.Fatalf("%s: %v", page, err)
			}
			if !strings.Contains(string(golden), block+"\n") {
				t.Errorf("the excerpt of %s in %s is not in it:\n%s", name, page, block)
			}
			found[page]++
		}
	}
	// The front door shows a real report, and so does the reference.
	for _, page := range []string{"../README.md", "../docs/contract.md", "../docs/tree.md"} {
		if found[page] == 0 {
			t.Errorf("%s has no excerpt", page)
		}
	}
}
