package strictjson

import (
	"encoding/json"
	"testing"
	"unicode/utf8"
)

func FuzzParse(f *testing.F) {
	for _, s := range []string{`{"a":1}`, `{"a":[1,2,{"b":null}],"c":"\u00e9"}`, `{"a":1,"a":2}`, `[1e999]`, `"\ud83d\ude00"`, `-0.5e-3`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		v, err := Parse(data)
		if err != nil {
			return
		}
		// What the strict parser accepts, the standard one does too, and
		// it is valid UTF-8 with no duplicate key.
		if !json.Valid(data) || !utf8.Valid(data) {
			t.Fatalf("accepted %q that encoding/json refuses", data)
		}
		checkNoDup(t, v)
	})
}

func checkNoDup(t *testing.T, v *Value) {
	if v.Kind == Object && len(v.Keys) != len(v.Fields) {
		t.Fatalf("duplicate keys accepted: %v", v.Keys)
	}
	for _, e := range v.Elems {
		checkNoDup(t, e)
	}
	for _, e := range v.Fields {
		checkNoDup(t, e)
	}
}
