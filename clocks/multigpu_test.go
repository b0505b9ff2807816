package clocks

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// tpUUID is GPU i's uuid on the test box.
func tpUUID(i int) string { return fmt.Sprintf("GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5%02d", i) }

// tpWindow is a tensor-parallel window on boot: for each tick, one H100
// row per GPU at the tick's time, GPU g at mhz(g, tick), all busy.
func tpWindow(boot string, gpus, ticks int, mhz func(g, tick int) int) []*Sample {
	var out []*Sample
	for i := range ticks {
		for g := range gpus {
			s := h100(i, boot, mhz(g, i), 97)
			s.GPUIndex, s.GPUUUID = g, tpUUID(g)
			out = append(out, s)
		}
	}
	return out
}

// flatTP is a TP window of 50 ticks, GPU g flat at clocks[g].
func flatTP(boot string, clocks ...int) []*Sample {
	return tpWindow(boot, len(clocks), 50, func(g, _ int) int { return clocks[g] })
}

func TestSeveralGPURecordLayout(t *testing.T) {
	ss := flatTP(boot13, 1980, 1975, 1980, 1970)
	rec := recordOf(t, ss, StopPIDExit)
	if len(rec.GPUs) != 4 {
		t.Fatalf("%d GPU blocks, want 4", len(rec.GPUs))
	}
	data := recordJSON(t, rec)
	var m map[string]json.RawMessage
	if err := json.Unmarshal(data, &m); err != nil {
		t.Fatal(err)
	}
	if _, ok := m["gpus"]; !ok || m["sm_clock_mhz"] != nil || m["gpu_uuid"] != nil {
		t.Fatalf("several GPUs want the gpus layout, got %s", data)
	}
	for k, g := range rec.GPUs {
		if g.Index == nil || *g.Index != k || g.UUID != tpUUID(k) {
			t.Fatalf("block %d: index %v uuid %s", k, g.Index, g.UUID)
		}
	}
	back, err := ParseRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	if again := recordJSON(t, back); !bytes.Equal(again, data) {
		t.Fatalf("round trip:\n%s\n%s", data, again)
	}
	l := JudgeLeg("r1", data, bytes.NewReader(streamOf(ss)), nil)
	if !l.Eligible() {
		t.Fatalf("a clean TP=4 leg: %+v", l.Reasons)
	}

	// One GPU named by index 0 keeps the single layout, byte for byte what
	// a single-GPU leg always wrote.
	one := recordJSON(t, recordOf(t, h100Window(boot13, 1980), StopPIDExit))
	if bytes.Contains(one, []byte(`"gpus"`)) || !bytes.HasPrefix(one, []byte(`{"boot_id":"`+boot13+`","sm_clock_mhz":`)) {
		t.Fatalf("single GPU record %s", one)
	}
}

// A record whose GPU blocks are not the stream's GPUs is a mismatch,
// naming the GPU; one that drops a GPU's block does not add up.
func TestSeveralGPURecordReconciledPerGPU(t *testing.T) {
	ss := flatTP(boot13, 1980, 1975)
	l := legOf(t, "r1", ss, func(r *Record) { r.GPUs[1].UUID = tpUUID(7) })
	wantCodes(t, l.Reasons, CodeStreamMismatch)
	wantReason(t, l.Reasons, CodeStreamMismatch, "GPU 1 ", tpUUID(7), tpUUID(1))
	l = legOf(t, "r1", ss, func(r *Record) { r.GPUs = r.GPUs[:1] })
	wantCodes(t, l.Reasons, CodeInvalid)
	wantReason(t, l.Reasons, CodeInvalid, "window.samples_total: 100, but sm_clock_mhz.n 50 + idle_samples_excluded 0 = 50")
}

