package clocks

import (
	"math"
	"strings"
	"testing"
	"time"
)

// energyWindow is n GB10 samples one second apart, busy at 2470 MHz,
// drawing power(i) W and, where counter is set, carrying a counter that
// starts at 5e9 mJ and adds the trapezoid of the power between samples
// (so counter and power agree exactly).
func energyWindow(n int, power func(i int) float64, counter bool) []*Sample {
	var out []*Sample
	mj := int64(5e9)
	for i := 0; i < n; i++ {
		s := gb10(i, boot13, 2470, 97)
		w := power(i)
		s.PowerDrawW = &w
		if i > 0 {
			mj += int64(math.Round((power(i-1) + w) / 2 * 1000))
		}
		if counter {
			e := mj
			s.EnergyMJ = &e
			s.EnergyScope = ptr(EnergyScopeGPU)
		}
		out = append(out, s)
	}
	return out
}

// markAt is a marks evidence of one point from second a to second b of
// the test window (fractions allowed).
func markAt(a, b float64) *PointEvidence {
	ns := func(x float64) int64 { return windowStart.Add(time.Duration(x * float64(time.Second))).UnixNano() }
	return &PointEvidence{MarksPath: "p.points.jsonl", Marks: []Mark{{Point: "8/inf", Span: Span{ns(a), ns(b)}}}}
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-6 }

// The window's energy is the counter's difference with each end
// interpolated linearly between the samples around it. A ramp of power
// from 300 W by 10 W a second gives the counter E(i) = 300 i + 5 i² J from
// its start; marked from 10.25 s to 40.5 s, by hand: E(10.25) = E(10) +
// 0.25 × (E(11) − E(10)) = 3500 + 0.25 × 405 = 3601.25 J, E(40.5) = 20000 +
// 0.5 × 705 = 20352.5 J, so 16751.25 J. The trapezoid of power is exact
// on a ramp: ∫ (300 + 10 t) dt over [10.25, 40.5] = 300 × 30.25 + 5 ×
// (40.5² − 10.25²) = 16750.9375 J; the two differ by 0.3125 J, inside the
// error bound.
func TestEnergyCounterInterpolatesEnds(t *testing.T) {
	ramp := func(i int) float64 { return 300 + 10*float64(i) }
	l := pointLeg(t, "r1", energyWindow(60, ramp, true), markAt(10.25, 40.5), nil, "")
	e := l.Points["8/inf"].Energy
	if e == nil || e.Code != "" {
		t.Fatalf("energy %+v", e)
	}
	const want, integral = 16751.25, 16750.9375
	if e.Method != MethodCounter || e.Scope != EnergyScopeGPU || !near(e.EnergyJ, want) {
		t.Fatalf("method %s scope %s energy %v J, want counter gpu %v J", e.Method, e.Scope, e.EnergyJ, want)
	}
	if !near(*e.IntegralJ, integral) {
		t.Fatalf("integral %v J, want %v", *e.IntegralJ, integral)
	}
	if !near(e.DurationS, 30.25) || !near(e.MeanPowerW(), want/30.25) {
		t.Fatalf("duration %v s, mean power %v W", e.DurationS, e.MeanPowerW())
	}
	// Error bound: half a second (the gap) times the 10 W swing at each end.
	if e.ErrorBoundJ == nil || !near(*e.ErrorBoundJ, 10) {
		t.Fatalf("error bound %v J, want 10", e.ErrorBoundJ)
	}
}

// Without a counter the trapezoid of power prices the window.
func TestEnergyIntegrationWithoutCounter(t *testing.T) {
	ramp := func(i int) float64 { return 300 + 10*float64(i) }
	l := pointLeg(t, "r1", energyWindow(60, ramp, false), markAt(10.25, 40.5), nil, "")
	e := l.Points["8/inf"].Energy
	if e.Code != "" || e.Method != MethodIntegration || !near(e.EnergyJ, 16750.9375) || e.CounterJ != nil {
		t.Fatalf("energy %+v", e)
	}
}

// Idle power is the mean of the leg's idle samples' power, never
// subtracted from the window's energy.
func TestEnergyIdlePower(t *testing.T) {
	ss := energyWindow(60, func(int) float64 { return 400 }, false)
	for i := 0; i < 4; i++ {
		s := gb10(60+i, boot13, 1100, 0)
		s.PowerDrawW = ptr(70 + float64(i))
		ss = append(ss, s)
	}
	l := pointLeg(t, "r1", ss, markAt(5, 35), nil, "")
	e := l.Points["8/inf"].Energy
	if e.IdlePowerW == nil || !near(*e.IdlePowerW, 71.5) || !near(e.EnergyJ, 400*30) {
		t.Fatalf("idle %v W, energy %v J", e.IdlePowerW, e.EnergyJ)
	}
}

