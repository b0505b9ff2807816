package sampler

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// A prefix inside a clocks/ directory must be clocks/<model>/<engine>/r<N>
// (SPEC §12.1); one elsewhere is the user's to place.
func TestCheckTreePrefix(t *testing.T) {
	for _, tc := range []struct{ prefix, want string }{
		{"tree/clocks/llama/vllm/r1", ""},
		{"clocks/llama/vllm/r3", ""},
		{"/x/clocks/clocks/vllm/r2", ""},
		{"/tmp/leg", ""},
		{"leg", ""},
		{"/data/clockstore/leg1", ""},
		// One host's streams of a multi-host leg (SPEC §12.3).
		{"tree/clocks/llama/dynamo/r1/hosts/node1", ""},
		{"tree/clocks/llama/dynamo/r1/nodes/node1", "output prefix tree/clocks/llama/dynamo/r1/nodes/node1 is inside tree/clocks"},
		{"tree/clocks/llama/dynamo/leg/hosts/node1", "output prefix tree/clocks/llama/dynamo/leg/hosts/node1 is inside tree/clocks"},
		{"tree/clocks/meta-llama/Llama-3.1-8B-Instruct/vllm/r1",
			`invalid sampler configuration: output prefix tree/clocks/meta-llama/Llama-3.1-8B-Instruct/vllm/r1: the model id "meta-llama/Llama-3.1-8B-Instruct" holds a "/", which makes a directory of each part, and summarize would not find this leg: want tree/clocks/<model>/<engine>/r<N> (one path segment each, N a whole number from 1); give each model one path segment, e.g. tree/clocks/meta-llama--Llama-3.1-8B-Instruct/vllm/r1 (in bash: ${model//\//--}), under bench/, memory/ and clocks/ alike`},
		{"tree/clocks/llama/vllm/leg1",
			`invalid sampler configuration: output prefix tree/clocks/llama/vllm/leg1 is inside tree/clocks but is not tree/clocks/<model>/<engine>/r<N> (one path segment each, N a whole number from 1), so summarize would not find this leg; e.g. tree/clocks/llama/vllm/r1, or record it outside clocks/ and name its memory record with --memory-out FILE`},
		{"clocks/r1", `invalid sampler configuration: output prefix clocks/r1 is inside clocks but is not clocks/<model>/<engine>/r<N>`},
		{"tree/clocks/llama/vllm/r0", "output prefix tree/clocks/llama/vllm/r0 is inside tree/clocks"},
		{"/x/clocks/a/b/c/d/r1", "output prefix /x/clocks/a/b/c/d/r1 is inside /x/clocks"},
	} {
		err := CheckTreePrefix(tc.prefix)
		if tc.want == "" {
			if err != nil {
				t.Errorf("%s: %v", tc.prefix, err)
			}
			continue
		}
		if err == nil || !errors.Is(err, ErrConfig) || !strings.HasPrefix(err.Error(), tc.want) && !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v\nwant %s", tc.prefix, err, tc.want)
		}
	}
}

// New refuses such a prefix before it opens the backend or writes a file.
func TestNewRefusesTreePrefix(t *testing.T) {
	dir := t.TempDir()
	cfg := Config{Prefix: filepath.Join(dir, "clocks", "meta-llama", "Llama-3.1-8B-Instruct", "vllm", "r1"), Interval: time.Second}
	opened := false
	_, err := New(context.Background(), cfg, func(context.Context) (Backend, error) {
		opened = true
		return nil, errors.New("not reached")
	})
	if !errors.Is(err, ErrConfig) || opened {
		t.Fatalf("New: %v, backend opened %v", err, opened)
	}
	if ents, _ := os.ReadDir(dir); len(ents) != 0 {
		t.Errorf("written before the refusal: %v", ents)
	}
}