// clock.gpu_skew at the offset threshold, exactly, with the slow GPU at
// either end of the leg.
func TestGPUSkewThreshold(t *testing.T) {
	for _, tc := range []struct {
		name   string
		clocks []int
		fail   string
	}{
		{"equal", []int{2000, 2000, 2000, 2000}, ""},
		{"at 1.0%", []int{2020, 2010, 2000, 2020}, ""},
		{"just over, slow last", []int{2021, 2010, 2015, 2000},
			"GPU busy medians differ by 1.05% > 1.0%: GPU 3 at 2000 MHz (the slowest), GPU 0 at 2021 MHz"},
		{"just over, slow first", []int{2000, 2021, 2010, 2010},
			"GPU busy medians differ by 1.05% > 1.0%: GPU 0 at 2000 MHz (the slowest), GPU 1 at 2021 MHz"},
		{"TP=8, one slow GPU", []int{1980, 1980, 1980, 1980, 1980, 1950, 1980, 1980},
			"GPU busy medians differ by 1.54% > 1.0%: GPU 5 at 1950 MHz (the slowest), GPU 0 at 1980 MHz; a tensor-parallel step runs at its slowest GPU's pace"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := legOf(t, "r1", flatTP(boot13, tc.clocks...), nil)
			if tc.fail == "" {
				wantCodes(t, l.Reasons)
				return
			}
			wantCodes(t, l.Reasons, CodeGPUSkew)
			wantReason(t, l.Reasons, CodeGPUSkew, tc.fail)
			if l.Reasons[0].Scope != ScopeLeg || l.Eligible() {
				t.Fatalf("reason %+v", l.Reasons[0])
			}
		})
	}
}

// A GPU under the busy floor has no median to skew against: its own
// reason says why, and the skew is not made up from it.
func TestGPUSkewSkipsGPUsUnderTheFloor(t *testing.T) {
	ss := tpWindow(boot13, 2, 50, func(g, tick int) int { return 2000 - 100*g })
	for _, s := range ss {
		if s.GPUIndex == 1 && s.T > ss[2*25].T {
			s.UtilizationGPUPct = 0
		}
	}
	l := legOf(t, "r1", ss, nil)
	wantNoCode(t, l.Reasons, CodeGPUSkew)
	wantReason(t, l.Reasons, CodeBusySamples, "GPU 1: busy samples 26 < 30")
}

// Every leg check runs per GPU and names the GPU; the others stay quiet.
func TestLegChecksNameTheGPU(t *testing.T) {
	ss := flatTP(boot13, 1980, 1980, 1980, 1980)
	for _, s := range ss {
		if s.GPUIndex == 2 {
			s.ThrottleReasonsActive = "0x0000000000000004"
		}
		if s.GPUIndex == 3 && s.T == ss[0].T {
			s.PersistenceMode = "Disabled"
		}
	}
	l := legOf(t, "r1", ss, nil)
	wantCodes(t, l.Reasons, CodeThrottle, CodePersistence)
	wantReason(t, l.Reasons, CodeThrottle, "GPU 2: non-benign throttle bits in busy samples: 0x0000000000000004 SwPowerCap")
	wantReason(t, l.Reasons, CodePersistence, "GPU 3: persistence_mode \"Disabled\" in 1 of 50 samples")

	// The spread of one GPU, not of the leg's GPUs together.
	ss = tpWindow(boot13, 2, 60, func(g, tick int) int {
		if g == 1 && tick == 0 {
			return 1870
		}
		return 1980
	})
	l = legOf(t, "r1", ss, nil)
	wantCodes(t, l.Reasons, CodeSpread)
	wantReason(t, l.Reasons, CodeSpread, "GPU 1: spread 5.56% > 5.0%: min 1870, median 1980, max 1980 MHz, n=60")
}

