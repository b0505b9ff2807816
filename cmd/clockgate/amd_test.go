package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// amdLeg is a leg recorded through the fake amd-smi
// (sampler/testdata/fakeamdsmi), configured with cfg, first on PATH; no
// nvidia-smi is on that PATH.
func (tools *recTools) amdLeg(t *testing.T, engine string, cfg map[string]any) *recLeg {
	t.Helper()
	l := tools.leg(t, nil)
	os.Remove(filepath.Join(l.smiDir, "nvidia-smi"))
	bin := filepath.Join(l.smiDir, "amd-smi")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/clockgate/clockgate/sampler/testdata/fakeamdsmi")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the fake amd-smi: %v\n%s", err, out)
	}
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(l.smiDir, "fakeamdsmi.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	l.prefix = filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(l.prefix))), "clocks", "m", engine, "r1")
	// Only the fake's directory and the system's: no nvidia-smi.
	for i, kv := range l.env {
		if strings.HasPrefix(kv, "PATH=") {
			l.env[i] = "PATH=" + l.smiDir + ":/usr/bin:/bin"
		}
	}
	return l
}

// amdCheck is what clockgate check --json says of one record.
type amdCheck struct {
	Path            string          `json:"path"`
	BindingEligible bool            `json:"binding_eligible"`
	Reasons         []clocks.Reason `json:"reasons"`
}

