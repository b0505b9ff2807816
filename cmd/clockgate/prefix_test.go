package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// record and sample refuse, at start, a prefix inside TREE/clocks/ that is
// not <model>/<engine>/r<N> (SPEC §12.1): exit 2 before the command runs
// and before anything is written, with the one-segment name to use.
func TestRecordSampleRefuseTreePrefix(t *testing.T) {
	for _, tc := range []struct {
		name, rel, want string
	}{
		{"model id with a slash", "clocks/meta-llama/Llama-3.1-8B-Instruct/vllm/r1",
			`/clocks/meta-llama/Llama-3.1-8B-Instruct/vllm/r1: the model id "meta-llama/Llama-3.1-8B-Instruct" holds a "/", which makes a directory of each part, and summarize would not find this leg: want `},
		{"leg not r<N>", "clocks/llama/vllm/leg1", "/clocks/llama/vllm/leg1 is inside "},
		{"no engine", "clocks/llama/r1", "/clocks/llama/r1 is inside "},
	} {
		for _, command := range []string{"record", "sample"} {
			t.Run(command+"/"+tc.name, func(t *testing.T) {
				dir := t.TempDir()
				prefix := filepath.Join(dir, filepath.FromSlash(tc.rel))
				marker := filepath.Join(dir, "ran")
				args := []string{command, "--out", prefix}
				if command == "record" {
					args = append(args, "--", "touch", marker)
				}
				var stdout, stderr bytes.Buffer
				code := Main(args, strings.NewReader(""), &stdout, &stderr)
				if code != ExitUsage || !strings.Contains(stderr.String(), tc.want) {
					t.Fatalf("exit %d, stderr %q; want exit %d and %q", code, stderr.String(), ExitUsage, tc.want)
				}
				if tc.name == "model id with a slash" && !strings.Contains(stderr.String(), "e.g. "+filepath.Join(dir, "clocks", "meta-llama--Llama-3.1-8B-Instruct", "vllm", "r1")) {
					t.Errorf("stderr %q does not name the one-segment prefix", stderr.String())
				}
				if ents, err := os.ReadDir(dir); err != nil || len(ents) != 0 {
					t.Errorf("written or run before the refusal: %v %v", ents, err)
				}
			})
		}
	}
}