// Legs of one arm must sample the same GPUs: another set, or the same
// count of other GPUs, is clock.static_mismatch, with the bad leg first
// or last.
func TestArmLegsOnOtherGPUs(t *testing.T) {
	four := flatTP(boot13, 1980, 1980, 1980, 1980)
	two := flatTP(boot13, 1980, 1980)
	moved := flatTP(boot13, 1980, 1980, 1980, 1980)
	for _, s := range moved {
		s.GPUIndex += 4
		s.GPUUUID = tpUUID(s.GPUIndex)
	}
	for name, legs := range map[string][][]*Sample{
		"fewer GPUs last":   {four, four, two},
		"fewer GPUs first":  {two, four},
		"other uuids last":  {four, moved},
		"other uuids first": {moved, four, four},
	} {
		t.Run(name, func(t *testing.T) {
			a := arm(t, "ours", false, legs...)
			wantCodes(t, a.Reasons, CodeStaticMismatch)
			wantReason(t, a.Reasons, CodeStaticMismatch, "arm ours legs sample different GPUs: ", "want every leg of an arm on the same GPUs")
			b := Compare(a, arm(t, "vllm", false, four), false)
			if b.Established {
				t.Fatal("an arm on two GPU sets established a ratio")
			}
			b = Compare(arm(t, "vllm", false, four), a, false)
			if b.Established {
				t.Fatal("a baseline arm on two GPU sets established a ratio")
			}
		})
	}
	a := arm(t, "ours", false, four, four)
	wantCodes(t, a.Reasons)
}

// The staircase runs per GPU position: one GPU that steps between legs
// is found even when the others hold.
func TestStaircasePerGPU(t *testing.T) {
	a := arm(t, "ours", false, flatTP(boot13, 1980, 1980, 1980), flatTP(boot13, 1980, 1880, 1980))
	wantCodes(t, a.Reasons, CodeStaircase)
	wantReason(t, a.Reasons, CodeStaircase, "arm ours GPU position 1 (GPU 1): merged spread 5.18% > 5.0%: min 1880, median 1930, max 1980 MHz over 2 legs")
	a = arm(t, "ours", false, flatTP(boot13, 1980, 1980, 1980), flatTP(boot13, 1980, 1890, 1980))
	wantCodes(t, a.Reasons)
}

// Ratios need the same GPU count and per-position hardware.
func TestHardwareMismatchPerPosition(t *testing.T) {
	four, two := flatTP(boot13, 1980, 1980, 1980, 1980), flatTP(boot13, 1980, 1980)
	for _, sides := range [][2][]*Sample{{four, two}, {two, four}} {
		b := Compare(arm(t, "ours", false, sides[0]), arm(t, "vllm", false, sides[1]), false)
		wantReason(t, b.Reasons, CodeHardwareMismatch, "arms are not on one machine: ours samples ")
		if b.Established {
			t.Fatal("4 GPUs against 2 established")
		}
	}
	other := flatTP(boot13, 1980, 1980, 1980, 1980)
	for _, s := range other {
		if s.GPUIndex == 2 {
			s.GPUName = "NVIDIA H200"
		}
	}
	for _, sides := range [][2][]*Sample{{four, other}, {other, four}} {
		b := Compare(arm(t, "ours", false, sides[0]), arm(t, "vllm", false, sides[1]), false)
		wantCodes(t, b.Reasons, CodeHardwareMismatch)
		wantReason(t, b.Reasons, CodeHardwareMismatch, "GPU position 2 (GPU 2): gpu_name: ")
	}
}