func TestRecordThroughAMDSMI(t *testing.T) {
	tools := newRecTools(t)
	// 36 readings: past the 30 busy samples a leg needs. The legs are
	// recorded at once.
	start := func(l *recLeg, backend string, iv time.Duration) func() {
		p := l.start("", append([]string{"record", "--out", l.prefix, "--interval", iv.String(), "--backend", backend, "--"}, l.untilLines(36)...)...)
		return func() {
			t.Helper()
			if code := p.wait(t); code != 0 {
				t.Fatalf("record: exit %d\n%s", code, p.stderr.String())
			}
			if !strings.Contains(p.stderr.String(), "clockgate record: sampling amd-smi (") {
				t.Errorf("no backend line:\n%s", p.stderr.String())
			}
		}
	}
	check := func(l *recLeg) amdCheck {
		t.Helper()
		_, stdout, stderr := l.run("", "check", "--json", l.record())
		var got []amdCheck
		if err := json.Unmarshal([]byte(stdout), &got); err != nil || len(got) != 1 {
			t.Fatalf("check --json: %v\n%s\n%s", err, stdout, stderr)
		}
		return got[0]
	}
	// The XCDs' clocks move within a reading and between readings; the
	// lowest stays within 1% of 2080 MHz.
	plan := []map[string]any{{"mhz": 2080}, {"mhz": 2090}, {"mhz": 2080}, {"mhz": 2075}}

	// A thermal violation accrued within the window: 0x40, clock.throttle.
	hotPlan := append([]map[string]any{}, plan...)
	hotPlan = append(hotPlan, map[string]any{"mhz": 2080, "advance": map[string]any{"socket_thermal_accumulated": 2}})
	// At 250 ms; where a loaded machine held a reading back past 3
	// intervals (clock.coverage, rightly: the premise of a clean leg
	// broken, as each stream measures it), once more at 500 ms.
	var clean, other, hot *recLeg
	iv := 250 * time.Millisecond
	for ; ; iv *= 2 {
		clean = tools.amdLeg(t, "sglang", map[string]any{"plan": plan, "cycle": true})
		// auto picks amd-smi where no NVIDIA driver answers; a second leg
		// of another engine on the same GPU compares as established.
		other = tools.amdLeg(t, "vllm", map[string]any{"plan": plan, "cycle": true})
		hot = tools.amdLeg(t, "hot", map[string]any{"plan": hotPlan})
		waits := []func(){start(clean, "amd-smi", iv), start(other, "auto", iv), start(hot, "amd-smi", iv)}
		for _, wait := range waits {
			wait()
		}
		gap := max(clean.maxGap(), other.maxGap(), hot.maxGap())
		if gap <= clocks.MaxGapIntervals*iv || iv >= 500*time.Millisecond {
			break
		}
		t.Logf("interval %v: the machine held a reading back %v: again at %v", iv, gap, 2*iv)
	}
	rec := clean.readRecord(clocks.StopCommandExit, iv.Seconds())
	if g := rec.GPUs[0]; g.Vendor != "amd" || g.PerfLevel != "AUTO" || g.MemoryPartition != "NPS1" || g.PersistenceMode != "" || g.Name != "AMD Instinct MI300X" {
		t.Errorf("record GPU %+v", g)
	}
	if c := check(clean); !c.BindingEligible || len(c.Reasons) != 0 {
		t.Fatalf("clean AMD leg: %+v", c)
	}
	_, samples := clean.readStream()
	// The first reading is the plan's second step (the probe took the first).
	if s := samples[0]; len(s.XCDClocksMHz) != 8 || s.SMClockMHz != 2090 || s.EnforcedPowerLimitW == nil || *s.EnforcedPowerLimitW != 750 {
		t.Errorf("sample %+v", s)
	}
	calls, _ := os.ReadFile(filepath.Join(clean.smiDir, "fakeamdsmi.log"))
	for _, c := range strings.Split(strings.TrimSpace(string(calls)), "\n") {
		if c != "list --json" && c != "static --asic --bus --driver --limit --partition --json" &&
			c != "metric -g 0 --usage --power --clock --temperature --perf-level --mem-usage --pcie --violation --energy --json" {
			t.Errorf("amd-smi was called with %q", c)
		}
	}

	code, stdout, stderr := clean.run("", "compare", "--ours", clean.record(), "--baseline", other.record(), "--json")
	var block struct {
		Established bool            `json:"established"`
		Reasons     []clocks.Reason `json:"reasons"`
	}
	if err := json.Unmarshal([]byte(stdout), &block); err != nil || code != 0 || !block.Established {
		t.Fatalf("compare two AMD legs: exit %d %v %s\n%s", code, err, stdout, stderr)
	}

	c := check(hot)
	if c.BindingEligible || len(c.Reasons) != 1 || c.Reasons[0].Code != clocks.CodeThrottle || !strings.Contains(c.Reasons[0].Message, "violation bits in busy samples: 0x0000000000000040 HwThermal (thermal: socket, VR or HBM, TVIOL)") {
		t.Fatalf("thermal AMD leg: %+v", c)
	}

	// A compute-partitioned GPU is a usage error, saying what to do, and
	// nothing is written.
	cpx := tools.amdLeg(t, "cpx", map[string]any{"compute_partition": "CPX"})
	code, _, stderr = cpx.run("", "record", "--out", cpx.prefix, "--backend", "amd-smi", "--", "true")
	if code != ExitUsage || !strings.Contains(stderr, "GPU 0 (abff74a1-0000-1000-80d1-3c23a9580000) is in compute partition mode CPX: clockgate samples whole GPUs") ||
		!strings.Contains(stderr, "set the GPU to SPX") {
		t.Fatalf("CPX: exit %d\n%s", code, stderr)
	}
	cpx.noFile(cpx.stream())

	// An AMD arm against an NVIDIA arm: clock.hardware_mismatch.
	nv := tools.leg(t, nil)
	code, _, stderr = nv.run("", "record", "--out", nv.prefix, "--interval", "100ms", "--backend", "nvidia-smi", "--", "sh", "-c", "sleep 0.5")
	if code != 0 {
		t.Fatalf("nvidia record: %s", stderr)
	}
	_, stdout, _ = clean.run("", "compare", "--ours", clean.record(), "--baseline", nv.record(), "--json")
	if err := json.Unmarshal([]byte(stdout), &block); err != nil || block.Established {
		t.Fatalf("AMD against NVIDIA: %v %s", err, stdout)
	}
	found := false
	for _, r := range block.Reasons {
		found = found || r.Code == clocks.CodeHardwareMismatch && strings.Contains(r.Message, `vendor: ours "amd", baseline "nvidia"`)
	}
	if !found {
		t.Errorf("no hardware mismatch naming the vendor: %+v", block.Reasons)
	}
}