// energyProblem judges a leg and returns its point's energy code and
// message.
func energyProblem(t *testing.T, ss []*Sample, ev *PointEvidence) (string, string) {
	t.Helper()
	l := pointLeg(t, "r1", ss, ev, nil, "")
	e := l.Points["8/inf"].Energy
	return e.Code, e.Problem
}

func wantProblem(t *testing.T, code, msg, wantCode string, fragments ...string) {
	t.Helper()
	if code != wantCode {
		t.Fatalf("code %q (%s), want %s", code, msg, wantCode)
	}
	for _, f := range fragments {
		if !strings.Contains(msg, f) {
			t.Errorf("message %q lacks %q", msg, f)
		}
	}
}

func flatPower(w float64) func(int) float64 { return func(int) float64 { return w } }

func TestEnergyCounterWentDown(t *testing.T) {
	ss := energyWindow(60, flatPower(400), true)
	*ss[20].EnergyMJ = 1000
	for _, s := range ss[21:] {
		*s.EnergyMJ -= 5e9
	}
	code, msg := energyProblem(t, ss, markAt(10, 40))
	wantProblem(t, code, msg, CodeEnergyCounterReset, "energy_mj went down from 5007600000 to 1000 mJ (line 20 to line 21)")
}

// A counter that stands still over ≥ 5 s of busy samples above 100 W is
// not counting; 4 s is not yet, nor is any time at 100 W.
func TestEnergyCounterStall(t *testing.T) {
	stall := func(secs int, watts float64) []*Sample {
		ss := energyWindow(60, flatPower(watts), true)
		v := *ss[20].EnergyMJ
		for i := 21; i < len(ss); i++ {
			d := *ss[i].EnergyMJ - *ss[i-1].EnergyMJ
			if i <= 20+secs {
				d = 0
			}
			v += d
			*ss[i].EnergyMJ = v
		}
		return ss
	}
	code, msg := energyProblem(t, stall(5, 400), markAt(10, 40))
	wantProblem(t, code, msg, CodeEnergyCounterReset, "energy_mj stood at 5008000000 mJ for 5 s over busy samples above 100 W (line 21 to line 26); it must advance within 5 s")
	code, msg = energyProblem(t, stall(4, 400), markAt(10, 40))
	if code == CodeEnergyCounterReset {
		t.Fatalf("4 s still: %s", msg)
	}
	code, msg = energyProblem(t, stall(8, 100), markAt(10, 40))
	if code == CodeEnergyCounterReset {
		t.Fatalf("at 100 W: %s", msg)
	}
}

// Each end must lie between two samples at most 3 intervals apart, and
// the window must last at least 20 s.
func TestEnergyCoverage(t *testing.T) {
	ss := energyWindow(60, flatPower(400), true)
	// A gap from second 8 to second 12 (4 s > 3 × 1 s) around the start.
	gap := append(append([]*Sample{}, ss[:9]...), ss[12:]...)
	code, msg := energyProblem(t, gap, markAt(10, 40))
	wantProblem(t, code, msg, CodeEnergyCoverage, "the samples around the window's start (2026-08-12T10:15:13.123Z) lie 4 s apart > 3 × interval_s 1 s = 3 s")
	// 3 s is within.
	ok := append(append([]*Sample{}, ss[:9]...), ss[11:]...)
	if code, msg := energyProblem(t, ok, markAt(10, 40)); code != "" {
		t.Fatalf("3 s gap: %s %s", code, msg)
	}
	code, msg = energyProblem(t, ss, markAt(10, 29.999))
	wantProblem(t, code, msg, CodeEnergyCoverage, "the window lasts 19.999 s < 20 s")
	if code, msg := energyProblem(t, ss, markAt(10, 30)); code != "" {
		t.Fatalf("20 s: %s %s", code, msg)
	}
}

// A window that begins before the stream's first sample has no sample at
// or before its start.
func TestEnergyCoverageNoSampleBefore(t *testing.T) {
	ss := energyWindow(60, flatPower(400), true)
	l := pointLegAt(t, ss, markAt(-2, 30))
	e := l.Points["8/inf"].Energy
	wantProblem(t, e.Code, e.Problem, CodeEnergyCoverage, "no sample at or before the window's start (2026-08-12T10:15:01.123Z)")
}

