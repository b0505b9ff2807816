package main

import (
	"math"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// recordLong records a leg of 24 s (sleep 24) at 250 ms and waits for it.
func recordLong(t *testing.T, l *recLeg, backend string) {
	t.Helper()
	p := l.start("", "record", "--out", l.prefix, "--interval", "250ms", "--backend", backend, "--gpu", "0", "--", "sleep", "24")
	select {
	case <-p.done:
	case <-time.After(90 * time.Second):
		t.Fatalf("record did not stop within 90 s; stderr:\n%s", p.stderr.String())
	}
	if code := p.cmd.ProcessState.ExitCode(); code != 0 {
		t.Fatalf("record exited %d:\n%s", code, p.stderr.String())
	}
}

// energyOf judges the recorded leg with one point window, from 1 s after
// its first sample to 1 s before its last, and returns its energy there
// and the stream's samples.
func energyOf(t *testing.T, l *recLeg) (*clocks.LegEnergy, clocks.Span, []*clocks.Sample) {
	t.Helper()
	_, ss := l.readStream()
	at := func(s *clocks.Sample) int64 {
		tm, err := time.Parse(time.RFC3339Nano, s.T)
		if err != nil {
			t.Fatal(err)
		}
		return tm.UnixNano()
	}
	span := clocks.Span{From: at(ss[0]) + 1e9, To: at(ss[len(ss)-1]) - 1e9}
	leg := clocks.LoadLeg(clocks.LegFiles{Name: "r1", RecordPath: l.record(), StreamPath: l.stream(),
		Points: &clocks.PointEvidence{MarksPath: l.prefix + ".points.jsonl", Marks: []clocks.Mark{{Point: "8/inf", Span: span}}}})
	// The fake NVML's throttle bits (SwPowerCap and an unknown high bit)
	// are a clock reason of the leg; its energy is priced all the same.
	if !leg.Trusted() {
		t.Fatalf("leg not trusted: %v", leg.Reasons)
	}
	return leg.Points["8/inf"].Energy, span, ss
}

// byHand interpolates a sample value linearly at instant x between the
// samples around it, as a reader with a pencil would.
func byHand(t *testing.T, ss []*clocks.Sample, x int64, v func(*clocks.Sample) float64) float64 {
	t.Helper()
	for i := 1; i < len(ss); i++ {
		a, _ := time.Parse(time.RFC3339Nano, ss[i-1].T)
		b, _ := time.Parse(time.RFC3339Nano, ss[i].T)
		if a.UnixNano() <= x && x <= b.UnixNano() {
			f := float64(x-a.UnixNano()) / float64(b.UnixNano()-a.UnixNano())
			return v(ss[i-1]) + f*(v(ss[i])-v(ss[i-1]))
		}
	}
	t.Fatalf("no samples around %d", x)
	return 0
}

// A leg recorded through the compiled fake libnvidia-ml.so.1 carries its
// energy counter (412.345 W on the monotonic clock): the window's energy
// is the counter's difference, its ends interpolated, which a reader
// computes by hand from the stream's lines; J per output token for 9000
// output tokens is that over 9000; the fake's power.draw agrees within 5%.
func TestEnergyRecordedNVML(t *testing.T) {
	if testing.Short() {
		t.Skip("records a 24 s leg")
	}
	t.Parallel()
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc not found: the fake libnvidia-ml.so.1 is compiled")
	}
	l := newRecTools(t).leg(t, nil)
	libDir := t.TempDir()
	src, _ := filepath.Abs("../../sampler/testdata/fakenvml/fakenvml.c")
	if out, err := exec.Command(gcc, "-shared", "-fPIC", "-o", filepath.Join(libDir, "libnvidia-ml.so.1"), src).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	l.env = append(l.env, "LD_LIBRARY_PATH="+libDir)
	recordLong(t, l, "nvml")
	e, span, ss := energyOf(t, l)
	if e.Code != "" || e.Method != clocks.MethodCounter || e.Scope != clocks.EnergyScopeGPU {
		t.Fatalf("energy %+v", e)
	}
	mj := func(s *clocks.Sample) float64 { return float64(*s.EnergyMJ) }
	hand := (byHand(t, ss, span.To, mj) - byHand(t, ss, span.From, mj)) / 1000
	if math.Abs(e.EnergyJ-hand) > 1e-6*hand {
		t.Errorf("energy %.6f J, by hand from the counter %.6f J", e.EnergyJ, hand)
	}
	const tokens = 9000
	jpt := e.EnergyJ / tokens
	if math.Abs(jpt-hand/tokens) > 1e-9 {
		t.Errorf("J per output token %.9f, by hand %.9f", jpt, hand/tokens)
	}
	// The fake counts 412.345 W of real time; the samples are stamped a
	// little before each reading's calls.
	if w := e.MeanPowerW(); math.Abs(w-412.345) > 0.05*412.345 {
		t.Errorf("mean power %.3f W over %.3f s, want about 412.345 W", w, e.DurationS)
	}
	t.Logf("NVML leg: %.3f J over %.3f s (%.3f W), %.6f J per output token for %d tokens; by power %.3f J",
		e.EnergyJ, e.DurationS, e.MeanPowerW(), jpt, tokens, *e.IntegralJ)
}

// A leg recorded through the fake nvidia-smi has no counter: the window's
// energy is the trapezoid of power.draw (312.45 W, the fake's), the
// window's length times it.
func TestEnergyRecordedSMI(t *testing.T) {
	if testing.Short() {
		t.Skip("records a 24 s leg")
	}
	t.Parallel()
	l := newRecTools(t).leg(t, nil)
	recordLong(t, l, "nvidia-smi")
	e, span, ss := energyOf(t, l)
	if e.Code != "" || e.Method != clocks.MethodIntegration || e.CounterJ != nil {
		t.Fatalf("energy %+v", e)
	}
	if ss[0].EnergyMJ != nil {
		t.Fatalf("an nvidia-smi sample with energy_mj: %+v", ss[0])
	}
	want := 312.45 * float64(span.To-span.From) / 1e9
	if math.Abs(e.EnergyJ-want) > 1e-6*want {
		t.Errorf("energy %.6f J, want 312.45 W × %.3f s = %.6f J", e.EnergyJ, e.DurationS, want)
	}
}
