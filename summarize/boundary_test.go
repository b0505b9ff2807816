package summarize

import (
	"os"
	"path/filepath"
	"testing"
)

// These tests pin the edges that mutation testing (scripts/gremlins.sh)
// showed no other test held.

// TestMemorySyntaxErrorLine: a syntax error names its own line, not the
// file's last.
func TestMemorySyntaxErrorLine(t *testing.T) {
	const rel = "memory/m/e/r1.summary.json"
	_, msg := parseMemory(rel, []byte("{\"peak_gpu_memory_mib\": NaN,\n \"n\": 1\n}\n"))
	if want := rel + ":1: unexpected 'N': NaN and Infinity are not JSON numbers; " + hintMemSyntax; msg != want {
		t.Fatalf("message %q, want %q", msg, want)
	}
}

// TestIntegerCeilings: counts up to 2^40 are read, larger ones refused.
func TestIntegerCeilings(t *testing.T) {
	const max, over = "1099511627776", "1099511627777"
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
