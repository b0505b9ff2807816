package benchfmt

import (
	"bytes"
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/strictjson"
)

// skimAgrees fails t unless the skim of line agrees with strictjson: a
// line it vouches for parses, with the same members. It reports whether
// the skim vouched.
func skimAgrees(t *testing.T, line []byte) bool {
	t.Helper()
	var sk skimmer
	rf, ok := sk.line(line)
	if !ok {
		return false
	}
	v, err := strictjson.ParseObject(line)
	if err != nil {
		t.Fatalf("the skim vouched for a line strictjson refuses (%v): %q", err, line)
	}
	want := fieldsOf(v)
	for i, pair := range [][2]skimVal{{rf.phase, want.phase}, {rf.credit, want.credit}, {rf.start, want.start}, {rf.end, want.end}} {
		if pair[0].kind != pair[1].kind || !bytes.Equal(pair[0].raw, pair[1].raw) {
			t.Fatalf("member %d: skim %c %q, strictjson %c %q, of %q", i, pair[0].kind, pair[0].raw, pair[1].kind, pair[1].raw, line)
		}
	}
	return true
}

// TestSkimRealRecords: every record of the real JSONLs (AIPerf's own,
// testdata/bench-real/aiperf) and of the aiperf-aa tree is read by the
// skim, with the members strictjson finds: the records are not parsed
// whole.
func TestSkimRealRecords(t *testing.T) {
	var files []string
	for _, g := range []string{filepath.Join(realDir, "aiperf", "*", "*", AIPerfJSONL), "../testdata/trees/aiperf-aa/bench/*/*/*/*/" + AIPerfJSONL} {
		m, _ := filepath.Glob(g)
		files = append(files, m...)
	}
	if len(files) < 10 {
		t.Fatalf("%d JSONL files, want the real ones and the tree's", len(files))
	}
	lines := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range bytes.Split(bytes.TrimSpace(data), []byte("\n")) {
			if !skimAgrees(t, l) {
				t.Errorf("%s: the skim does not vouch for %.200q", f, l)
			}
			lines++
		}
	}
	t.Logf("%d records in %d files", lines, len(files))
}

// TestSkimLeavesToStrictJSON: what the skim does not check, it does not
// vouch for (each such line refused by strictjson or read by it), and
// aiperfRecords then reads the line whole: the window and the refusal are
// strictjson's.
func TestSkimLeavesToStrictJSON(t *testing.T) {
	const md = `"request_start_ns": 1762551534797067827, "request_end_ns": 1762551538441354976`
	good := `{"metadata": {` + md + `, "benchmark_phase": "profiling"}, "metrics": {"x": {"value": [1.5, -2, 3e-5], "unit": "ms"}}, "error": null}`
	if !skimAgrees(t, []byte(good)) {
		t.Fatalf("the skim does not vouch for %s", good)
	}
	for name, line := range map[string]string{
		"duplicate key":      strings.Replace(good, `"error": null`, `"error": null, "error": null`, 1),
		"duplicate key deep": strings.Replace(good, `"unit": "ms"`, `"unit": "ms", "unit": "s"`, 1),
		"NaN":                strings.Replace(good, "1.5", "NaN", 1),
		"not finite":         strings.Replace(good, "3e-5", "1e999", 1),
		"leading zero":       strings.Replace(good, "1.5", "01.5", 1),
		"escape":             strings.Replace(good, `"ms"`, `"m\u0073"`, 1),
		"escaped key":        strings.Replace(good, `"unit"`, `"un\u0069t"`, 1),
		"control character":  strings.Replace(good, `"ms"`, "\"m\ts\"", 1),
		"invalid UTF-8":      strings.Replace(good, `"ms"`, "\"m\xffs\"", 1),
		"after the value":    good + " {}",
		"an array":           "[" + good + "]",
		"torn":               good[:len(good)-20],
		"metadata no object": `{"metadata": [1]}`,
		"deep":               `{"metrics": ` + strings.Repeat("[", 60) + strings.Repeat("]", 60) + `}`,
		"many keys":          `{"metadata": {` + md + `}, "m": {` + manyKeys(70) + `}}`,
		"trailing comma":     strings.Replace(good, `null}`, `null,}`, 1),
		"byte order mark":    "\xef\xbb\xbf" + good,
		"null misspelt":      strings.Replace(good, "null", "nul", 1),
		"number no digits":   strings.Replace(good, "-2", "-", 1),
		"fraction no digits": strings.Replace(good, "1.5", "1.", 1),
		"exponent no digits": strings.Replace(good, "3e-5", "3e-", 1),
		"phase with escape":  strings.Replace(good, `"profiling"`, `"profil\u0069ng"`, 1),
	} {
		if skimAgrees(t, []byte(line)) {
			t.Errorf("%s: the skim vouched for %q", name, line)
		}
		// The reader's answer is strictjson's: its refusal, or the
		// record read.
		_, _, n, err := aiperfRecords("c4/"+AIPerfJSONL, strings.NewReader(line+"\n"))
		var se *strictjson.Error
		if _, perr := strictjson.ParseObject([]byte(line)); errors.As(perr, &se) {
			if want := "c4/" + AIPerfJSONL + ":1: " + se.Msg + "; " + hintRestore; err == nil || err.Error() != want {
				t.Errorf("%s: %v\nwant %s", name, err, want)
			}
		} else if perr != nil || err != nil || n != map[bool]int{true: 1, false: 0}[strings.Contains(line, "request_start_ns")] {
			t.Errorf("%s: strictjson %v, reader %d records, %v", name, perr, n, err)
		}
	}
	// A phase written with an escape is still the profiling phase.
	line := strings.Replace(good, `"profiling"`, `"profil\u0069ng"`, 1)
	if _, _, n, err := aiperfRecords("c4/"+AIPerfJSONL, strings.NewReader(line+"\n")); err != nil || n != 1 {
		t.Errorf("escaped phase: %d records, %v", n, err)
	}
	// A time that is not an integer is refused, naming it as strictjson
	// read it.
	line = strings.Replace(good, "1762551534797067827", "1.762551534797067827e18", 1)
	_, _, _, err := aiperfRecords("c4/"+AIPerfJSONL, strings.NewReader(line+"\n"))
	if want := "c4/profile_export.jsonl:1: metadata.request_start_ns: want epoch nanoseconds from 2000-01-01 to 2100-01-01, found number 1.762551534797067827e18; " + hintAIPerf; err == nil || err.Error() != want {
		t.Errorf("time with an exponent: %v\nwant %s", err, want)
	}
}

