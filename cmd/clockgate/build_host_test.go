package main

import (
	"bytes"
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// TestBuildHostBlock: build recomputes the record's host block from the
// host stream beside the stream, as every other field (SPEC §12.2): a leg
// the sampler recorded with a host stream rebuilds to the host block the
// sampler wrote, and its check finds the block standing on its stream; a
// host stream that does not fold is named at its first bad line and no
// record is written; a leg without one rebuilds without a host block.
func TestBuildHostBlock(t *testing.T) {
	tools := newRecTools(t)
	l := tools.leg(t, nil)
	code, _, stderr := l.run("", "sample", "--out", l.prefix, "--interval", "100ms", "--backend", "nvidia-smi", "--max-duration", "1s")
	if code != 0 {
		t.Fatalf("sample: exit %d; stderr:\n%s", code, stderr)
	}
	sampled := l.readRecord(clocks.StopMaxDuration, 0.1)
	if sampled.Host == nil {
		t.Fatal("the sampler wrote no host block")
	}
	hostPath := clocks.HostStreamPath(l.stream())
	hostData, err := os.ReadFile(hostPath)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(l.record())
	if code, stdout, stderr := l.run("", "build", l.stream(), "--interval", "100ms", "-o", l.record()); code != 0 || stdout != "" {
		t.Fatalf("build: exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	rebuilt := l.readRecord(clocks.StopRebuilt, 0.1)
	a, _ := json.Marshal(sampled.Host)
	b, _ := json.Marshal(rebuilt.Host)
	if string(a) != string(b) {
		t.Fatalf("rebuilt host block\n%s\nthe sampler's\n%s", b, a)
	}
	if code, codes := l.checkCodes(); code != 1 || !contains(codes, clocks.CodePartialWindow) || contains(codes, clocks.CodeInvalid) {
		t.Errorf("check of the rebuilt record: exit %d, codes %v; want %s and no %s", code, codes, clocks.CodePartialWindow, clocks.CodeInvalid)
	}

	// A reading out of range on the host stream's third line.
	lines := bytes.SplitAfter(hostData, []byte("\n"))
	lines[2] = bytes.Replace(lines[2], []byte(`"cpu":{"busy":`), []byte(`"cpu":{"busy":1`), 1)
	if err := os.WriteFile(hostPath, bytes.Join(lines, nil), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Remove(l.record())
	code, _, stderr = l.run("", "build", l.stream(), "--interval", "100ms", "-o", l.record())
	if want := "r1.host.jsonl:3: cpu.busy: want a share from 0 to 1"; code != 1 || !strings.Contains(stderr, want) ||
		!strings.Contains(stderr, "restore the host stream the sampler wrote, or move it out of the tree to rebuild a record without a host block") {
		t.Errorf("build beside a bad host stream: exit %d, want 1 naming %q and what to do; stderr:\n%s", code, want, stderr)
	}
	if _, err := os.Stat(l.record()); err == nil {
		t.Error("a record was written beside a host stream that does not fold")
	}

	// No host stream: no host block.
	os.Remove(hostPath)
	if code, _, stderr := l.run("", "build", l.stream(), "--interval", "100ms", "-o", l.record()); code != 0 {
		t.Fatalf("build without a host stream: exit %d; stderr:\n%s", code, stderr)
	}
	if rec := l.readRecord(clocks.StopRebuilt, 0.1); rec.Host != nil {
		t.Errorf("a host block without a host stream: %+v", rec.Host)
	}
}
