package summarize_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// TestHostScaleTree writes, where $CLOCKGATE_HOST_SCALE names a directory,
// a tree of legs with host streams for timing summarize against cat
// (docs/performance-notes.md): $CLOCKGATE_HOST_SCALE_LEGS legs (40) of
// 3,600 one-second ticks, half of them fastengine's, half vllm's.
func TestHostScaleTree(t *testing.T) {
	dir := os.Getenv("CLOCKGATE_HOST_SCALE")
	if dir == "" {
		t.Skip("CLOCKGATE_HOST_SCALE unset")
	}
	legs, _ := strconv.Atoi(os.Getenv("CLOCKGATE_HOST_SCALE_LEGS"))
	if legs == 0 {
		legs = 40
	}
	start := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	st := &clocks.HostStatic{Name: "vm", CPUModel: "Intel(R) Xeon(R) Processor", LogicalCPUs: 2, MemoryTotalMiB: 24105,
		Kernel: "6.18.44-fc-v1147", SMT: "off", NUMANodes: 1, Virtualized: true, CPUsAllowedList: []string{"0-1"}}
	for i := 0; i < legs; i++ {
		engine := []string{"fastengine", "vllm"}[i%2]
		prefix := filepath.Join(dir, "clocks", "m", engine, fmt.Sprintf("r%d", i/2+1))
		must(t, os.MkdirAll(filepath.Dir(prefix), 0o755))
		var gpu, host []byte
		host = append(st.AppendJSON(host), '\n')
		f := clocks.NewFold()
		ticks := clocks.BusyTicks{}
		for k := 0; k < 3600; k++ {
			ts := start.Add(time.Duration(i*4000+k) * time.Second).Format("2006-01-02T15:04:05.000Z")
			s := &clocks.Sample{T: ts, BootID: "13dc5579-455c-45c8-8e4d-d09c457fa826", GPUUUID: "GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4",
				GPUName: "NVIDIA H100 80GB HBM3", DriverVersion: "590.44.01", SMClockMHz: 1980 - k%7, ClocksMaxSMMHz: 1980,
				ThrottleReasonsActive: "0x0000000000000000", PersistenceMode: "Enabled", PState: "P0", UtilizationGPUPct: 97}
			gpu = append(s.AppendJSON(gpu), '\n')
			f.Add(s, k+1)
			ticks.Add(ts, true)
			mhz := 2400.0 + float64(k%5)
			l := &clocks.HostLine{T: ts, CPU: clocks.HostCPU{Busy: 0.6125, Steal: 0.0031, IOWait: 0.0004}, OwnCPU: 1.118, OwnWait: 0.009, OtherCPU: 0.107,
				Top: []clocks.HostProc{{PID: 1234, Comm: "python3", Cores: 0.061}, {PID: 88, Comm: "kworker/1:2", Cores: 0.012}, {PID: 901, Comm: "sshd", Cores: 0.004}},
				PSI: &clocks.HostPSI{CPUSome: 522058217 + int64(k)*1000, MemoryFull: 0, IOFull: 3800264}, CPUMHz: &mhz}
			host = append(l.AppendJSON(host), '\n')
		}
		rec, err := f.Record(1, clocks.StopPIDExit)
		must(t, err)
		rec.Host, err = clocks.FoldHostStream(bytes.NewReader(host), "", &ticks)
		must(t, err)
		data, err := json.MarshalIndent(rec, "", "  ")
		must(t, err)
		must(t, os.WriteFile(prefix+".samples.jsonl", gpu, 0o644))
		must(t, os.WriteFile(prefix+".host.jsonl", host, 0o644))
		must(t, os.WriteFile(prefix+".summary.json", data, 0o644))
	}
}
