package clocks

import (
	"bytes"
	"os"
	"testing"
)

// realLeg judges a real capture converted to a stream
// (testdata/smi-real/<name>/r1.samples.jsonl, each with its SOURCE.md),
// with the record its stream recomputes to at interval s; edit, when set,
// changes each sample before (a limit a user would have recorded).
func realLeg(t *testing.T, name string, interval float64, edit func(*Sample)) *Leg {
	t.Helper()
	raw, err := os.ReadFile("../testdata/smi-real/" + name + "/r1.samples.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	ss, err := readerStream(raw)
	if err != nil {
		t.Fatal(err)
	}
	if edit != nil {
		for _, s := range ss {
			edit(s)
		}
	}
	f := NewFold()
	for i, s := range ss {
		f.Add(s, i+1)
	}
	rec, err := f.Record(interval, StopPIDExit)
	if err != nil {
		t.Fatal(err)
	}
	return JudgeLeg(name, recordJSON(t, rec), bytes.NewReader(streamOf(ss)), nil)
}

// Real captures of vLLM serving, whose streams record no limit: they keep
// the verdicts of §1–§9, and recording the limit changes nothing where no
// sample was power-managed (free = busy).
func TestRealCapturesWithoutPowerManagement(t *testing.T) {
	// H100, vLLM 0.10.1.1, Qwen3-8B, 250 ms: 1530-1830 MHz, 16.39%, no bit.
	l := realLeg(t, "h100-vllm-qwen3-8b-tp1", 0.25, nil)
	wantCodes(t, l.Reasons, CodeSpread)
	wantReason(t, l.Reasons, CodeSpread, "spread 16.39% > 5.0%: min 1530, median 1830, max 1830 MHz, n=205")
	l = realLeg(t, "h100-vllm-qwen3-8b-tp1", 0.25, func(s *Sample) { s.EnforcedPowerLimitW = ptr(700.0) })
	wantCodes(t, l.Reasons, CodeSpread)
	wantReason(t, l.Reasons, CodeSpread, "spread 16.39% > 5.0%: min 1530, median 1830, max 1830 MHz, n=205")
	if fs := l.Record.GPUs[0].FreeClockMHz; fs.N != 205 || *l.Record.GPUs[0].PowerManagedSamples != 0 {
		t.Fatalf("free %+v", fs)
	}
	// A100, rate 2.5: 1395-1410 MHz, 1.06%: clean.
	wantCodes(t, realLeg(t, "a100-vllm-qwen3-8b-tp1", 0.25, nil).Reasons)
	// Two H100s of a TP=2 leg, a 20 s window: flat 1830 MHz on each.
	l = realLeg(t, "h100-vllm-qwen3-30b-tp2-window", 0.25, nil)
	if len(l.Fold.GPUs) != 2 {
		t.Fatalf("%d GPUs", len(l.Fold.GPUs))
	}
	wantNoCode(t, l.Reasons, CodeSpread)
	wantNoCode(t, l.Reasons, CodeGPUSkew)
}

// A real H100 on driver 590.48.01 answers the limit and every counter:
// read, recorded and reconciled (two snapshots, one busy: under the
// floor, and far apart).
func TestRealH100On590RecordsTheLimitAndCounters(t *testing.T) {
	l := realLeg(t, "h100-590-query-gpu-idle-load", 1, nil)
	wantCodes(t, l.Reasons, CodeBusySamples, CodeCoverage) // two snapshots 14.657 s apart
	g := l.Fold.GPUs[0]
	if g.Managed == nil || g.Managed.LimitW != 700 || g.Events == nil || g.PowerManaged() != 0 {
		t.Fatalf("managed %+v events %+v", g.Managed, g.Events)
	}
	if r := l.Record.GPUs[0]; *r.EnforcedPowerLimitW != 700 || r.FreeClockMHz.N != 1 {
		t.Fatalf("record %+v", r)
	}
}
