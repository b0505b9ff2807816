package summarize

import (
	"github.com/clockgate/clockgate/benchfmt"

	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/strictjson"
)

// legRow is one leg of all-runs.json as a value: the oracle a row written
// by hand (Leg.row) is held to.
type legRow struct {
	Model           string           `json:"model"`
	Engine          string           `json:"engine"`
	Run             int              `json:"run"`
	BindingEligible bool             `json:"binding_eligible"`
	Reasons         []clocks.Reason  `json:"reasons"`
	Clock           *clocks.Record   `json:"clock"`
	Memory          map[string]any   `json:"memory"`
	BenchFormats    []string         `json:"bench_formats"`
	Bench           []map[string]any `json:"bench"`
}

// rowOracle is l's row as strictjson.Canonical lays out legRow, indented
// as an element of the legs array.
func rowOracle(t *testing.T, l *Leg) []byte {
	t.Helper()
	r := legRow{Model: l.Model, Engine: l.Engine, Run: l.Run, BindingEligible: l.BindingEligible(),
		Reasons: nonNil(l.Reasons), Clock: l.Clock.Record, BenchFormats: nonNil(l.BenchFormats),
		Bench: []map[string]any{}}
	if l.Memory != nil {
		r.Memory = l.Memory.Raw
	}
	for _, p := range l.bench {
		r.Bench = append(r.Bench, kept(t, p))
	}
	b, err := strictjson.Canonical(r)
	if err != nil {
		t.Fatal(err)
	}
	b = bytes.TrimSuffix(b, []byte("\n"))
	return append([]byte(elemIndent), bytes.ReplaceAll(b, []byte("\n"), []byte("\n"+elemIndent))...)
}

// TestRowIsCanonical: the row written by hand is, byte for byte, the leg
// as a value laid out by strictjson.Canonical, for every leg of every
// scenario tree (real vLLM and SGLang files, several GPUs, memory records,
// every kind of reason among them).
func TestRowIsCanonical(t *testing.T) {
	trees, err := filepath.Glob(filepath.Join("..", "testdata", "trees", "*"))
	if err != nil {
		t.Fatal(err)
	}
	legs, points := 0, 0
	for _, root := range trees {
		if st, err := os.Stat(root); err != nil || !st.IsDir() {
			continue
		}
		w, err := walk(root, "")
		if err != nil {
			t.Fatal(err)
		}
		for _, k := range w.sortedLegs() {
			l := w.load(k, w.legs[k], false)
			want := rowOracle(t, l)
			n := len(l.Points)
			got, err := l.row()
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("%s %s/%s r%d: row\n%s\nwant\n%s", filepath.Base(root), k.model, k.engine, k.run, got, want)
			}
			legs++
			points += n
		}
	}
	if legs < 150 || points < 500 {
		t.Fatalf("compared %d legs and %d points; the scenario trees hold more", legs, points)
	}
}

// keptMember is one member of a random bench object: its text in the
// file, and its value as all-runs.json keeps it.
type keptMember struct {
	text string
	kept any
}

// randomMember makes a member value of every kind the bench reader keeps.
func randomMember(rng *rand.Rand) keptMember {
	strs := []string{"", "inf", "a\"b", `back\slash`, "tab\there", "line\nbreak", "\x01ctl", "<html>&amp;", "日本語", "\u2028sep\u2029", "emoji 🙂"}
	switch rng.Intn(10) {
	case 0:
		return keptMember{"null", nil}
	case 1:
		return keptMember{"true", true}
	case 2:
		return keptMember{"false", false}
	case 3:
		n := []string{"0", "-0", "1.5", "-2.25e-7", "1E+300", "123456789012345678901234567890", "0.10"}[rng.Intn(7)]
		return keptMember{n, json.Number(n)}
	case 4:
		s := strs[rng.Intn(len(strs))]
		b, _ := json.Marshal(s)
		return keptMember{string(b), s}
	case 5:
		lit := []string{"NaN", "Infinity", "-Infinity"}[rng.Intn(3)]
		return keptMember{lit, lit}
	case 6:
		n := rng.Intn(4)
		elems := make([]string, n)
		for i := range elems {
			elems[i] = []string{"1", `"x"`, "[]", "{}", "NaN", "[1, [2]]"}[rng.Intn(6)]
		}
		return keptMember{"[" + strings.Join(elems, ", ") + "]", map[string]any{"array_len": json.Number(fmt.Sprint(n))}}
	case 7:
		n := rng.Intn(4)
		ms := make([]string, n)
		for i := range ms {
			ms[i] = fmt.Sprintf(`"k%d": [%d]`, i, i)
		}
		return keptMember{"{" + strings.Join(ms, ", ") + "}", map[string]any{"object_len": json.Number(fmt.Sprint(n))}}
	case 8:
		n := benchfmt.MaxKeptString + rng.Intn(3)
		s := strings.Repeat("y", n)
		if n > benchfmt.MaxKeptString {
			return keptMember{`"` + s + `"`, map[string]any{"string_len": json.Number(fmt.Sprint(n))}}
		}
		return keptMember{`"` + s + `"`, s}
	}
	return keptMember{`"\u00e9\ud83d\ude42\/"`, "é🙂/"}
}

