package sampler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// The PCIe columns of a real capture (eight H100s on driver 535, see
// testdata/real-smi/README.md) read as the sampler reads its own query:
// the header names map to the canonical fields, older spelling included,
// and every GPU's link is Gen5 x16 at its maximum Gen5.
func TestPCIeRealSMIColumns(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "real-smi", "query-gpu-8xH100-pcie.csv"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(data)), "\n")
	header := splitCSV(lines[0])
	cols := map[string]int{}
	for i, h := range header {
		if f, ok := canonicalField(unitRE.ReplaceAllString(h, "")); ok && pcieIndex(f) >= 0 {
			cols[f] = i
		}
	}
	// The capture has no pcie.link.width.max; the other three are read.
	if len(cols) != 3 || cols[PCIeQueryFields[clocks.PCIeGen]] != 21 || cols[PCIeQueryFields[clocks.PCIeGenMax]] != 6 {
		t.Fatalf("columns %v", cols)
	}
	for _, line := range lines[1:] {
		cells := splitCSV(line)
		r := &Reading{}
		for f, i := range cols {
			if err := r.set(f, cells[i]); err != nil {
				t.Fatal(err)
			}
		}
		if r.PCIe != [clocks.NumPCIe]int{5, 16, 5, 0} || r.HasPCIe != [clocks.NumPCIe]bool{true, true, true, false} {
			t.Errorf("%s: link %v %v", cells[1], r.PCIe, r.HasPCIe)
		}
	}
	for _, bad := range []string{"0", "65", "16x", "Gen5", "[N/A]"} {
		if err := (&Reading{}).set(PCIeQueryFields[clocks.PCIeWidth], bad); err == nil {
			t.Errorf("%q read as a width", bad)
		}
	}
}