// The offset is taken per GPU position and the worst one gated, with the
// slow GPU in either arm.
func TestOffsetPerGPUPosition(t *testing.T) {
	// Each leg's GPUs within 1.0% of each other (no clock.gpu_skew); GPU 3
	// of ours 1.51% under GPU 3 of the baseline.
	fast := flatTP(boot13, 1980, 1980, 1980, 1992)
	slow3 := flatTP(boot13, 1980, 1980, 1975, 1962)
	b := Compare(arm(t, "ours", false, slow3), arm(t, "vllm", false, fast), false)
	wantCodes(t, b.Reasons, CodeOffset)
	wantReason(t, b.Reasons, CodeOffset, "GPU position 3 (GPU 3): median offset 1.51% > 1.0%: ours 1962 MHz, vllm 1992 MHz")
	if *b.OffsetPct != 1.51 || len(b.GPUOffsets) != 4 || *b.GPUOffsets[3].OffsetPct != 1.51 || *b.GPUOffsets[0].OffsetPct != 0 ||
		*b.GPUOffsets[2].OffsetPct != 0.25 {
		t.Fatalf("offset %v, per GPU %+v", *b.OffsetPct, b.GPUOffsets)
	}
	b = Compare(arm(t, "ours", false, fast), arm(t, "vllm", false, slow3), false)
	wantCodes(t, b.Reasons, CodeOffset)
	wantReason(t, b.Reasons, CodeOffset, "GPU position 3 (GPU 3): median offset 1.53% > 1.0%: ours 1992 MHz, vllm 1962 MHz")

	// Within the threshold at every position: established, the worst named.
	near := flatTP(boot13, 1980, 1980, 1961, 1980) // 0.96% at GPU 2
	b = Compare(arm(t, "ours", false, near), arm(t, "vllm", false, flatTP(boot13, 1980, 1980, 1980, 1980)), false)
	if !b.Established || *b.OffsetPct != 0.96 {
		t.Fatalf("%+v offset %v", b.Reasons, *b.OffsetPct)
	}
}

// meanDips is a single-GPU window of 50 busy samples: 30 at 2000 MHz and
// 20 at dip, so the median is 2000 and the mean (60000 + 20·dip) / 50.
func meanDips(dip int) []*Sample {
	return window(boot13, append(flat(2000, 30), flat(dip, 20)...), 0)
}

// The offset rule holds for the mean of busy samples too, exactly at the
// threshold, with the dipping arm on either side; the message says the
// medians agree.
func TestMeanOffsetThreshold(t *testing.T) {
	base := flatWindow(boot13, 2000)
	for _, tc := range []struct {
		name       string
		ours, base []*Sample
		fail       string
	}{
		// ours mean 1980.00: exactly 1.0% under 2000.
		{"ours at 1.0%", meanDips(1950), base, ""},
		{"ours just over", meanDips(1949), base,
			"mean offset 1.02% > 1.0%: ours 1979.60 MHz, vllm 2000.00 MHz, though the medians agree (ours 2000 MHz, vllm 2000 MHz, offset 0.00%)"},
		// baseline mean 1980.40: 19.6/1980.4 = 0.99%.
		{"baseline within", base, meanDips(1951), ""},
		// baseline mean 1980.00: 20/1980 = 1.01%.
		{"baseline just over", base, meanDips(1950),
			"mean offset 1.01% > 1.0%: ours 2000.00 MHz, vllm 1980.00 MHz, though the medians agree"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Compare(arm(t, "ours", false, tc.ours), arm(t, "vllm", false, tc.base), false)
			if *b.OffsetPct != 0 {
				t.Fatalf("median offset %v, want 0", *b.OffsetPct)
			}
			if tc.fail == "" {
				wantCodes(t, b.Reasons)
				if !b.Established {
					t.Fatal("not established within the mean threshold")
				}
				return
			}
			wantCodes(t, b.Reasons, CodeOffset)
			wantReason(t, b.Reasons, CodeOffset, tc.fail)
			if b.Established {
				t.Fatal("established over the mean threshold")
			}
		})
	}
}

// When both statistics fail, one clock.offset names the median and adds
// the mean; when only the median fails, the mean is not claimed.
func TestOffsetMessageNamesTheStatistic(t *testing.T) {
	b := crossBootPair(t, true)
	wantReason(t, b.Reasons, CodeOffset, "median offset 12.79% > 1.0%", "; the mean offset ")
	// Medians 1.05% apart, means within: ours 2021 median, mean pulled to 2000.
	ours := window(boot13, append(flat(2021, 26), flat(1977, 25)...), 0) // mean 1999.43
	b = Compare(arm(t, "ours", false, ours), arm(t, "vllm", false, flatWindow(boot13, 2000)), false)
	wantCodes(t, b.Reasons, CodeOffset)
	wantReason(t, b.Reasons, CodeOffset, "median offset 1.05% > 1.0%: ours 2021 MHz, vllm 2000 MHz")
	if strings.Contains(b.Reasons[0].Message, "mean offset") {
		t.Fatalf("the mean is within, yet the message %q names it", b.Reasons[0].Message)
	}
}

