package treegen

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// treesDir is the committed trees, relative to this package.
const treesDir = "../../../testdata/trees"

// TestCommittedTreesMatchGenerator fails when a committed tree differs from
// what the generator writes, byte for byte, or holds a file it does not
// write: the trees cannot be edited by hand or drift from the generator.
func TestCommittedTreesMatchGenerator(t *testing.T) {
	want := Files()
	got := map[string][]byte{}
	err := filepath.WalkDir(treesDir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(treesDir, p)
		b, err := os.ReadFile(p)
		got[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	var bad []string
	for p, b := range want {
		g, ok := got[p]
		switch {
		case !ok:
			bad = append(bad, "missing: "+p)
		case !bytes.Equal(g, b):
			bad = append(bad, "differs: "+p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			bad = append(bad, "not generated: "+p)
		}
	}
	if len(bad) > 0 {
		sort.Strings(bad)
		if len(bad) > 20 {
			bad = append(bad[:20], "…")
		}
		t.Errorf("testdata/trees is not what the generator writes; regenerate with\n"+
			"  go run ./summarize/internal/treegen/cmd/treegen -out testdata/trees\n%s", strings.Join(bad, "\n"))
	}
}

// TestGeneratorIsDeterministic guards the property the test above relies on.
func TestGeneratorIsDeterministic(t *testing.T) {
	a, b := Files(), Files()
	if len(a) != len(b) {
		t.Fatalf("%d files, then %d", len(a), len(b))
	}
	for p := range a {
		if !bytes.Equal(a[p], b[p]) {
			t.Errorf("%s differs between two runs", p)
		}
	}
}

// TestWindowProfileIsExact checks the window helper hits min, median and
// max exactly, which the cross-boot tree's n=61 2398/2470/2489 relies on.
func TestWindowProfileIsExact(t *testing.T) {
	for _, n := range []int{3, 50, 61, 166} {
		v := window.values(seed("test", string(rune(n))), n)
		s := append([]int(nil), v...)
		sort.Ints(s)
		med2 := s[(n-1)/2] + s[n/2]
		if s[0] != window.min || s[n-1] != window.max || med2 != 2*window.med {
			t.Errorf("n=%d: min %d, median %v, max %d; want %d, %d, %d", n, s[0], float64(med2)/2, s[n-1], window.min, window.med, window.max)
		}
	}
}