// The fake nvidia-smi serves the link where the driver knows it: at the
// maximum, or, degraded, Gen4 x8 while busy against a Gen5 x16 maximum,
// and at the maximum again when idle.
func TestPCIeFakeSMI(t *testing.T) {
	t.Parallel()
	idle := smiStep{Values: map[string]string{"utilization.gpu": "0"}}
	s, _, err := newSMI(t, smiConfig{PCIe: true, PCIeDegraded: true, Plan: []smiStep{{}, {}, idle}}, 0)
	if err != nil {
		t.Fatal(err)
	}
	busy, err := one(s.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	if line := string(busy.AppendJSON(nil)); !strings.HasSuffix(line, `"pcie_gen":4,"pcie_width":8,"pcie_gen_max":5,"pcie_width_max":16}`) {
		t.Errorf("busy %s", line)
	}
	quiet, err := one(s.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	if line := string(quiet.AppendJSON(nil)); !strings.HasSuffix(line, `"pcie_gen":5,"pcie_width":16,"pcie_gen_max":5,"pcie_width_max":16}`) {
		t.Errorf("idle %s", line)
	}
}

// NVML's PCIe link (nvmlDeviceGetCurrPcieLinkGeneration/Width and the
// Max calls): kept where every GPU answers at open, the four dropped
// together naming the call where one does not, a refusal naming it when
// it stops answering; the fake's degraded link runs at Gen4 x8 while busy.
func TestPCIeNVML(t *testing.T) {
	g := newFakeNVML()
	g.pcieRet, g.pcieDegraded = nvmlSuccess, true
	n, err := NewNVML(g, GPUIndices(0), time.Second, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	if got := string(smp.AppendJSON(nil)); !strings.HasSuffix(got, `"pcie_gen":4,"pcie_width":8,"pcie_gen_max":5,"pcie_width_max":16}`) ||
		!strings.HasSuffix(n.Name(), " pcie.link.gen.gpucurrent pcie.link.width.current pcie.link.gen.max pcie.link.width.max") {
		t.Errorf("sample %s, name %q", got, n.Name())
	}
	g.set(func(g *fakeNVML) { g.util = 0 })
	if smp, err = one(n.Read(context.Background(), time.Now(), testBoot)); err != nil || *smp.PCIeGen != 5 || *smp.PCIeWidth != 16 {
		t.Errorf("idle: %v, %v", smp, err)
	}
	g.set(func(g *fakeNVML) { g.pcieRet = nvmlErrorUnknown })
	if _, err := n.Read(context.Background(), time.Now(), testBoot); err == nil ||
		err.Error() != "NVML GPU 0: pcie.link.gen.gpucurrent: nvmlDeviceGetCurrPcieLinkGeneration returned ERROR_UNKNOWN" {
		t.Errorf("err = %v", err)
	}
	for _, c := range []struct {
		set func(*fakeNVML)
		log string
	}{
		{func(g *fakeNVML) {}, "NVML: optional fields pcie.link.* dropped: nvmlDeviceGetCurrPcieLinkGeneration: ERROR_NOT_SUPPORTED (5)"},
		{func(g *fakeNVML) { g.pcieRet, g.pcie[3] = nvmlSuccess, 0 }, "NVML: optional fields pcie.link.* dropped: nvmlDeviceGetMaxPcieLinkWidth: SUCCESS (0)"},
	} {
		g := newFakeNVML()
		c.set(g)
		var logs []string
		n, err := NewNVML(g, GPUIndices(0), time.Second, func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) })
		if err != nil {
			t.Fatal(err)
		}
		smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
		if err != nil || smp.PCIeGen != nil || smp.PCIeWidthMax != nil || !slices.Contains(logs, c.log) {
			t.Errorf("%v, %v; logs %q\nwant %q", smp, err, logs, c.log)
		}
	}
}

// amd-smi's PCIe link: the current one from metric --pcie's pcie block,
// the maximum from static --bus's bus block, each a width and a speed in
// GT/s that names the generation. A real Radeon's idle link (ROCm 7,
// testdata/amd-smi-real) reads as Gen1 x8.
func TestPCIeAMDRealMetric(t *testing.T) {
	data, err := os.ReadFile(filepath.Join("testdata", "amd-smi-real", "rocm7-metric-2gpu-radeon.json"))
	if err != nil {
		t.Fatal(err)
	}
	gs, err := amdGPUs(data)
	if err != nil || len(gs) != 2 {
		t.Fatalf("%d GPUs, %v", len(gs), err)
	}
	for _, g := range gs {
		if gen, width, err := amdPCIeLink(g, amdPCIeSpeed, amdPCIeWidth); err != nil || gen != 1 || width != 8 {
			t.Errorf("link Gen%d x%d, %v", gen, width, err)
		}
	}
}

// The fake amd-smi serves the link where the GPU gives it: Gen5 x16 at
// the maximum, or, degraded, Gen4 x8 while busy; where it prints N/A the
// four fields are dropped together, saying so; a GPU that stops giving
// it is a refusal.
func TestPCIeFakeAMD(t *testing.T) {
	t.Parallel()
	idle := 0
	a, _, err := newAMD(t, amdConfig{PCIe: true, PCIeDegraded: true, Plan: []*amdStep{{}, {}, {Activity: &idle}, {NA: []string{"pcie.width"}}}}, "0")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"pcie_gen":4,"pcie_width":8,"pcie_gen_max":5,"pcie_width_max":16}`, `"pcie_gen":5,"pcie_width":16,"pcie_gen_max":5,"pcie_width_max":16}`} {
		smp, err := one(a.Read(context.Background(), time.Now(), testBoot))
		if err != nil {
			t.Fatal(err)
		}
		if line := string(smp.AppendJSON(nil)); !strings.HasSuffix(line, want) {
			t.Errorf("sample %s, want …%s", line, want)
		}
	}
	if _, err := a.Read(context.Background(), time.Now(), testBoot); err == nil || !strings.Contains(err.Error(), `GPU 0: pcie.width: "N/A"`) ||
		!strings.Contains(err.Error(), "(it gave it at the probe)") {
		t.Errorf("err = %v", err)
	}
	var logs []string
	path := installFakeAMD(t, amdConfig{})
	a, err = NewAMDSMI(context.Background(), AMDSMIOptions{Path: path, GPUs: DefaultSelection(), Logf: func(f string, args ...any) { logs = append(logs, fmt.Sprintf(f, args...)) }})
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(a.Read(context.Background(), time.Now(), testBoot))
	if err != nil || smp.PCIeGen != nil || smp.PCIeWidthMax != nil {
		t.Errorf("%v, %v", smp, err)
	}
	if want := `amd-smi: optional fields pcie_gen, pcie_width, pcie_gen_max, pcie_width_max dropped: GPU 0: pcie.speed: "N/A"`; !slices.ContainsFunc(logs, func(l string) bool { return strings.HasPrefix(l, want) }) {
		t.Errorf("logs %q\nwant %s…", logs, want)
	}
}
