package clocks

import (
	"bytes"
	"fmt"
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

// TestCSVRefusesUnprintableText: text fields go into every stream line,
// so bytes JSON cannot carry, and control characters, are a refusal to
// sample, naming the field.
func TestCSVRefusesUnprintableText(t *testing.T) {
	for _, c := range []struct{ from, to, field string }{
		{"NVIDIA H100 80GB HBM3", "NVIDIA H100\xee", "name"},
		{"NVIDIA H100 80GB HBM3", "NVIDIA\x07H100", "name"},
		{"GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37", "GPU-\x7f", "uuid"},
		{"590.44.01", "590.44\u0080x", "driver_version"},
	} {
		line := strings.Replace(csvH100Busy, c.from, c.to, 1)
		_, err := ParseCSVLine(csvH100Fields, line)
		want := fmt.Sprintf("%s: nvidia-smi printed %q: want printable UTF-8 text", c.field, c.to)
		if err == nil || err.Error() != want {
			t.Errorf("%q: err %v, want %q", c.to, err, want)
		}
	}
}