// pointLegAt is pointLeg for marks that may lie outside the stream.
func pointLegAt(t *testing.T, ss []*Sample, ev *PointEvidence) *Leg {
	return pointLeg(t, "r1", ss, ev, nil, "")
}

func TestEnergyMissing(t *testing.T) {
	ss := energyWindow(60, flatPower(400), false)
	for _, s := range ss {
		s.PowerDrawW = nil
	}
	code, msg := energyProblem(t, ss, markAt(10, 40))
	wantProblem(t, code, msg, CodeEnergyMissing, "neither energy_mj nor power_draw_w on every sample around the window")
	// A counter that stops answering mid-window, without power.
	ss = energyWindow(60, flatPower(400), true)
	for _, s := range ss {
		s.PowerDrawW = nil
	}
	for _, s := range ss[25:] {
		s.EnergyMJ = nil
	}
	code, msg = energyProblem(t, ss, markAt(10, 40))
	wantProblem(t, code, msg, CodeEnergyMissing, "energy_mj on 16 of the 33 samples around the window")
}

// Counter and power more than 5% apart over a window disagree; 5% does not.
func TestEnergyDisagree(t *testing.T) {
	scaled := func(f float64) []*Sample {
		ss := energyWindow(60, flatPower(400), true)
		for _, s := range ss {
			*s.PowerDrawW *= f
		}
		return ss
	}
	code, msg := energyProblem(t, scaled(1.0501), markAt(10, 40))
	wantProblem(t, code, msg, CodeEnergyDisagree, "energy by counter 12000 J and by power 12601.2 J differ by 5.01% > 5% of the counter")
	if code, msg := energyProblem(t, scaled(1.05), markAt(10, 40)); code != "" {
		t.Fatalf("5%%: %s %s", code, msg)
	}
	if code, msg := energyProblem(t, scaled(0.95), markAt(10, 40)); code != "" {
		t.Fatalf("-5%%: %s %s", code, msg)
	}
}

// The stream carries energy_mj and energy_scope, and refuses them out of
// range or mistyped.
func TestEnergyKeys(t *testing.T) {
	s := gb10(0, boot13, 2470, 97)
	s.EnergyMJ, s.EnergyScope = ptr(int64(123456789)), ptr(EnergyScopeModule)
	line := s.AppendJSON(nil)
	if !strings.HasSuffix(string(line), `,"energy_mj":123456789,"energy_scope":"module"}`) {
		t.Fatalf("line %s", line)
	}
	got, err := ParseSample(line)
	if err != nil || *got.EnergyMJ != 123456789 || *got.EnergyScope != EnergyScopeModule {
		t.Fatalf("%v %+v", err, got)
	}
	base := strings.TrimSuffix(string(gb10(0, boot13, 2470, 97).AppendJSON(nil)), "}")
	for _, c := range []struct{ add, want string }{
		{`,"energy_mj":-1`, "energy_mj: want an integer of mJ from 0 to 9007199254740992, found -1"},
		{`,"energy_mj":9007199254740993`, "energy_mj: want an integer of mJ from 0 to 9007199254740992, found 9007199254740993"},
		{`,"energy_mj":1.5`, "energy_mj: want an integer, found number 1.5"},
		{`,"energy_mj":"1"`, `energy_mj: want an integer, found string "1"`},
		{`,"energy_scope":"board"`, `energy_scope: want "gpu" or "module", found string "board"`},
		{`,"energy_scope":1`, `energy_scope: want a string, found number 1`},
	} {
		_, err := ParseSample([]byte(base + c.add + "}"))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s: %v, want %s", c.add, err, c.want)
		}
	}
	for _, ok := range []string{`,"energy_mj":null`, `,"energy_mj":0`, `,"energy_mj":9007199254740992`, `,"energy_scope":null`} {
		if _, err := ParseSample([]byte(base + ok + "}")); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// energy_scope is a static field: a change within the window is drift.
func TestEnergyScopeDrift(t *testing.T) {
	ss := energyWindow(60, flatPower(400), true)
	for _, s := range ss[30:] {
		s.EnergyScope = ptr(EnergyScopeModule)
	}
	l := legOf(t, "r1", ss, nil)
	wantReason(t, l.Reasons, CodeStaticDrift, `energy_scope changed at line 31: "gpu", then "module"`)
}
