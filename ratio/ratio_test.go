package ratio

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

const boot = "13dc5579-455c-45c8-8e4d-d09c457fa826"

// clockLeg builds a leg whose record is the one its stream recomputes to:
// busy samples at mhz (one each), then idle ones, on a GB10.
func clockLeg(t *testing.T, name, bootID string, mhz []int, idle int) *clocks.Leg {
	t.Helper()
	apps := 2418
	var stream bytes.Buffer
	fold := clocks.NewFold()
	start := time.Date(2026, 8, 12, 9, 0, 0, 0, time.UTC)
	for i := 0; i < len(mhz)+idle; i++ {
		s := clocks.Sample{T: start.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano), BootID: bootID,
			GPUUUID: "GPU-5f3c2a91", GPUName: "NVIDIA GB10", DriverVersion: "580.159.03", ClocksMaxSMMHz: 3003,
			ClocksApplicationsGraphicsMHz: &apps, ThrottleReasonsActive: "0x0000000000000000", PersistenceMode: "Enabled",
			PState: "P0", SMClockMHz: 1208}
		if i < len(mhz) {
			s.SMClockMHz, s.UtilizationGPUPct = mhz[i], 97
		}
		fold.Add(&s, i+1)
		stream.Write(s.AppendJSON(nil))
		stream.WriteByte('\n')
	}
	rec, err := fold.Record(1, clocks.StopPIDExit)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	l := clocks.JudgeLeg(name, data, &stream, nil)
	if !l.Trusted() {
		t.Fatalf("helper leg %s not trusted: %+v", name, l.Reasons)
	}
	return l
}

func flat(mhz, n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = mhz
	}
	return out
}

func points(modelID string, tput ...float64) []BenchPoint {
	out := make([]BenchPoint, len(tput))
	for i, x := range tput {
		c := 1 << i
		out[i] = BenchPoint{ID: PointID{MaxConcurrency: c}, ModelID: modelID, NumPrompts: 6 * c, TotalInputTokens: 6144 * c,
			TotalOutputTokens: 768 * c, OutputThroughput: x}
	}
	return out
}

func mem(x float64) *float64 { return &x }

// cleanArm is one leg per clock, each clean on its own.
func cleanArm(t *testing.T, engine string, mhz int, tput []float64, memMiB float64) Arm {
	t.Helper()
	l := &Leg{Clock: clockLeg(t, "r1", boot, flat(mhz, 60), 4), Points: points("m/M", tput...), PeakGPUMemoryMiB: mem(memMiB)}
	if !l.Clock.Eligible() {
		t.Fatalf("%s r1 is not clean: %+v", engine, l.Clock.Reasons)
	}
	return Arm{Engine: engine, Legs: []*Leg{l}}
}

func codes(rs []clocks.Reason) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Code)
	}
	return out
}