// Power is reported per arm and per GPU, and never a gate term: arms at
// one clock but very different power draw stay established, with no
// reason, and the same numbers give the same verdict whatever the power.
func TestPowerNeverGates(t *testing.T) {
	withPower := func(ss []*Sample, w float64) []*Sample {
		out := make([]*Sample, len(ss))
		for i, s := range ss {
			c := *s
			p := w + float64(i%3)
			c.PowerDrawW = &p
			out[i] = &c
		}
		return out
	}
	for _, tc := range []struct {
		name     string
		ours     []*Sample
		verdict  bool
		oursW    float64
		baseline []*Sample
	}{
		{"single GPU", withPower(flatWindow(boot13, 2418), 41.5), true, 42.5, withPower(flatWindow(boot13, 2418), 12)},
		{"TP=4", withPower(flatTP(boot13, 1980, 1980, 1980, 1980), 690), true, 691, withPower(flatTP(boot13, 1980, 1980, 1980, 1980), 120)},
		{"offset stands", withPower(flatWindow(boot13, 2100), 41.5), false, 42.5, withPower(flatWindow(boot13, 2000), 41.5)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b := Compare(arm(t, "ours", false, tc.ours), arm(t, "vllm", false, tc.baseline), false)
			plain := Compare(arm(t, "ours", false, stripPower(tc.ours)), arm(t, "vllm", false, stripPower(tc.baseline)), false)
			if b.Established != tc.verdict || plain.Established != tc.verdict {
				t.Fatalf("established %v / without power %v, want %v: %+v", b.Established, plain.Established, tc.verdict, b.Reasons)
			}
			if fmt.Sprint(Codes(b.Reasons)) != fmt.Sprint(Codes(plain.Reasons)) {
				t.Fatalf("power changed the reasons: %v against %v", Codes(b.Reasons), Codes(plain.Reasons))
			}
			if b.Ours.PowerW == nil || *b.Ours.PowerW != tc.oursW || plain.Ours.PowerW != nil {
				t.Fatalf("power %v, without %v", b.Ours.PowerW, plain.Ours.PowerW)
			}
			if len(b.Ours.GPUs) > 0 && (b.Ours.GPUs[0].PowerW == nil || *b.Ours.GPUs[0].PowerW != tc.oursW) {
				t.Fatalf("GPU 0 power %v", b.Ours.GPUs[0].PowerW)
			}
		})
	}
}

func stripPower(ss []*Sample) []*Sample {
	out := make([]*Sample, len(ss))
	for i, s := range ss {
		c := *s
		c.PowerDrawW = nil
		out[i] = &c
	}
	return out
}

