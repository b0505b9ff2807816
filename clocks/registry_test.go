package clocks

import (
	"bufio"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestRegistryIsTheReasonReference: the reason tables of docs/reasons.md
// list exactly the registered codes, each once, under a heading of its
// scope ("## Leg: …", "## Arm: …", "## Ratio: …").
func TestRegistryIsTheReasonReference(t *testing.T) {
	f, err := os.Open("../docs/reasons.md")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	row := regexp.MustCompile("^\\| `([a-z]+\\.[a-z_]+)` \\|")
	heading := regexp.MustCompile(`^#+ `)
	scope := Scope("")
	listed := map[string]Scope{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if h := heading.FindString(line); h != "" {
			switch title := strings.TrimPrefix(line, h); {
			case strings.HasPrefix(title, "Leg: "):
				scope = ScopeLeg
			case strings.HasPrefix(title, "Arm: "):
				scope = ScopeArm
			case strings.HasPrefix(title, "Ratio: "):
				scope = ScopeRatio
			default:
				scope = ""
			}
		}
		m := row.FindStringSubmatch(line)
		if m == nil || scope == "" {
			continue
		}
		if _, twice := listed[m[1]]; twice {
			t.Errorf("docs/reasons.md lists %s twice", m[1])
		}
		listed[m[1]] = scope
	}
	for _, c := range Registry {
		switch s, ok := listed[c.Code]; {
		case !ok:
			t.Errorf("docs/reasons.md's reason tables lack %s", c.Code)
		case s != c.Scope:
			t.Errorf("docs/reasons.md lists %s under %s, the registry says %s", c.Code, s, c.Scope)
		}
		delete(listed, c.Code)
	}
	for code := range listed {
		t.Errorf("docs/reasons.md lists %s, which is not registered", code)
	}
}

// notCodes are literals shaped like a reason code that are something else:
// nvidia-smi's query field for GPU memory used (sampler/csv.go), amd-smi's
// key path of the energy counter (sampler/amdjson.go), and the events of
// clockgate grid's journal (grid/journal.go, SPEC §11.2), and the plan's
// [bench] keys as resume names them (grid/plan.go, grid/plandiff.go).
var notCodes = map[string]bool{"memory.used": true, "energy.total_energy_consumption": true, "leg.idle": true, "leg.commit": true, "leg.fail": true,
	"bench.points": true, "bench.command": true, "bench.warmup": true, "bench.format": true}

// TestRegistryIsComplete: every code the source writes is registered, and
// the registry agrees with itself: clock codes are the clock contract's,
// and only boot checks are waivable.
func TestRegistryIsComplete(t *testing.T) {
	code := regexp.MustCompile(`"((?:clock|bench|memory|leg|ratio|energy|host)\.[a-z_]+)"`)
	files, err := filepath.Glob("../*/*.go")
	if err != nil {
		t.Fatal(err)
	}
	more, _ := filepath.Glob("../cmd/*/*.go")
	seen := 0
	for _, p := range append(files, more...) {
		if strings.HasSuffix(p, "_test.go") || filepath.ToSlash(p) == "../foreign/smifields.go" {
			// (smifields.go lists nvidia-smi's field names, memory.used
			// among them: not reason codes.)
			continue
		}
		data, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range code.FindAllStringSubmatch(string(data), -1) {
			if _, ok := Info(m[1]); !ok && !strings.HasSuffix(m[1], ".json") && !strings.HasSuffix(m[1], ".jsonl") && !notCodes[m[1]] {
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
		if c.Waivable != (c.Code == CodeCrossBoot || c.Code == CodeStraddledBoot || c.Code == CodeUnprovenBoot) {
			t.Errorf("%s: waivable %v; the override waives boot identity and nothing else", c.Code, c.Waivable)
		}
		if c.Blocks == 0 || c.Doc == "" {
			t.Errorf("%s: blocks %v, doc %q", c.Code, c.Blocks, c.Doc)
		}
	}
}