func manyKeys(n int) string {
	var b strings.Builder
	for i := 0; i < n; i++ {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(`"k` + strings.Repeat("x", i) + `": 1`)
	}
	return b.String()
}

// FuzzSkimRecord holds the skim to strictjson on any line: a line it
// vouches for is one strictjson parses, with the same members.
func FuzzSkimRecord(f *testing.F) {
	for _, d := range []string{"toplevel/qwen_concurrency1", "records/run1"} {
		l, _ := os.ReadFile(filepath.Join(realDir, "aiperf", d, AIPerfJSONL))
		first, _, _ := bytes.Cut(l, []byte("\n"))
		f.Add(first)
	}
	f.Add([]byte(`{"metadata": {"request_start_ns": 1762551534797067827, "request_end_ns": 1762551538441354976, "credit_phase": "warmup"}, "error": {"m": [true, false, null, -0.5e+3]}}`))
	f.Fuzz(func(t *testing.T, line []byte) {
		skimAgrees(t, line)
	})
}

// TestKeptIsCanonical: a kept point's bytes are strictjson.Canonical's
// for the same map, whatever the numbers (integers, fractions, the
// exponent forms at both ends, negatives, zero) and strings (escapes,
// non-ASCII, HTML left unescaped).
func TestKeptIsCanonical(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 8))
	nums := []float64{0, 1, -1, 6, 768, 1e-6, 9.99e-7, 1e-7, 1.5e-300, 1e20, 1e21, 123456789e13, 1786532462.859, 12.131140546488744,
		math.MaxFloat64, math.SmallestNonzeroFloat64, -2.5e-8, 5e-324}
	for range 2000 {
		nums = append(nums, math.Float64frombits(r.Uint64()&^(0x7ff<<52)|uint64(r.IntN(2046))<<52), r.NormFloat64()*math.Pow(10, float64(r.IntN(50)-25)))
	}
	strs := []string{"", "profiling", "2026-08-12T11:01:04.288000", "0.5.0", `a"b\c`, "tab\tnl\n", "<&>", "é ü 東京", "\u2028", "\x7f"}
	for i := 0; i < len(nums); i += 3 {
		var k keptObj
		m := map[string]any{}
		for j, x := range nums[i:min(i+3, len(nums))] {
			key := []string{"zeta", "alpha", "m_id"}[j]
			k.num(key, x)
			m[key] = x
		}
		s := strs[i%len(strs)]
		k.str("strategy", s)
		m["strategy"] = s
		want, err := strictjson.Canonical(m)
		if err != nil {
			t.Fatal(err)
		}
		if got := k.bytes(); string(got) != strings.TrimSuffix(string(want), "\n") {
			t.Fatalf("kept %s\nCanonical %s", got, want)
		}
	}
	if got := (keptObj{}).bytes(); string(got) != "{}" {
		t.Errorf("empty: %s", got)
	}
}
