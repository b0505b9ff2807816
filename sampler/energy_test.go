package sampler

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// withEnergy gives the fake field 83, the energy counter in mJ, at the
// GPU's scope, growing by step mJ each reading.
func (g *fakeNVML) withEnergy(mj, step uint64) *fakeNVML {
	g.symbols[symFieldValues] = true
	g.fields[nvmlFieldTotalEnergy] = nvmlFieldValue{FieldID: nvmlFieldTotalEnergy, ValueType: nvmlValueUlonglong, Value: mj}
	g.energyStep = step
	return g
}

// The energy counter rides in the counters' own nvmlDeviceGetFieldValues
// call, at the GPU's scope: energy_mj and energy_scope "gpu" join the
// sample and the name lists it.
func TestSamplerNVMLEnergyField(t *testing.T) {
	g := newFakeNVML().withCounters().withEnergy(123_456_789, 1000)
	n, err := NewNVML(g, GPUIndices(0), time.Second, t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	if len(n.reqs) != 6 || n.reqs[5] != (nvmlFieldReq{ID: 83, Scope: 0}) {
		t.Fatalf("field requests %v: want the five counters and field 83 in one call", n.reqs)
	}
	smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	line := string(smp.AppendJSON(nil))
	if !strings.HasSuffix(line, `,"energy_mj":`+strconv.FormatInt(*smp.EnergyMJ, 10)+`,"energy_scope":"gpu"}`) || *smp.EnergyMJ < 123_456_789 {
		t.Fatalf("sample %s", line)
	}
	if !strings.HasSuffix(n.Name(), " "+FieldEnergy) {
		t.Errorf("name %q", n.Name())
	}
	// A counter that stops answering mid-window is a refusal naming it.
	g.set(func(g *fakeNVML) {
		g.fields[nvmlFieldTotalEnergy] = nvmlFieldValue{FieldID: nvmlFieldTotalEnergy, Return: nvmlErrorUnknown}
	})
	_, err = n.Read(context.Background(), time.Now(), testBoot)
	if err == nil || err.Error() != "NVML GPU 0: energy_mj: nvmlDeviceGetFieldValues(field 83) returned ERROR_UNKNOWN" {
		t.Fatalf("err = %v", err)
	}
}

// Where the GPU's scope fails and the module's answers (Grace), the
// counter is the module's: energy_scope "module".
func TestSamplerNVMLEnergyModuleScope(t *testing.T) {
	g := newFakeNVML()
	g.symbols[symFieldValues] = true
	g.moduleFields = map[uint32]nvmlFieldValue{83: {FieldID: 83, ValueType: nvmlValueUlonglong, Value: 5_000_000}}
	var logs []string
	n, err := NewNVML(g, GPUIndices(0), time.Second, func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) })
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil || smp.EnergyScope == nil || *smp.EnergyScope != "module" || *smp.EnergyMJ != 5_000_000 {
		t.Fatalf("sample %+v, %v", smp, err)
	}
	if !strings.Contains(strings.Join(logs, "\n"), "energy_mj is the module's energy (field 83 at NVML_POWER_SCOPE_MODULE") {
		t.Errorf("logs %q", logs)
	}
}

// Without field 83 the sampler asks nvmlDeviceGetTotalEnergyConsumption;
// without either it drops energy_mj, saying so.
func TestSamplerNVMLEnergyCall(t *testing.T) {
	g := newFakeNVML()
	g.symbols[symTotalEnergy] = true
	g.energyMJ, g.energyStep = 7_000_000, 400_000
	n, err := NewNVML(g, GPUIndices(0), time.Second, nil)
	if err != nil {
		t.Fatal(err)
	}
	a, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil {
		t.Fatal(err)
	}
	b, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil || *b.EnergyMJ-*a.EnergyMJ != 400_000 || *a.EnergyScope != "gpu" {
		t.Fatalf("%v then %v (%v)", *a.EnergyMJ, *b.EnergyMJ, err)
	}
	g.set(func(g *fakeNVML) { g.energyRet = nvmlErrorGPUIsLost })
	_, err = n.Read(context.Background(), time.Now(), testBoot)
	if err == nil || err.Error() != "NVML GPU 0: energy_mj: nvmlDeviceGetTotalEnergyConsumption returned ERROR_GPU_IS_LOST: a counter that stops answering mid-window is refused" {
		t.Fatalf("err = %v", err)
	}

	g = newFakeNVML()
	var logs []string
	n, err = NewNVML(g, GPUIndices(0), time.Second, func(f string, a ...any) { logs = append(logs, fmt.Sprintf(f, a...)) })
	if err != nil {
		t.Fatal(err)
	}
	smp, err := one(n.Read(context.Background(), time.Now(), testBoot))
	if err != nil || smp.EnergyMJ != nil || smp.EnergyScope != nil || strings.Contains(n.Name(), FieldEnergy) {
		t.Fatalf("sample %+v, name %q, %v", smp, n.Name(), err)
	}
	if !strings.Contains(strings.Join(logs, "\n"), "NVML: optional field energy_mj dropped: neither nvmlDeviceGetFieldValues (field 83) nor nvmlDeviceGetTotalEnergyConsumption answers") {
		t.Errorf("logs %q", logs)
	}
}

