package clocks

import (
	"bytes"
	"strings"
	"testing"
)

// TestAppendJSONWritesJSON: every string a sample can hold is written as
// JSON the stream parser reads back to the same sample; Go's escapes
// (\a, \x7f) are not JSON.
func TestAppendJSONWritesJSON(t *testing.T) {
	for _, name := range []string{"a\x07b", "DEL\x7f", "tab\tnl\nnul\x00", `quote" back\`, "é ü 😀", "\u2028\u00a0"} {
		s := h100(0, boot2F, 1980, 97)
		s.GPUName = name
		line := s.AppendJSON(nil)
		back, err := ParseSample(line)
		if err != nil {
			t.Fatalf("gpu_name %q written as %s: refused: %v", name, line, err)
		}
		if back.GPUName != name || !bytes.Equal(back.AppendJSON(nil), line) {
			t.Errorf("gpu_name %q read back as %q", name, back.GPUName)
		}
	}
	s := h100(0, boot2F, 1980, 97)
	s.GPUName = "a\x01\"\\"
	if got, want := string(s.AppendJSON(nil)), `"gpu_name":"a\u0001\"\\"`; !strings.Contains(got, want) {
		t.Errorf("line %s lacks %s", got, want)
	}
}
