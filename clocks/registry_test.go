package clocks

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRegistryIsTheREADMEs: the reason tables of the README and the pages
// in docs/ list exactly the registered codes, each once, under a heading
// of its scope ("### Leg: …", "### Arm: …", "### Ratio: …").
func TestRegistryIsTheREADMEs(t *testing.T) {
	// The reference is moving from the README into docs/: a code may be
	// listed in either, once.
	pages, err := filepath.Glob("../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([a-z]+\\.[a-z_]+)` \\|")
	listed := map[string]Scope{}
	for _, page := range append([]string{"../README.md"}, pages...) {
		f, err := os.Open(page)
		if err != nil {
			t.Fatal(err)
		}
		scope := Scope("")
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "### Leg: "):
				scope = ScopeLeg
			case strings.HasPrefix(line, "### Arm: "):
				scope = ScopeArm
			case strings.HasPrefix(line, "### Ratio: "):
				scope = ScopeRatio
			case strings.HasPrefix(line, "#"):
				scope = ""
			}
			m := row.FindStringSubmatch(line)
			if m == nil || scope == "" {
				continue
			}
			if _, twice := listed[m[1]]; twice {
				t.Errorf("%s lists %s twice", page, m[1])
			}
			listed[m[1]] = scope
		}
		f.Close()
	}
	for _, c := range Registry {
		switch s, ok := listed[c.Code]; {
		case !ok:
			t.Errorf("README's reason tables lack %s", c.Code)
		case s != c.Scope:
			t.Errorf("README lists %s under %s, the registry says %s", c.Code, s, c.Scope)
		}
		delete(listed, c.Code)
	}
	for code := range listed {
		t.Errorf("README lists %s, which is not registered", code)
	}
}

// TestRegistryIsComplete: every code the source writes is registered, and
// the registry agrees with itself: clock codes are the clock contract's,
// and only boot checks are waivable.
func TestRegistryIsComplete(t *testing.T) {
	code := regexp.MustCompile(`"((?:clock|bench|memory|leg|ratio|energy)\.[a-z_]+)"`)
	files, err := filepath.Glob("../*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../cmd/*/*.go")
	seen := 0
	for _, p := range append(files, more...) {
		if strings.HasSuffix(p, "_test.go") {
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range code.FindAllStringSubmatch(string(data), -1) {
			// energy.total_energy_consumption is amd-smi's key path, not a code.
			if _, ok := Info(m[1]); !ok && !strings.HasSuffix(m[1], ".json") && !strings.HasSuffix(m[1], ".jsonl") && m[1] != "energy.total_energy_consumption" {
				t.Errorf("%s writes %s, which is not registered", p, m[1])
			}
			seen++
		}
	}
	if seen < len(Registry) {
		t.Fatalf("found %d code literals in the source, fewer than the %d registered", seen, len(Registry))
	}
	for _, c := range Registry {
		if c.Clock != IsClock(c.Code) {
			t.Errorf("%s: Clock %v, but its name says %v", c.Code, c.Clock, IsClock(c.Code))
		}
		if c.Waivable != (c.Code == CodeCrossBoot || c.Code == CodeStraddledBoot) {
			t.Errorf("%s: waivable %v; the override waives boot identity and nothing else", c.Code, c.Waivable)
		}
		if c.Blocks == 0 || c.Doc == "" {
			t.Errorf("%s: blocks %v, doc %q", c.Code, c.Blocks, c.Doc)
		}
	}
}