// TestEachFamilyChecksItsOwnClockTerm is the design document's M9/M10: on
// a pair whose arms are each clean but whose offset fails at the ratio, each
// family's binding_eligible is asserted on its own, so that removing either
// family's clock term turns this test red.
func TestEachFamilyChecksItsOwnClockTerm(t *testing.T) {
	ours := cleanArm(t, "fastengine", 2470, []float64{13.2, 24.7}, 66334)
	baseline := cleanArm(t, "vllm", 2190, []float64{12.2, 22.9}, 71234)
	c, err := Compare("m", ours, baseline, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Throughput.BindingEligible {
		t.Error("THROUGHPUT is binding-eligible with a 12.79% clock offset: its clock term is not checked")
	}
	if c.Memory.BindingEligible {
		t.Error("MEMORY is binding-eligible with a 12.79% clock offset: its clock term is not checked")
	}
	for fam, rs := range map[string][]clocks.Reason{"THROUGHPUT": c.Throughput.Reasons, "MEMORY": c.Memory.Reasons} {
		if got := codes(rs); !slices.Equal(got, []string{clocks.CodeOffset}) {
			t.Errorf("%s reasons %v, want [clock.offset]", fam, got)
		}
		if !strings.Contains(rs[0].Message, "median offset 12.79% > 1.0%: fastengine 2470 MHz, vllm 2190 MHz") {
			t.Errorf("%s offset message %q", fam, rs[0].Message)
		}
	}
	if c.Throughput.Value == nil || c.Memory.Value == nil {
		t.Fatal("values are computed even when not binding")
	}

	// The control: the same pair at one clock is binding in both families,
	// so the refusal above is the clock term's and nothing else's.
	baseline = cleanArm(t, "vllm", 2470, []float64{12.2, 22.9}, 71234)
	c, err = Compare("m", ours, baseline, false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Throughput.BindingEligible || !c.Memory.BindingEligible {
		t.Errorf("control: binding %v/%v, reasons %v", c.Throughput.BindingEligible, c.Memory.BindingEligible, c.Throughput.Reasons)
	}
}

// TestIneligibleLegsListedOnce: a leg with a clock reason is listed by the
// clock block, with all its codes; a leg with only bench or memory reasons
// is listed by the ratio; no leg twice.
func TestIneligibleLegsListedOnce(t *testing.T) {
	ours := cleanArm(t, "fastengine", 2470, []float64{13.2, 24.7}, 66334)
	short := &Leg{Clock: clockLeg(t, "r2", boot, flat(2470, 20), 4), Points: points("m/M", 13.1, 24.6), PeakGPUMemoryMiB: mem(66335)}
	short.Reasons = append(short.Clock.Reasons, clocks.Reason{Code: "bench.failed_requests", Message: "…"})
	ours.Legs = append(ours.Legs, short)
	baseline := cleanArm(t, "vllm", 2470, []float64{12.2, 22.9}, 71234)
	noMem := &Leg{Clock: clockLeg(t, "r2", boot, flat(2470, 60), 4), Points: points("m/M", 12.3, 22.8)}
	noMem.Reasons = append(noMem.Clock.Reasons, clocks.Reason{Code: "memory.missing", Message: "…"})
	baseline.Legs = append(baseline.Legs, noMem)

	c, err := Compare("m", ours, baseline, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"leg fastengine r2 is not binding-eligible: bench.failed_requests, clock.busy_samples",
		"leg vllm r2 is not binding-eligible: memory.missing",
	}
	for fam, rs := range map[string][]clocks.Reason{"THROUGHPUT": c.Throughput.Reasons, "MEMORY": c.Memory.Reasons} {
		var got []string
		for _, r := range rs {
			if r.Code != clocks.CodeLegIneligible {
				t.Errorf("%s: unexpected %s: %s", fam, r.Code, r.Message)
			}
			got = append(got, r.Message)
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s leg.ineligible %q, want %q", fam, got, want)
		}
	}
	if c.Throughput.BindingEligible || c.Memory.BindingEligible {
		t.Error("binding with ineligible legs")
	}
	// The clock is not established (a leg has a clock reason), and the
	// non-clock leg still voids the ratio on its own.
	if c.Throughput.Clock.Established {
		t.Error("clock established with a clock.busy_samples leg")
	}
}

// TestNonClockLegAloneVoidsBothFamilies: the clock is established, and a
// leg ineligible for a bench reason alone still voids both ratios.
func TestNonClockLegAloneVoidsBothFamilies(t *testing.T) {
	ours := cleanArm(t, "fastengine", 2470, []float64{13.2, 24.7}, 66334)
	ours.Legs[0].Reasons = append(ours.Legs[0].Clock.Reasons, clocks.Reason{Code: "bench.invalid", Message: "…"})
	baseline := cleanArm(t, "vllm", 2470, []float64{12.2, 22.9}, 71234)
	c, err := Compare("m", ours, baseline, false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Throughput.Clock.Established {
		t.Fatalf("clock not established: %v", c.Throughput.Clock.Reasons)
	}
	for fam, r := range map[string]struct {
		binding bool
		rs      []clocks.Reason
	}{"THROUGHPUT": {c.Throughput.BindingEligible, c.Throughput.Reasons}, "MEMORY": {c.Memory.BindingEligible, c.Memory.Reasons}} {
		if r.binding || !slices.Equal(codes(r.rs), []string{clocks.CodeLegIneligible}) ||
			r.rs[0].Message != "leg fastengine r1 is not binding-eligible: bench.invalid" {
			t.Errorf("%s: binding %v, reasons %+v", fam, r.binding, r.rs)
		}
	}
}

func TestMedian(t *testing.T) {
	for _, c := range []struct {
		xs   []float64
		want float64
	}{{[]float64{3}, 3}, {[]float64{5, 1, 3}, 3}, {[]float64{4, 1, 3, 2}, 2.5}, {[]float64{10, 20}, 15},
		// Two values near the float64 maximum: (a + b) / 2 would overflow.
		{[]float64{math.MaxFloat64, math.MaxFloat64}, math.MaxFloat64},
		{[]float64{math.MaxFloat64, math.MaxFloat64 / 2}, math.MaxFloat64 * 0.75},
		// Two of the smallest subnormal: a/2 + b/2 would round to 0.
		{[]float64{5e-324, 5e-324}, 5e-324}} {
		if got := Median(c.xs); got == nil || *got != c.want {
			t.Errorf("Median(%v) = %v, want %v", c.xs, got, c.want)
		}
	}
	if Median(nil) != nil {
		t.Error("Median of nothing is not nil")
	}
}

func TestThroughputGeometricMean(t *testing.T) {
	ours := Arm{Engine: "a", Legs: []*Leg{
		{Clock: &clocks.Leg{Name: "r1"}, Points: points("m", 110, 200)},
		{Clock: &clocks.Leg{Name: "r2"}, Points: points("m", 130, 220)},
	}}
	baseline := Arm{Engine: "b", Legs: []*Leg{
		{Clock: &clocks.Leg{Name: "r1"}, Points: points("m", 100, 250)},
		{Clock: &clocks.Leg{Name: "r2"}, Points: points("m", 100, 150)},
		{Clock: &clocks.Leg{Name: "r3"}, Points: points("m", 100, 200)},
	}}
	pts, v, _ := throughputPoints(ours, baseline)
	// Point 1: median(110, 130) = 120 over 100; point 2: 210 over median 200.
	want := math.Round(math.Sqrt(1.2*1.05)*1e4) / 1e4
	if v == nil || *v != want {
		t.Errorf("headline %v, want %v", v, want)
	}
	if len(pts) != 2 || *pts[0].Ours != 120 || *pts[0].Baseline != 100 || *pts[0].Ratio != 1.2 ||
		*pts[1].Ours != 210 || *pts[1].Baseline != 200 || *pts[1].Ratio != 1.05 {
		t.Errorf("points %s", show(pts))
	}
}

func show(pts []Point) string {
	b, _ := json.Marshal(pts)
	return string(b)
}

func TestPointMismatch(t *testing.T) {
	ours := Arm{Engine: "fastengine", Legs: []*Leg{
		{Clock: &clocks.Leg{Name: "r1"}, Points: points("m", 12, 24, 48)},
		{Clock: &clocks.Leg{Name: "r2"}, Points: points("m", 12, 24, 48)},
	}}
	baseline := Arm{Engine: "vllm", Legs: []*Leg{
		{Clock: &clocks.Leg{Name: "r1"}, Points: points("m", 10, 20)},
		// A leg with no points already carries bench.missing: it is not a
		// third point set.
		{Clock: &clocks.Leg{Name: "r2"}},
	}}
	rs := pointMismatch(ours, baseline)
	want := "want one set of points (max_concurrency/request_rate) across every leg of fastengine and vllm, found 2: " +
		"{1/inf, 2/inf, 4/inf} in fastengine r1, fastengine r2; {1/inf, 2/inf} in vllm r1; run the missing points in every leg of both arms"
	if len(rs) != 1 || rs[0].Code != CodePointMismatch || rs[0].Message != want {
		t.Errorf("reasons %+v\nwant %q", rs, want)
	}
	pts, v, why := throughputPoints(ours, baseline)
	if v == nil || *v != 1.2 || len(why) != 0 {
		t.Errorf("headline %v, want 1.2 over the two common points", v)
	}
	if len(pts) != 3 || pts[2].ID.MaxConcurrency != 4 || pts[2].Baseline != nil || pts[2].Ratio != nil || *pts[2].Ours != 48 {
		t.Errorf("point 4: %s", show(pts))
	}
	if got := pointMismatch(ours, Arm{Engine: "vllm", Legs: ours.Legs}); got != nil {
		t.Errorf("equal sets: %+v", got)
	}
}

// A leg whose bench evidence was refused lost the refused points: its set
// is not known, so it is no point set of its own (its bench.invalid already
// voids the ratio). The same leg without the reason is one.
func TestPointMismatchLeavesOutRefusedBench(t *testing.T) {
	refused := &Leg{Clock: &clocks.Leg{Name: "r1"}, Reasons: []clocks.Reason{{Code: CodeBenchInvalid, Message: "c1.json: two objects"}},
		Points: points("m", 24)}
	baseline := Arm{Engine: "vllm", Legs: []*Leg{{Clock: &clocks.Leg{Name: "r1"}, Points: points("m", 12, 24)}}}
	if got := pointMismatch(Arm{Engine: "fastengine", Legs: []*Leg{refused}}, baseline); got != nil {
		t.Errorf("a refused leg made a point set: %+v", got)
	}
	refused.Reasons = nil
	got := pointMismatch(Arm{Engine: "fastengine", Legs: []*Leg{refused}}, baseline)
	if len(got) != 1 || got[0].Code != CodePointMismatch || !strings.Contains(got[0].Message, "{1/inf} in fastengine r1; {1/inf, 2/inf} in vllm r1") {
		t.Errorf("reasons %+v", got)
	}
}

func TestWorkloadMismatch(t *testing.T) {
	ours := Arm{Engine: "fastengine", Legs: []*Leg{{Clock: &clocks.Leg{Name: "r1"}, Points: points("meta-llama/Llama-3.1-8B-Instruct", 12, 24)}}}
	other := points("meta-llama/Llama-3.1-8B", 10, 20)
	other[1].TotalInputTokens = 12000
	other[0].TotalOutputTokens = 700 // generated, not workload: never a workload mismatch
	baseline := Arm{Engine: "vllm", Legs: []*Leg{{Clock: &clocks.Leg{Name: "r1"}, Points: other}}}
	rs := workloadMismatch(ours, baseline)
	want := []string{
		`want one model_id across fastengine and vllm, found 2: "meta-llama/Llama-3.1-8B-Instruct" in fastengine r1; "meta-llama/Llama-3.1-8B" in vllm r1; rerun the legs of one model with one --model`,
		"max_concurrency 2, request_rate inf: want one num_prompts/total_input_tokens across fastengine and vllm, found 12/12288 in fastengine r1; 12/12000 in vllm r1; " +
			"rerun with one dataset, --num-prompts and --seed in every leg (failed requests shrink total_input_tokens: fix them first)",
	}
	if !slices.Equal(codes(rs), []string{CodeWorkloadMismatch, CodeWorkloadMismatch}) || !slices.Equal(messagesOf(rs), want) {
		t.Errorf("reasons %q\nwant %q", messagesOf(rs), want)
	}
	// Each of num_prompts and total_input_tokens counts too.
	for _, edit := range []func(*BenchPoint){
		func(p *BenchPoint) { p.NumPrompts++ },
		func(p *BenchPoint) { p.TotalInputTokens-- },
	} {
		same := points("m", 10, 20)
		edit(&same[0])
		rs := workloadMismatch(Arm{Engine: "a", Legs: []*Leg{{Clock: &clocks.Leg{Name: "r1"}, Points: points("m", 1, 2)}}},
			Arm{Engine: "b", Legs: []*Leg{{Clock: &clocks.Leg{Name: "r1"}, Points: same}}})
		if len(rs) != 1 || !strings.HasPrefix(rs[0].Message, "max_concurrency 1, request_rate inf: ") {
			t.Errorf("reasons %+v", rs)
		}
	}
}

func messagesOf(rs []clocks.Reason) []string {
	out := []string{}
	for _, r := range rs {
		out = append(out, r.Message)
	}
	return out
}

// TestBenchReasonsVoidBothFamilies: the point and workload mismatches void
// THROUGHPUT and MEMORY alike, on arms whose clock is established.
func TestBenchReasonsVoidBothFamilies(t *testing.T) {
	ours := cleanArm(t, "fastengine", 2470, []float64{13.2, 24.7, 44.0}, 66334)
	baseline := cleanArm(t, "vllm", 2470, []float64{12.2, 22.9}, 71234)
	c, err := Compare("m", ours, baseline, false)
	if err != nil {
		t.Fatal(err)
	}
	if !c.Throughput.Clock.Established || c.Throughput.BindingEligible || c.Memory.BindingEligible {
		t.Errorf("established %v, binding %v/%v", c.Throughput.Clock.Established, c.Throughput.BindingEligible, c.Memory.BindingEligible)
	}
	for _, rs := range [][]clocks.Reason{c.Throughput.Reasons, c.Memory.Reasons} {
		if !slices.Equal(codes(rs), []string{CodePointMismatch}) {
			t.Errorf("reasons %v", codes(rs))
		}
	}
}

// TestValuesThatCannotBeComputedAreNull: no memory record, no common point,
// a zero baseline: each value is null, never 0, and never binding.
func TestValuesThatCannotBeComputedAreNull(t *testing.T) {
	ours := cleanArm(t, "fastengine", 2470, []float64{13.2}, 66334)
	baseline := cleanArm(t, "vllm", 2470, []float64{12.2}, 71234)
	baseline.Legs[0].PeakGPUMemoryMiB = nil
	baseline.Legs[0].Points[0].OutputThroughput = 0
	c, err := Compare("m", ours, baseline, false)
	if err != nil {
		t.Fatal(err)
	}
	if c.Memory.Value != nil || c.Memory.Baseline != nil || c.Memory.BindingEligible {
		t.Errorf("memory value %v, binding %v", c.Memory.Value, c.Memory.BindingEligible)
	}
	if c.Throughput.Value != nil || c.Throughput.Points[0].Ratio != nil || c.Throughput.BindingEligible {
		t.Errorf("throughput value %v, points %s, binding %v", c.Throughput.Value, show(c.Throughput.Points), c.Throughput.BindingEligible)
	}
	// Each null says why.
	wantT := []string{
		"max_concurrency 1, request_rate inf: no THROUGHPUT ratio: vllm has no throughput there (output_throughput 0 in r1: every request failed or none produced a token); rerun the point in those legs",
		"no THROUGHPUT ratio: the geometric mean needs a ratio at every point both arms have, and 1 of 1 have none (each named above)",
	}
	if got := messagesOf(undefinedOf(c.Throughput.Reasons)); !slices.Equal(got, wantT) {
		t.Errorf("THROUGHPUT ratio.undefined %q\nwant %q", got, wantT)
	}
	wantM := []string{"no MEMORY ratio: no valid memory record in any leg of vllm; record memory with the legs and rerun"}
	if got := messagesOf(undefinedOf(c.Memory.Reasons)); !slices.Equal(got, wantM) {
		t.Errorf("MEMORY ratio.undefined %q, want %q", got, wantM)
	}
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"memory":{"value":null`, `"ratio":null`, `"throughput":{"value":null`, `"baseline":null`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b)
		}
	}
}

func TestSameEngineIsRefused(t *testing.T) {
	a := Arm{Engine: "vllm"}
	_, err := Compare("m", a, a, false)
	if !errors.Is(err, ErrSameEngine) || err.Error() != "model m: an engine compared with itself: vllm" {
		t.Errorf("err %v", err)
	}
}

// TestRatiosRoundedTo4Decimals checks the precision written.
func TestRatiosRoundedTo4Decimals(t *testing.T) {
	ours := cleanArm(t, "fastengine", 2470, []float64{10}, 2)
	baseline := cleanArm(t, "vllm", 2470, []float64{3}, 3)
	c, err := Compare("m", ours, baseline, false)
	if err != nil {
		t.Fatal(err)
	}
	if *c.Throughput.Value != 3.3333 || *c.Throughput.Points[0].Ratio != 3.3333 || *c.Memory.Value != 0.6667 {
		t.Errorf("values %v %v %v", *c.Throughput.Value, *c.Throughput.Points[0].Ratio, *c.Memory.Value)
	}
	if fmt.Sprint(*c.Memory.Ours) != "2" {
		t.Errorf("memory median %v", *c.Memory.Ours)
	}
}

// TestGatePass: each family of each comparison counts on its own, and no
// comparison is no pass.
func TestGatePass(t *testing.T) {
	c := func(tp, mem bool) *Comparison {
		return &Comparison{Throughput: Throughput{BindingEligible: tp}, Memory: Memory{BindingEligible: mem}}
	}
	for _, tc := range []struct {
		cs   []*Comparison
		want bool
	}{
		{nil, false},
		{[]*Comparison{c(true, true)}, true},
		{[]*Comparison{c(true, false)}, false},
		{[]*Comparison{c(false, true)}, false},
		{[]*Comparison{c(true, true), c(true, true)}, true},
		{[]*Comparison{c(true, true), c(true, false)}, false},
		{[]*Comparison{c(false, true), c(true, true)}, false},
	} {
		if got := GatePass(tc.cs); got != tc.want {
			t.Errorf("GatePass(%d comparisons) = %v, want %v", len(tc.cs), got, tc.want)
		}
	}
}
