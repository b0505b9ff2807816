package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/summarize"
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

// TestMultiHostCheckReadsPoints: check DIR reads a multi-host leg's
// client marks (DIR/points.jsonl) as summarize does, so the same leg gets
// the same codes from both: a point the client marked a day after the leg
// is bench.outside_window in both.
func TestMultiHostCheckReadsPoints(t *testing.T) {
	tree := t.TempDir()
	if err := os.CopyFS(tree, os.DirFS("../../testdata/trees/multihost-aa")); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(tree, "clocks", "llama-3.1-8b-instruct", "dynamo", "r1")
	points := filepath.Join(dir, "points.jsonl")
	f, err := os.OpenFile(points, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	late := `{"point":"9/inf","event":"begin","t":"2026-08-13T11:00:00Z","host":"node1"}` + "\n" +
		`{"point":"9/inf","event":"end","t":"2026-08-13T11:01:00Z","exit":0,"host":"node1"}` + "\n"
	if _, err := f.WriteString(late); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	const want = "point 9/inf ran 2026-08-13T11:00:00.000Z to 2026-08-13T11:01:00.000Z (its clockgate mark, in UTC), outside the leg's clock window"
	code, stdout, stderr := runMain("check", dir)
	if code != ExitFailed || !strings.Contains(stdout, "bench.outside_window") || !strings.Contains(stdout, want) {
		t.Fatalf("check DIR with a mark after the leg: exit %d, want bench.outside_window %q\n%s%s", code, want, stdout, stderr)
	}
	s, err := summarize.Summarize(tree, summarize.Options{Baseline: "dynamo"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, l := range s.Legs {
		if l.Engine == "dynamo" && l.Run == 1 {
			for _, r := range l.Reasons {
				if r.Code == "bench.outside_window" && strings.Contains(r.Message, want) {
					got = append(got, r.Code)
				}
			}
		}
	}
	if n := strings.Count(stdout, want); n != 3 || len(got) != n {
		t.Fatalf("the late mark: check gives %d bench.outside_window (want one per host, 3), summarize %d", n, len(got))
	}
}