// amd-smi metric --energy rides in the reading's own call: its
// energy.total_energy_consumption, in J, is recorded ×1000 rounded as
// energy_mj, scope "gpu"; the fake adds each call's socket power for a
// second.
func TestAMDSMIEnergy(t *testing.T) {
	t.Parallel()
	a, _, err := newAMD(t, amdConfig{GPUs: 2}, "all")
	if err != nil {
		t.Fatal(err)
	}
	first := readAMD(t, a)
	second := readAMD(t, a)
	if first[0].EnergyMJ == nil || *first[0].EnergyMJ != 20909145914+612000 || *first[0].EnergyScope != "gpu" {
		t.Fatalf("GPU 0 energy %v, scope %v", first[0].EnergyMJ, first[0].EnergyScope)
	}
	if d := *second[1].EnergyMJ - *first[1].EnergyMJ; d != 612000 {
		t.Errorf("GPU 1's counter advanced %d mJ in one call, want 612000 (612 W for a second)", d)
	}
}

// An amd-smi whose counter is N/A at the probe drops energy_mj; one that
// stops answering it mid-run is refused, naming the field.
func TestAMDSMIEnergyNA(t *testing.T) {
	t.Parallel()
	na := &amdStep{NA: []string{"energy.total_energy_consumption"}}
	a, path, err := newAMD(t, amdConfig{Plan: []*amdStep{na, {}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	if s := readAMD(t, a)[0]; s.EnergyMJ != nil || s.EnergyScope != nil {
		t.Fatalf("energy %v after an N/A probe", s.EnergyMJ)
	}
	if calls := amdCalls(t, path); strings.Contains(calls[len(calls)-1], "--energy") {
		t.Errorf("still asking for --energy: %q", calls[len(calls)-1])
	}
	a, _, err = newAMD(t, amdConfig{Plan: []*amdStep{{}, {}, na}}, "")
	if err != nil {
		t.Fatal(err)
	}
	readAMD(t, a)
	_, err = a.Read(context.Background(), time.Date(2026, 12, 1, 10, 0, 1, 0, time.UTC), "13dc5579-455c-45c8-8e4d-d09c457fa826")
	if err == nil || !strings.Contains(err.Error(), `GPU 0: energy.total_energy_consumption: "N/A", where every sample needs a number`) {
		t.Fatalf("err = %v", err)
	}
}

// A real amd-smi metric answer with its energy block (a Radeon's, whose
// counter reads 0.0 J) read through the parser: 0 mJ, and a value of J
// with decimals as ROCm/amdsmi issue #38 prints them (20909145.914 J)
// rounds to whole mJ.
func TestAMDRealEnergy(t *testing.T) {
	gs, err := amdGPUs(realAMD(t, "rocm7-metric-2gpu-radeon.json"))
	if err != nil || len(gs) != 2 {
		t.Fatalf("%d GPUs, %v", len(gs), err)
	}
	for i, g := range gs {
		if mj, err := amdEnergyMJ(g); err != nil || mj != 0 {
			t.Errorf("GPU %d: %d mJ, %v", i, mj, err)
		}
	}
	gs[0].Fields["energy"].Fields["total_energy_consumption"].Fields["value"] = &strictjson.Value{Kind: strictjson.Number, Num: 20909145.914, Raw: "20909145.914"}
	if mj, err := amdEnergyMJ(gs[0]); err != nil || mj != 20909145914 {
		t.Errorf("%d mJ, %v", mj, err)
	}
	gs[0].Fields["energy"].Fields["total_energy_consumption"].Fields["unit"] = &strictjson.Value{Kind: strictjson.String, Str: "mJ"}
	if _, err := amdEnergyMJ(gs[0]); err == nil || err.Error() != `energy.total_energy_consumption.unit: want "J", found string "mJ"` {
		t.Errorf("err = %v", err)
	}
}