// TestKeptObjectIsCanonical: a point's kept object, written straight from
// the fields read, is what strictjson.Canonical gives for the same values
// as a map, on 2,000 random objects: every kind of value, keys and
// strings that need escaping (quotes, control characters, U+2028, HTML
// left as it is), keys in any order and spacing.
func TestKeptObjectIsCanonical(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	keys := []string{"", "a", "b", "B", "a b", "é", "日本", "x\"y", "back\\slash", "\u2028", "<k>", "z\u0001", "aa", "a\u0000"}
	for trial := range 2000 {
		want := map[string]any{}
		d := json.NewDecoder(strings.NewReader(validPoint))
		d.UseNumber()
		if err := d.Decode(&want); err != nil {
			t.Fatal(err)
		}
		var text []string
		for k := range want {
			v, _ := json.Marshal(want[k])
			kb, _ := json.Marshal(k)
			text = append(text, string(kb)+": "+string(v))
		}
		for range rng.Intn(8) {
			k := keys[rng.Intn(len(keys))]
			if _, dup := want[k]; dup {
				continue
			}
			m := randomMember(rng)
			want[k] = m.kept
			kb, _ := json.Marshal(k)
			text = append(text, string(kb)+[]string{": ", ":", " : ", ":\n\t"}[rng.Intn(4)]+m.text)
		}
		rng.Shuffle(len(text), func(i, j int) { text[i], text[j] = text[j], text[i] })
		data := "{" + strings.Join(text, []string{", ", ",", ",\n  "}[rng.Intn(3)]) + "}"
		ps, inv, _ := pb(fuzzRel, []byte(data))
		if len(ps) != 1 || len(inv) > 0 {
			t.Fatalf("trial %d: %s read as %d points, invalid %q", trial, data, len(ps), inv)
		}
		c, err := strictjson.Canonical(want)
		if err != nil {
			t.Fatal(err)
		}
		if got := ps[0].Raw; !bytes.Equal(got, bytes.TrimSuffix(c, []byte("\n"))) {
			t.Fatalf("trial %d: %s kept as\n%s\nwant\n%s", trial, data, got, c)
		}
	}
}

// TestRowTwiceIsStillJSON: a row written again after the leg let go of
// its kept objects is still JSON, each point null as a nil object encodes,
// never a gap in the array.
func TestRowTwiceIsStillJSON(t *testing.T) {
	w, err := walk(filepath.Join("..", "testdata", "trees", "clean-grid"), "")
	if err != nil {
		t.Fatal(err)
	}
	k := w.sortedLegs()[0]
	l := w.load(k, w.legs[k], false)
	if len(l.Points) == 0 {
		t.Fatal("the leg has no point")
	}
	if _, err := l.row(); err != nil {
		t.Fatal(err)
	}
	again, err := l.row()
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Bench []any }
	if err := json.Unmarshal(again, &v); err != nil || len(v.Bench) != len(l.Points) || v.Bench[0] != nil {
		t.Fatalf("row written again: %v, bench %v\n%s", err, v.Bench, again)
	}
}
