package strictjson

import (
	"strings"
	"testing"
)

func TestParseRefuses(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"duplicate key", `{"a":1,"a":2}`, `duplicate key "a"`},
		{"nested duplicate key", `{"w":{"n":1,"n":1}}`, `duplicate key "n"`},
		{"NaN", `{"a":NaN}`, `NaN and Infinity are not JSON numbers`},
		{"Infinity", `{"a":Infinity}`, `NaN and Infinity are not JSON numbers`},
		{"negative Infinity", `{"a":-Infinity}`, `-Infinity is not a JSON number`},
		{"overflow", `{"a":1e999}`, `number 1e999 is not finite`},
		{"bom", "\xef\xbb\xbf{}", `byte order mark`},
		{"invalid utf-8", "{\"a\":\"\xff\"}", `invalid UTF-8`},
		{"truncated", `{"a":1`, `end of input`},
		{"trailing", `{"a":1} {"b":2}`, `after the value`},
		{"leading zero", `{"a":01}`, `leading zero`},
		{"empty", ``, `end of input`},
		{"control char", "{\"a\":\"x\ty\"}", `control character`},
		{"single quotes", `{'a':1}`, `want a key string`},
		{"unpaired surrogate", `{"a":"\ud800"}`, `unpaired surrogate`},
		{"too deep", strings.Repeat("[", MaxDepth+2) + strings.Repeat("]", MaxDepth+2), `nesting deeper`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.in))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Parse(%q) error = %v, want %q", tc.in, err, tc.want)
			}
		})
	}
}

func TestParseAccepts(t *testing.T) {
	v, err := ParseObject([]byte(" {\"s\":\"a\\u00e9\\n\\ud83d\\ude00\",\"n\":-1.5e2,\"i\":42,\"b\":true,\"z\":null,\"a\":[1,{}]}\r\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := v.Fields["s"].Str; got != "aé\n😀" {
		t.Errorf("s = %q", got)
	}
	if v.Fields["n"].Num != -150 {
		t.Errorf("n = %v", v.Fields["n"].Num)
	}
	if _, ok := v.Fields["n"].Int(); ok {
		t.Errorf("-1.5e2 read as an integer")
	}
	if i, ok := v.Fields["i"].Int(); !ok || i != 42 {
		t.Errorf("i = %v %v", i, ok)
	}
	if strings.Join(v.Keys, ",") != "s,n,i,b,z,a" {
		t.Errorf("keys = %v", v.Keys)
	}
	if _, err := ParseObject([]byte(`[1]`)); err == nil || !strings.Contains(err.Error(), "want an object, found array") {
		t.Errorf("array as object: %v", err)
	}
}

func TestCanonicalSortsKeys(t *testing.T) {
	type s struct {
		Z int            `json:"z"`
		A map[string]int `json:"a"`
		H string         `json:"h"`
	}
	got, err := Canonical(s{Z: 1, A: map[string]int{"y": 2, "b": 1}, H: "<&>"})
	if err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"a\": {\n    \"b\": 1,\n    \"y\": 2\n  },\n  \"h\": \"<&>\",\n  \"z\": 1\n}\n"
	if string(got) != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}
