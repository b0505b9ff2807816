package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutAndTreePlaces: a TREE that is not an evidence tree, and an --out
// DIR inside one of TREE's evidence subtrees, are usage errors (exit 2)
// that write nothing; an --out DIR elsewhere inside TREE is summarized
// around, so a rerun gives the same bytes.
func TestOutAndTreePlaces(t *testing.T) {
	tree := filepath.Join(t.TempDir(), "tree")
	if err := os.CopyFS(tree, os.DirFS("../../testdata/trees/cross-boot")); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) (int, string, string) {
		var stdout, stderr strings.Builder
		code := Main(append([]string{"summarize"}, args...), strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}

	for _, bad := range []string{filepath.Join(tree, "bench"), filepath.Join(tree, "bench", "llama-3.1-8b-instruct")} {
		code, stdout, stderr := run(bad)
		if code != ExitUsage || stdout != "" || !strings.Contains(stderr, ": not an evidence tree: want bench/, memory/ or clocks/ directly under it, found none") {
			t.Errorf("summarize %s: exit %d, stdout %q, stderr %q; want 2 and not an evidence tree", bad, code, stdout, stderr)
		}
	}

	for _, sub := range []string{"bench", "memory", "clocks"} {
		out := filepath.Join(tree, sub, "m", "e", "r9")
		code, _, stderr := run("--out", out, tree)
		want := "--out " + out + ": inside " + sub + "/ of TREE " + tree + ", where the next run would read it as evidence"
		if code != ExitUsage || !strings.Contains(stderr, want) {
			t.Errorf("--out %s: exit %d, stderr %q; want 2 and %q", out, code, stderr, want)
		}
		if _, err := os.Stat(filepath.Join(tree, sub, "m")); err == nil {
			t.Errorf("--out %s wrote into the evidence", out)
		}
	}
	// Through a symbolic link to TREE too.
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(tree, link); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := run("--out", filepath.Join(link, "clocks", "x"), tree); code != ExitUsage || !strings.Contains(stderr, "inside clocks/") {
		t.Errorf("--out through a link: exit %d, %q", code, stderr)
	}

	out := filepath.Join(tree, "summary")
	code, first, stderr := run("--out", out, tree)
	if code != ExitOK {
		t.Fatalf("--out inside TREE: exit %d, %s", code, stderr)
	}
	files := map[string][]byte{}
	for _, n := range summarizeOutputs {
		b, err := os.ReadFile(filepath.Join(out, n))
		if err != nil {
			t.Fatal(err)
		}
		files[n] = b
	}
	code, second, stderr := run("--out", out, tree)
	if code != ExitOK || second != first {
		t.Fatalf("rerun: exit %d, %s; report changed: %v", code, stderr, second != first)
	}
	for _, n := range summarizeOutputs {
		b, _ := os.ReadFile(filepath.Join(out, n))
		if string(b) != string(files[n]) {
			t.Errorf("%s differs on the second run", n)
		}
	}
	if strings.Contains(second, "summary: not bench/") {
		t.Error("the outputs directory is a warning")
	}
}

// TestOutDirMadeBeforeTheFirstRun: an --out DIR inside TREE that exists,
// empty, before the first run (mkdir T/summary; mkdir -p T/reports/today;
// also named through a link to TREE) is skipped on the first run as on the
// second: both runs write the same four outputs and print the same report,
// byte for byte, and neither warns of it.
func TestOutDirMadeBeforeTheFirstRun(t *testing.T) {
	run := func(args ...string) (int, string, string) {
		var stdout, stderr strings.Builder
		code := Main(append([]string{"summarize"}, args...), strings.NewReader(""), &stdout, &stderr)
		return code, stdout.String(), stderr.String()
	}
	for _, c := range []struct {
		made, out string // made: the directory made first; out: --out, under TREE
		link      bool
	}{
		{"summary", "summary", false},
		{filepath.Join("reports", "today"), filepath.Join("reports", "today"), false},
		{"reports", filepath.Join("reports", "today"), false},
		{filepath.Join("reports", "today"), filepath.Join("reports", "today"), true},
	} {
		tree := filepath.Join(t.TempDir(), "tree")
		if err := os.CopyFS(tree, os.DirFS("../../testdata/trees/cross-boot")); err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Join(tree, c.made), 0o755); err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(tree, c.out)
		if c.link {
			link := filepath.Join(t.TempDir(), "link")
			if err := os.Symlink(tree, link); err != nil {
				t.Fatal(err)
			}
			out = filepath.Join(link, c.out)
		}
		var reports [2]string
		var files [2]map[string][]byte
		for i := range 2 {
			code, stdout, stderr := run("--out", out, tree)
			if code != ExitOK {
				t.Fatalf("made %s, --out %s, run %d: exit %d, %s", c.made, out, i+1, code, stderr)
			}
			reports[i], files[i] = stdout, map[string][]byte{}
			for _, n := range summarizeOutputs {
				b, err := os.ReadFile(filepath.Join(out, n))
				if err != nil {
					t.Fatal(err)
				}
				files[i][n] = b
			}
		}
		top, _, _ := strings.Cut(c.out, string(filepath.Separator))
		if strings.Contains(reports[0], top+": not bench/") {
			t.Errorf("made %s, --out %s: the first run warns of it", c.made, out)
		}
		if reports[0] != reports[1] {
			t.Errorf("made %s, --out %s: the report differs between the runs", c.made, out)
		}
		for _, n := range summarizeOutputs {
			if string(files[0][n]) != string(files[1][n]) {
				t.Errorf("made %s, --out %s: %s differs between the runs", c.made, out, n)
			}
		}
	}
}

// TestDocsShowTheHelpExamples: the summarize reference (docs/tree.md)
// shows the examples --help prints, line for line.
func TestDocsShowTheHelpExamples(t *testing.T) {
	readme, err := os.ReadFile("../../docs/tree.md")
	if err != nil {
		t.Fatal(err)
	}
	ex := NewCmdSummarize(&IO{}).Example
	for _, line := range strings.Split(ex, "\n") {
		if !strings.Contains(string(readme), "\n"+line+"\n") {
			t.Errorf("docs/tree.md lacks the help example %q", line)
		}
	}
}
