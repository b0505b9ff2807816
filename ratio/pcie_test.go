package ratio

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// pcieArm is one clean leg of 60 busy samples at 2000 MHz on a GPU whose
// PCIe link runs at its maximum, Gen genMax x16.
func pcieArm(t *testing.T, engine string, genMax int) Arm {
	t.Helper()
	apps, width := 2418, 16
	var stream bytes.Buffer
	fold := clocks.NewFold()
	start := time.Date(2026, 8, 12, 9, 0, 0, 0, time.UTC)
	for i := 0; i < 60; i++ {
		s := clocks.Sample{T: start.Add(time.Duration(i) * time.Second).Format(time.RFC3339Nano), BootID: boot,
			GPUUUID: "GPU-5f3c2a91", GPUName: "NVIDIA GB10", DriverVersion: "580.159.03", ClocksMaxSMMHz: 3003,
			ClocksApplicationsGraphicsMHz: &apps, ThrottleReasonsActive: "0x0000000000000000", PersistenceMode: "Enabled",
			PState: "P0", SMClockMHz: 2000, UtilizationGPUPct: 97,
			PCIeGen: &genMax, PCIeWidth: &width, PCIeGenMax: &genMax, PCIeWidthMax: &width}
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
	l := clocks.JudgeLeg("r1", data, &stream, nil)
	if !l.Eligible() {
		t.Fatalf("%s r1 is not clean: %+v", engine, l.Reasons)
	}
	return Arm{Engine: engine, Legs: []*Leg{{Clock: l, Points: points("m/M", 100), PeakGPUMemoryMiB: mem(1000)}}}
}

// host.mismatch's PCIe part voids both families, whichever arm ran on the
// slower box, and never while the clock block stands established.
func TestPCIeHostMismatchVoidsBothFamilies(t *testing.T) {
	for _, slow := range []string{"ours", "baseline"} {
		oursGen, baseGen := 5, 5
		if slow == "ours" {
			oursGen = 4
		} else {
			baseGen = 4
		}
		c, err := Compare("m", pcieArm(t, "fastserve", oursGen), pcieArm(t, "vllm", baseGen), false)
		if err != nil {
			t.Fatal(err)
		}
		if !c.Throughput.Clock.Established || c.Throughput.BindingEligible || c.Memory.BindingEligible {
			t.Errorf("%s slower: clock %v, throughput %v, memory %v", slow, c.Throughput.Clock.Established, c.Throughput.BindingEligible, c.Memory.BindingEligible)
		}
		for _, rs := range [][]clocks.Reason{c.Throughput.Reasons, c.Memory.Reasons} {
			if !slices.Contains(codes(rs), clocks.CodeHostMismatch) || !strings.Contains(strings.Join(messagesOf(rs), "\n"), "PCIe maximum fastserve Gen") {
				t.Errorf("%s slower: reasons %v", slow, messagesOf(rs))
			}
		}
	}
	c, err := Compare("m", pcieArm(t, "fastserve", 5), pcieArm(t, "vllm", 5), false)
	if err != nil || !c.Throughput.BindingEligible || !c.Memory.BindingEligible {
		t.Errorf("one box: %v, %v", c, err)
	}
}
