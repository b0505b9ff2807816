package summarize

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// These tests pin the edges that mutation testing (scripts/gremlins.sh)
// showed no other test held.

// TestBenchLinesAcrossBlankLines: a multi-object file's line numbers count
// the blank lines between objects.
func TestBenchLinesAcrossBlankLines(t *testing.T) {
	data := validPoint + "\n\n\n" + pointWith("max_concurrency", "0") + "\n"
	points, invalid, _ := pb(fuzzRel, []byte(data))
	want := fuzzRel + ":4: max_concurrency: want an integer from 1 to 2^40 (1099511627776) or null (no bound), found number 0; " + hintRerun
	if len(points) != 1 || !slices.Equal(invalid, []string{want}) {
		t.Fatalf("points %d, invalid %q; want 1 and %q", len(points), invalid, want)
	}
}

// TestBenchLinesAcrossAPrettyObject: the lines inside a multi-line object
// count toward the next object's line.
func TestBenchLinesAcrossAPrettyObject(t *testing.T) {
	pretty := strings.ReplaceAll(validPoint, ", ", ",\n  ")
	next := 1 + strings.Count(pretty, "\n") + 1
	_, invalid, _ := pb(fuzzRel, []byte(pretty+"\n"+pointWith("max_concurrency", "0")))
	want := fmt.Sprintf("%s:%d: max_concurrency: want an integer from 1 to 2^40 (1099511627776) or null (no bound), found number 0; %s", fuzzRel, next, hintRerun)
	if next != 11 || !slices.Equal(invalid, []string{want}) {
		t.Fatalf("invalid %q, want [%q]", invalid, want)
	}
}

// TestMemorySyntaxErrorLine: a syntax error names its own line, not the
// file's last.
func TestMemorySyntaxErrorLine(t *testing.T) {
	const rel = "memory/m/e/r1.summary.json"
	_, msg := parseMemory(rel, []byte("{\"peak_gpu_memory_mib\": NaN,\n \"n\": 1\n}\n"))
	if want := rel + ":1: unexpected 'N': NaN and Infinity are not JSON numbers; " + hintMemSyntax; msg != want {
		t.Fatalf("message %q, want %q", msg, want)
	}
}

// TestZeroThroughputWithNothingToShow: output_throughput 0 is a valid
// reading when no request completed or no token came out.
func TestZeroThroughputWithNothingToShow(t *testing.T) {
	for name, data := range map[string]string{
		"no request completed": strings.Replace(pointWith("output_throughput", "0"), `"completed": 6`, `"completed": 0`, 1),
		"no output token":      strings.Replace(pointWith("output_throughput", "0"), `"total_output_tokens": 768`, `"total_output_tokens": 0`, 1),
	} {
		points, invalid, _ := pb(fuzzRel, []byte(data))
		if len(points) != 1 || len(invalid) != 0 {
			t.Errorf("%s: points %d, invalid %q; want the point", name, len(points), invalid)
		}
	}
}

// TestIntegerCeilings: counts up to 2^40 are read, larger ones refused.
func TestIntegerCeilings(t *testing.T) {
	const max, over = "1099511627776", "1099511627777"
	if ps, inv, _ := pb(fuzzRel, []byte(pointWith("num_prompts", max))); len(ps) != 1 || len(inv) != 0 {
		t.Errorf("num_prompts 2^40: %q", inv)
	}
	_, inv, _ := pb(fuzzRel, []byte(pointWith("num_prompts", over)))
	if want := fuzzRel + ": num_prompts: want an integer from 0 to 2^40 (1099511627776), found number " + over + "; " + hintRerun; !slices.Equal(inv, []string{want}) {
		t.Errorf("num_prompts 2^40+1: %q, want %q", inv, want)
	}
	if ps, inv, _ := pb(fuzzRel, []byte(pointWith("max_concurrency", max))); len(ps) != 1 || len(inv) != 0 {
		t.Errorf("max_concurrency 2^40: %q", inv)
	}
	_, inv, _ = pb(fuzzRel, []byte(pointWith("max_concurrency", over)))
	if want := fuzzRel + ": max_concurrency: want an integer from 1 to 2^40 (1099511627776) or null (no bound), found number " + over + "; " + hintRerun; !slices.Equal(inv, []string{want}) {
		t.Errorf("max_concurrency 2^40+1: %q, want %q", inv, want)
	}
	const rel = "memory/m/e/r1.summary.json"
	if m, msg := parseMemory(rel, []byte(`{"peak_gpu_memory_mib": 1.5, "n": `+max+`}`)); m == nil {
		t.Errorf("n 2^40: %s", msg)
	}
	if _, msg := parseMemory(rel, []byte(`{"peak_gpu_memory_mib": 1.5, "n": `+over+`}`)); msg != rel+": n: want an integer from 1 to 2^40 (1099511627776), found number "+over+"; "+hintMemValue {
		t.Errorf("n 2^40+1: %q", msg)
	}
	if n, ok := runNumber("r1073741824"); !ok || n != 1<<30 {
		t.Errorf("r2^30: %d %v", n, ok)
	}
	if _, ok := runNumber("r1073741825"); ok {
		t.Error("r2^30+1 read as a run")
	}
}

// TestHostRSSZero: peak_host_rss_mib may be 0; below is refused.
func TestHostRSSZero(t *testing.T) {
	const rel = "memory/m/e/r1.summary.json"
	if m, msg := parseMemory(rel, []byte(`{"peak_gpu_memory_mib": 1.5, "peak_host_rss_mib": 0, "n": 3}`)); m == nil {
		t.Errorf("peak_host_rss_mib 0: %s", msg)
	}
	if _, msg := parseMemory(rel, []byte(`{"peak_gpu_memory_mib": 1.5, "peak_host_rss_mib": -0.5, "n": 3}`)); msg != rel+": peak_host_rss_mib: want a finite number ≥ 0 MiB, or null where not recorded, found number -0.5; "+hintMemValue {
		t.Errorf("peak_host_rss_mib -0.5: %q", msg)
	}
}

// TestProgressCountsEveryLegAndStreamByte: the last report says every leg
// and every stream byte is read.
func TestProgressCountsEveryLegAndStreamByte(t *testing.T) {
	root := filepath.Join("..", "testdata", "trees", "clean-grid")
	var want int64
	streams, _ := filepath.Glob(filepath.Join(root, "clocks", "*", "*", "*.samples.jsonl"))
	for _, p := range streams {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		want += st.Size()
	}
	var last Progress
	calls := 0
	if _, err := Summarize(root, Options{Baseline: "vllm", Progress: func(p Progress) { last = p; calls++ }}); err != nil {
		t.Fatal(err)
	}
	if want == 0 || calls != 8 || last != (Progress{LegsDone: 8, LegsTotal: 8, BytesDone: want, BytesTotal: want}) {
		t.Fatalf("%d calls, last %+v; want 8, all 8 legs and %d bytes", calls, last, want)
	}
}
