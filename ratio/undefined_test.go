package ratio

import (
	"encoding/json"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

func undefinedOf(rs []clocks.Reason) []clocks.Reason {
	var out []clocks.Reason
	for _, r := range rs {
		if r.Code == CodeUndefined {
			out = append(out, r)
		}
	}
	return out
}

// arm is one leg per throughput list, at points 1, 2, 4, … and one memory
// peak each; no clock record.
func arm(engine string, mem float64, legs ...[]float64) Arm {
	a := Arm{Engine: engine}
	for i, tp := range legs {
		m := mem
		a.Legs = append(a.Legs, &Leg{Clock: &clocks.Leg{Name: "r" + string(rune('1'+i))}, Points: points("m", tp...), PeakGPUMemoryMiB: &m})
	}
	return a
}

// TestAllFailedPointIsNullNeverZero: a point whose requests all failed in
// every leg of an arm has no throughput: its ratio and the headline are
// null, never 0, each with a ratio.undefined naming the point, the arm and
// the legs; a leg with throughput there still counts.
func TestAllFailedPointIsNullNeverZero(t *testing.T) {
	ours := arm("fastengine", 66334, []float64{13, 0}, []float64{13, 0})
	baseline := arm("vllm", 71234, []float64{12, 22}, []float64{12, 22})
	c, err := Compare("m", ours, baseline, false)
	if err != nil {
		t.Fatal(err)
	}
	p2 := c.Throughput.Points[1]
	if c.Throughput.Value != nil || p2.Ratio != nil || p2.Ours != nil || *p2.Baseline != 22 || p2.OursOutputTokens != nil {
		t.Fatalf("value %v, point 2 %s", c.Throughput.Value, show(c.Throughput.Points))
	}
	want := "max_concurrency 2, request_rate inf: no THROUGHPUT ratio: fastengine has no throughput there (output_throughput 0 in r1, r2: every request failed or none produced a token); rerun the point in those legs"
	if got := messagesOf(undefinedOf(c.Throughput.Reasons)); len(got) != 2 || got[0] != want {
		t.Errorf("ratio.undefined %q\nwant first %q", got, want)
	}
	// One leg with throughput at the point gives it a median of that leg
	// alone: a failed leg's 0 is no throughput, not a value.
	ours.Legs[1].Points[1].OutputThroughput = 44
	c, _ = Compare("m", ours, baseline, false)
	if p := c.Throughput.Points[1]; p.Ours == nil || *p.Ours != 44 || *p.Ratio != 2 || c.Throughput.Value == nil {
		t.Errorf("one leg with throughput: %s, value %v", show(c.Throughput.Points), c.Throughput.Value)
	}
	if len(undefinedOf(c.Throughput.Reasons)) != 0 {
		t.Errorf("ratio.undefined with a value: %+v", c.Throughput.Reasons)
	}
}

// TestNoCommonPointIsNullWithAReason.
func TestNoCommonPointIsNullWithAReason(t *testing.T) {
	ours := arm("fastengine", 1, []float64{13})
	baseline := arm("vllm", 1, []float64{12})
	baseline.Legs[0].Points[0].ID = PointID{RequestRate: 4}
	c, _ := Compare("m", ours, baseline, false)
	want := "no THROUGHPUT ratio: no point both fastengine and vllm have (fastengine has {1/inf}; vllm has {none/4}); run one set of points in both arms"
	if got := messagesOf(undefinedOf(c.Throughput.Reasons)); c.Throughput.Value != nil || !slices.Equal(got, []string{want}) {
		t.Errorf("value %v, ratio.undefined %q", c.Throughput.Value, got)
	}
}

// TestExtremeNumbersNeverCrash: any finite JSON number gives a verdict.
// A huge ratio is a value; one that overflows or underflows, or rounds to
// 0, is null with a reason; medians of values near the float64 maximum do
// not overflow; and the document encodes as JSON (encoding/json refuses
// an infinity).
func TestExtremeNumbersNeverCrash(t *testing.T) {
	big, tiny := math.MaxFloat64, 5e-324
	ours := arm("fastengine", big, []float64{1e305, tiny, 40, big, 0.00003}, []float64{1e305, tiny, 40, big, 0.00003})
	baseline := arm("vllm", tiny, []float64{13, 22, 40, big, 1}, []float64{13, 22, 40, big, 1})
	c, err := Compare("m", ours, baseline, false)
	if err != nil {
		t.Fatal(err)
	}
	pts := c.Throughput.Points
	if pts[0].Ratio == nil || *pts[0].Ratio != 1e305/13 {
		t.Errorf("1e305 / 13: %v", pts[0].Ratio)
	}
	if pts[1].Ratio != nil || pts[1].Ours == nil || *pts[1].Ours != tiny {
		t.Errorf("5e-324 / 22: ratio %v, ours %v; want null, and the median kept as it is", pts[1].Ratio, pts[1].Ours)
	}
	if pts[3].Ratio == nil || *pts[3].Ratio != 1 || *pts[3].Ours != big {
		t.Errorf("max / max: ratio %v, ours %v", pts[3].Ratio, pts[3].Ours)
	}
	if pts[4].Ratio != nil {
		t.Errorf("3e-05 rounds to 0 at 4 decimals: ratio %v, want null", *pts[4].Ratio)
	}
	if c.Throughput.Value != nil || c.Memory.Value != nil {
		t.Errorf("values %v %v, want null", c.Throughput.Value, c.Memory.Value)
	}
	got := messagesOf(undefinedOf(c.Throughput.Reasons))
	for _, want := range []string{
		"max_concurrency 2, request_rate inf: no THROUGHPUT ratio: fastengine / vllm = 5e-324 / 22 tokens/s is 0, not a finite ratio > 0 at 4 decimals",
		"max_concurrency 16, request_rate inf: no THROUGHPUT ratio: fastengine / vllm = 0.00003 / 1 tokens/s is 0.00003, not a finite ratio > 0 at 4 decimals",
		"the geometric mean needs a ratio at every point both arms have, and 2 of 5 have none",
	} {
		if !slices.ContainsFunc(got, func(m string) bool { return strings.Contains(m, want) }) {
			t.Errorf("THROUGHPUT ratio.undefined %q lacks %q", got, want)
		}
	}
	wantM := "no MEMORY ratio: fastengine / vllm = 1.7976931348623157e+308 / 5e-324 MiB is +Inf, not a finite ratio > 0 at 4 decimals"
	if m := messagesOf(undefinedOf(c.Memory.Reasons)); len(m) != 1 || !strings.HasPrefix(m[0], wantM) {
		t.Errorf("MEMORY ratio.undefined %q\nwant %q…", m, wantM)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Fatalf("the comparison does not encode: %v", err)
	}
}

// TestGeometricMeanInLogSpace: two ratios of 1e200 multiply past the
// float64 maximum; their geometric mean is still 1e200.
func TestGeometricMeanInLogSpace(t *testing.T) {
	ours := arm("a", 1, []float64{1e201, 1e202})
	baseline := arm("b", 1, []float64{10, 100})
	_, v, why := throughputPoints(ours, baseline)
	if v == nil || math.Abs(*v-1e200)/1e200 > 1e-12 || len(why) != 0 {
		t.Errorf("headline %v, reasons %+v; want 1e200", v, why)
	}
}

// TestOutputMismatchBoundary: total_output_tokens within 5.0% between the
// arms passes, exactly at the boundary included; above it is
// bench.output_mismatch on THROUGHPUT alone, naming both medians.
func TestOutputMismatchBoundary(t *testing.T) {
	clean := func(outOurs, outBase int) *Comparison {
		t.Helper()
		ours := cleanArm(t, "fastengine", 2470, []float64{13.2}, 66334)
		baseline := cleanArm(t, "vllm", 2470, []float64{12.2}, 71234)
		ours.Legs[0].Points[0].TotalOutputTokens = outOurs
		baseline.Legs[0].Points[0].TotalOutputTokens = outBase
		c, err := Compare("m", ours, baseline, false)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	for _, tc := range []struct {
		ours, base int
		pass       bool
	}{
		{1463, 1540, true}, // 77/1540 = 5.00% exactly
		{1617, 1540, true}, // +5.00% exactly
		{1462, 1540, false},
		{1618, 1540, false},
		{42444, 42734, true}, // two real runs without --ignore-eos: 0.68%
		{2440, 2498, true},   // two real vLLM 0.5.4 runs (testdata/bench-real/vllm-0.5): 2.32%
	} {
		c := clean(tc.ours, tc.base)
		out := []clocks.Reason{}
		for _, r := range c.Throughput.Reasons {
			if r.Code == CodeOutputMismatch {
				out = append(out, r)
			}
		}
		if tc.pass != (len(out) == 0) || tc.pass != c.Throughput.BindingEligible {
			t.Errorf("%d vs %d: output_mismatch %+v, THROUGHPUT binding %v", tc.ours, tc.base, out, c.Throughput.BindingEligible)
		}
		if !c.Memory.BindingEligible || slices.Contains(codes(c.Memory.Reasons), CodeOutputMismatch) {
			t.Errorf("%d vs %d: MEMORY %v %v; the output tokens are THROUGHPUT's alone", tc.ours, tc.base, c.Memory.BindingEligible, c.Memory.Reasons)
		}
	}
	c := clean(1462, 1540)
	want := "max_concurrency 1, request_rate inf: total_output_tokens differ by 5.06% > 5.0%: fastengine 1462, vllm 1540 (median over legs): " +
		"one engine stops generating early or late (EOS, max_tokens); rerun both arms with --ignore-eos, or find which engine ignores the request's stop"
	if got := messagesOf(c.Throughput.Reasons); !slices.Contains(got, want) {
		t.Errorf("reasons %q\nwant %q", got, want)
	}
	if p := c.Throughput.Points[0]; *p.OursOutputTokens != 1462 || *p.BaselineOutputTokens != 1540 || *p.OutputDiffPct != 5.0649 {
		t.Errorf("point %s", show(c.Throughput.Points))
	}
}

// TestPointJSON: identity written as vLLM writes it.
func TestPointJSON(t *testing.T) {
	one := 1.5
	for id, want := range map[PointID]string{
		{MaxConcurrency: 8}:                   `"max_concurrency":8,`,
		{RequestRate: 4}:                      `"max_concurrency":null,`,
		{MaxConcurrency: 2, RequestRate: 0.5}: `"request_rate":0.5`,
	} {
		b, err := json.Marshal(Point{ID: id, Ours: &one})
		if err != nil || !strings.Contains(string(b), want) {
			t.Errorf("%v: %s %v, want %s", id, b, err, want)
		}
	}
	b, _ := json.Marshal(Point{ID: PointID{MaxConcurrency: 8}})
	if !strings.Contains(string(b), `"request_rate":"inf"`) {
		t.Errorf("unbounded rate: %s", b)
	}
}

// TestPointOrder: concurrency, then rate, each increasing, unbounded last.
func TestPointOrder(t *testing.T) {
	ids := []PointID{{}, {RequestRate: 16}, {MaxConcurrency: 8}, {MaxConcurrency: 1, RequestRate: 4}, {RequestRate: 1}, {MaxConcurrency: 1}}
	SortPoints(ids)
	var got []string
	for _, id := range ids {
		got = append(got, id.Label())
	}
	if want := []string{"1/4", "1/inf", "8/inf", "none/1", "none/16", "none/inf"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

// TestModelIDOnlyWhenBothArmsHaveIt: SGLang names no model; its arm is
// not a second model_id.
func TestModelIDOnlyWhenBothArmsHaveIt(t *testing.T) {
	ours := Arm{Engine: "sglang", Legs: []*Leg{{Clock: &clocks.Leg{Name: "r1"}, Points: points("", 12)}}}
	baseline := Arm{Engine: "vllm", Legs: []*Leg{{Clock: &clocks.Leg{Name: "r1"}, Points: points("m/M", 10)}}}
	if rs := workloadMismatch(ours, baseline); len(rs) != 0 {
		t.Errorf("reasons %+v", rs)
	}
	ours.Legs = append(ours.Legs, &Leg{Clock: &clocks.Leg{Name: "r2"}, Points: points("m/Other", 12)})
	if rs := workloadMismatch(ours, baseline); len(rs) != 1 || !strings.Contains(rs[0].Message, `"m/Other" in sglang r2; "m/M" in vllm r1`) {
		t.Errorf("reasons %+v", rs)
	}
}

// TestRateIsShortAtEveryMagnitude: a request rate prints as the shortest
// decimal that reads back to it, in plain notation from plainRateMin up to
// plainRateMax (the labels of real sweeps, unchanged) and with an exponent
// outside, so that no label, table cell or summary.json value runs to
// hundreds of digits; each is a JSON number that reads back to the rate.
func TestRateIsShortAtEveryMagnitude(t *testing.T) {
	for rate, want := range map[float64]string{
		0:                       "inf",
		1:                       "1",
		2.5:                     "2.5",
		0.5:                     "0.5",
		16:                      "16",
		1e-6:                    "0.000001",
		math.Nextafter(1e-6, 0): "9.999999999999997e-7",
		1e-7:                    "1e-7",
		1.5e-10:                 "1.5e-10",
		math.Nextafter(1e21, 0): "999999999999999900000",
		1e21:                    "1e+21",
		1e305:                   "1e+305",
		5e-324:                  "5e-324",
		math.MaxFloat64:         "1.7976931348623157e+308",
	} {
		id := PointID{MaxConcurrency: 8, RequestRate: rate}
		if got := id.Label(); got != "8/"+want {
			t.Errorf("rate %v: label %q, want %q", rate, got, "8/"+want)
		}
		if got := id.String(); got != "max_concurrency 8, request_rate "+want {
			t.Errorf("rate %v: %q", rate, got)
		}
		if len(want) > 25 {
			t.Errorf("rate %v: %d bytes", rate, len(want))
		}
		b, err := json.Marshal(Point{ID: id})
		if err != nil {
			t.Fatalf("rate %v: %v", rate, err)
		}
		var back struct {
			RequestRate any `json:"request_rate"`
		}
		if err := json.Unmarshal(b, &back); err != nil {
			t.Fatalf("rate %v: %s: %v", rate, b, err)
		}
		if rate == 0 {
			if back.RequestRate != "inf" {
				t.Errorf("unbounded: %s", b)
			}
		} else if back.RequestRate != rate {
			t.Errorf("rate %v: summary.json holds %s, which reads back as %v", rate, b, back.RequestRate)
		}
	}
}

// TestPointStrategy: a rate point's strategy (GuideLLM's constant,
// poisson) is part of its identity, its label, its message, its order and
// summary.json's point; a point without one prints as it always has.
func TestPointStrategy(t *testing.T) {
	c := PointID{RequestRate: 2, Strategy: "constant"}
	p := PointID{RequestRate: 2, Strategy: "poisson"}
	plain := PointID{RequestRate: 2}
	if c == p || c == plain {
		t.Error("a strategy is not part of the point's identity")
	}
	for id, want := range map[PointID][2]string{
		c:     {"none/2:constant", "max_concurrency none, request_rate 2, strategy constant"},
		p:     {"none/2:poisson", "max_concurrency none, request_rate 2, strategy poisson"},
		plain: {"none/2", "max_concurrency none, request_rate 2"},
	} {
		if id.Label() != want[0] || id.String() != want[1] {
			t.Errorf("%+v: label %q, string %q; want %q", id, id.Label(), id.String(), want)
		}
		b, err := json.Marshal(Point{ID: id})
		if has := strings.Contains(string(b), `"strategy":`); err != nil || has != (id.Strategy != "") ||
			id.Strategy != "" && !strings.Contains(string(b), `"strategy":"`+id.Strategy+`"`) {
			t.Errorf("%+v: %s %v", id, b, err)
		}
	}
	ids := []PointID{p, {}, c, plain, {RequestRate: 1, Strategy: "poisson"}}
	SortPoints(ids)
	var got []string
	for _, id := range ids {
		got = append(got, id.Label())
	}
	if want := []string{"none/1:poisson", "none/2", "none/2:constant", "none/2:poisson", "none/inf"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
	if _, err := ParsePointID("none/2:poisson"); err == nil {
		t.Error("a plan's point read with a strategy")
	}
}
