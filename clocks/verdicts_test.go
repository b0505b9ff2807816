package clocks

import (
	"bytes"
	"math/rand"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// judgeBoth judges a leg with the fast path and with the strict parser
// alone, and fails unless the verdicts are identical.
func judgeBoth(t *testing.T, name string, judge func() *Leg) {
	t.Helper()
	fast := judge()
	strictOnly = true
	defer func() { strictOnly = false }()
	slow := judge()
	if !reflect.DeepEqual(fast.Reasons, slow.Reasons) || fast.Trusted() != slow.Trusted() {
		t.Fatalf("%s: fast path %+v, strict path %+v", name, fast.Reasons, slow.Reasons)
	}
}

// Every leg of every shipped tree gets one verdict, whichever path reads it.
func TestFastAndStrictVerdictsOnShippedTrees(t *testing.T) {
	records, err := filepath.Glob("../testdata/trees/*/clocks/*/*/r*.summary.json")
	if err != nil || len(records) < 30 {
		t.Fatalf("found %d records: %v", len(records), err)
	}
	for _, rec := range records {
		stream := strings.TrimSuffix(rec, ".summary.json") + ".samples.jsonl"
		judgeBoth(t, rec, func() *Leg { return LoadLeg("r", rec, stream) })
	}
}

// Generated legs with corrupted rows: a byte changed, dropped or doubled in
// a random line, or a line duplicated or dropped.
func TestFastAndStrictVerdictsOnCorruptedRows(t *testing.T) {
	ss := cleanWindow(bootF6)
	ss[20].ThrottleReasonsActive = "0x0000000000000100"
	stream := streamOf(ss)
	rec := recordJSON(t, recordOf(t, ss, StopPIDExit))
	rng := rand.New(rand.NewSource(7))
	lines := bytes.SplitAfter(stream, []byte("\n"))
	for i := 0; i < 400; i++ {
		ls := append([][]byte(nil), lines...)
		k := rng.Intn(len(ls) - 1)
		line := append([]byte(nil), ls[k]...)
		pos := rng.Intn(len(line))
		switch rng.Intn(5) {
		case 0:
			const alphabet = "0123456789\",:{}x. "
			line[pos] = alphabet[rng.Intn(len(alphabet))]
			ls[k] = line
		case 1:
			ls[k] = append(line[:pos], line[pos+1:]...)
		case 2:
			ls[k] = append(line[:pos], append([]byte{line[pos]}, line[pos:]...)...)
		case 3:
			ls = append(ls[:k], append([][]byte{ls[k]}, ls[k:]...)...)
		case 4:
			ls = append(ls[:k], ls[k+1:]...)
		}
		corrupted := bytes.Join(ls, nil)
		judgeBoth(t, "corrupted", func() *Leg { return JudgeLeg("r1", rec, bytes.NewReader(corrupted), nil) })
	}
}