// Coverage runs per GPU: a GPU left out of some ticks went unread for
// that long, inside the window or at either end of it, though every tick
// has rows of the other GPUs.
func TestCoveragePerGPU(t *testing.T) {
	without := func(gpu int, skip func(tick int) bool) []*Sample {
		var out []*Sample
		for i, s := range flatTP(boot13, 1980, 1980, 1980, 1980) {
			if s.GPUIndex != gpu || !skip(i/4) {
				out = append(out, s)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name string
		ss   []*Sample
		want string
	}{
		{"inside", without(2, func(k int) bool { return k >= 10 && k < 14 }),
			"GPU 2: largest gap between samples 5.000 s > 3 × interval_s 1 s = 3.000 s: from 2026-08-12T10:15:12.123Z to 2026-08-12T10:15:17.123Z (line"},
		{"at the end", without(3, func(k int) bool { return k >= 46 }),
			"GPU 3: largest gap between samples 4.000 s > 3 × interval_s 1 s = 3.000 s: from 2026-08-12T10:15:48.123Z to 2026-08-12T10:15:52.123Z (line 196)"},
		{"at the start", without(0, func(k int) bool { return k < 4 }),
			"GPU 0: largest gap between samples 4.000 s > 3 × interval_s 1 s = 3.000 s: from 2026-08-12T10:15:03.123Z to 2026-08-12T10:15:07.123Z (line 13)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := legOf(t, "r1", tc.ss, nil)
			wantCodes(t, l.Reasons, CodeCoverage)
			wantReason(t, l.Reasons, CodeCoverage, tc.want)
			if *l.Record.Window.MaxGapS < 4 {
				t.Fatalf("max_gap_s %v", *l.Record.Window.MaxGapS)
			}
		})
	}
	// Two ticks missing leave 3 s unread: exactly the limit.
	l := legOf(t, "r1", without(2, func(k int) bool { return k == 20 || k == 21 }), nil)
	wantCodes(t, l.Reasons)
	if *l.Record.Window.MaxGapS != 3 {
		t.Fatalf("max_gap_s %v, want 3", *l.Record.Window.MaxGapS)
	}
}

// A record's interval_s is held to the stream's spacing: a sampler reads
// every interval or slower, so a longer interval than the samples' mean
// spacing allows (110%) is an edit that would loosen coverage. Exactly at
// the bound it reconciles.
func TestIntervalHeldToTheSpacing(t *testing.T) {
	ss := cleanWindow(boot13) // 64 samples 1 s apart: 63 gaps over 63 s
	for _, tc := range []struct {
		interval float64
		fail     string
	}{
		{1, ""},
		{1.1, ""},
		{0.25, ""},
		{1.100001, "window.interval_s: record 1.100001 s, but the stream's samples are 1.000 s apart on average (64 samples from 2026-08-12T10:15:03.123Z to 2026-08-12T10:16:06.123Z), and an interval over 110% of that is not the one they were read at"},
		{3600, "window.interval_s: record 3600 s"},
	} {
		l := legOf(t, "r1", ss, func(r *Record) { r.Window.IntervalS = tc.interval })
		if tc.fail == "" {
			wantNoCode(t, l.Reasons, CodeStreamMismatch)
			continue
		}
		wantCodes(t, l.Reasons, CodeStreamMismatch)
		wantReason(t, l.Reasons, CodeStreamMismatch, tc.fail)
	}
	// Several GPUs: each GPU's own spacing, named.
	tp := flatTP(boot13, 1980, 1980)
	l := legOf(t, "r1", tp, func(r *Record) { r.Window.IntervalS = 2 })
	wantCodes(t, l.Reasons, CodeStreamMismatch)
	wantReason(t, l.Reasons, CodeStreamMismatch, "but GPU 0's samples are 1.000 s apart on average (50 samples")
}

// TestPowerCountsEveryValue: power read from a stream is counted exactly,
// whether a value falls in the counting array (10 mW steps near the
// first) or not (a third decimal, or far from the first), and the list is
// sorted; a fold of the same samples one by one says the same.
func TestPowerCountsEveryValue(t *testing.T) {
	watts := []float64{41.52, 41.525, 41.52, 700.01, 0.5, 41.53, 41.525, 205.0, 41.52, 1.234}
	var ss []*Sample
	for i, w := range watts {
		s := h100(i, boot13, 1980, 97)
		s.PowerDrawW = &w
		ss = append(ss, s)
	}
	f, err := FoldStream(bytes.NewReader(streamOf(ss)))
	if err != nil {
		t.Fatal(err)
	}
	want := []PowerCount{{500, 1}, {1234, 1}, {41520, 3}, {41525, 2}, {41530, 1}, {205000, 1}, {700010, 1}}
	if fmt.Sprint(f.GPUs[0].Power) != fmt.Sprint(want) {
		t.Fatalf("power %v, want %v", f.GPUs[0].Power, want)
	}
	if one := NewFoldFrom(ss); fmt.Sprint(one.GPUs[0].Power) != fmt.Sprint(want) {
		t.Fatalf("one by one: %v", one.GPUs[0].Power)
	}
}
