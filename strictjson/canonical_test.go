package strictjson

import (
	"bytes"
	"encoding/json"
	"math/rand"
	"testing"
)

// canonicalOracle is Canonical the slow way: encode, decode into generic
// values, encode those sorted and indented.
func canonicalOracle(v any) ([]byte, error) {
	var first bytes.Buffer
	enc := json.NewEncoder(&first)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(&first)
	dec.UseNumber()
	var generic any
	if err := dec.Decode(&generic); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc = json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(generic); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// htmlMarshaler writes its string with encoding/json's HTML escapes, as a
// MarshalJSON that calls json.Marshal does.
type htmlMarshaler string

func (h htmlMarshaler) MarshalJSON() ([]byte, error) { return json.Marshal(string(h)) }

var pieces = []string{"a", "b", "key", "", "<", ">", "&", "é", "\u2028", "\x01", "\"", "\\", "\n", "zz", "A", "\xff", "日本", " "}

func randomString(rng *rand.Rand) string {
	var s string
	for range rng.Intn(4) {
		s += pieces[rng.Intn(len(pieces))]
	}
	return s
}

func randomValue(rng *rand.Rand, depth int) any {
	switch k := rng.Intn(10); {
	case depth > 3 || k < 4:
		switch rng.Intn(7) {
		case 0:
			return nil
		case 1:
			return rng.Intn(2) == 0
		case 2:
			return rng.NormFloat64() * 1e3
		case 3:
			return rng.Int63() - rng.Int63()
		case 4:
			return htmlMarshaler(randomString(rng))
		case 5:
			return json.RawMessage(`"\u00e9\u003c x"`)
		default:
			return randomString(rng)
		}
	case k < 7:
		m := map[string]any{}
		for range rng.Intn(5) {
			m[randomString(rng)] = randomValue(rng, depth+1)
		}
		return m
	default:
		a := []any{}
		for range rng.Intn(4) {
			a = append(a, randomValue(rng, depth+1))
		}
		return a
	}
}

// TestCanonicalIsDecodeAndEncode holds the one-pass rewrite to what
// decoding into generic values and encoding them again gives, on random
// values with every escape encoding/json writes, Marshalers that escape
// HTML, raw messages with escapes, structs (fields in declaration order)
// and empty objects and arrays.
func TestCanonicalIsDecodeAndEncode(t *testing.T) {
	type inner struct {
		Z   string         `json:"z"`
		A   any            `json:"a"`
		Nil map[string]int `json:"nil"`
		E   []int          `json:"e"`
		M   htmlMarshaler  `json:"m"`
	}
	type outer struct {
		Zeta  inner   `json:"zeta"`
		Alpha []inner `json:"alpha"`
		Mid   any     `json:"mid"`
	}
	rng := rand.New(rand.NewSource(3))
	for i := range 20000 {
		var v any = randomValue(rng, 0)
		if i%3 == 0 {
			v = outer{Zeta: inner{Z: randomString(rng), A: randomValue(rng, 1), E: []int{}, M: "<b>"},
				Alpha: []inner{{A: randomValue(rng, 1)}}, Mid: v}
		}
		got, err := Canonical(v)
		if err != nil {
			t.Fatalf("%#v: %v", v, err)
		}
		want, err := canonicalOracle(v)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%#v:\ngot  %s\nwant %s", v, got, want)
		}
	}
}
