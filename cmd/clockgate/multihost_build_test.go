package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestMultiHostCheckAndBuild: check DIR judges a multi-host leg of a
// scenario tree (multihost-aa's, eligible); build documents a host whose
// sampler left no record from DIR/hosts/<host>.samples.jsonl, and the leg
// it makes is still not eligible: the rebuilt record says where the window
// ended is unknown (clock.partial_window) and carries no time sync
// (clock.host_skew), each naming the host.
func TestMultiHostCheckAndBuild(t *testing.T) {
	tree := t.TempDir()
	if err := os.CopyFS(tree, os.DirFS("../../testdata/trees/multihost-aa")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tree, "clocks", "llama-3.1-8b-instruct", "dynamo", "r1")
	if code, stdout, stderr := runMain("check", dir); code != 0 {
		t.Fatalf("check DIR: exit %d\n%s%s", code, stdout, stderr)
	}
	rec := filepath.Join(dir, "hosts", "node2.summary.json")
	if err := os.Remove(rec); err != nil {
		t.Fatal(err)
	}
	code, stdout, _ := runMain("check", dir)
	if code != ExitFailed || !strings.Contains(stdout, "clock.host_missing: host node2 (rank 2 of 3 in leg.json) has no record") {
		t.Fatalf("check DIR without node2's record: exit %d\n%s", code, stdout)
	}
	if code, stdout, stderr := runMain("build", filepath.Join(dir, "hosts", "node2.samples.jsonl"), "-o", rec); code != 0 {
		t.Fatalf("build: exit %d\n%s%s", code, stdout, stderr)
	}
	code, stdout, _ = runMain("check", dir)
	for _, want := range []string{"clock.partial_window: host node2: stop_reason rebuilt", "clock.host_skew: host node2: its record has no time_sync"} {
		if code != ExitFailed || !strings.Contains(stdout, want) {
			t.Fatalf("check DIR after build: exit %d, want %q:\n%s", code, want, stdout)
		}
	}
}
