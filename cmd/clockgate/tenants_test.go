package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// record lists the GPU's compute processes at the first and the last
// reading through nvidia-smi --query-compute-apps: the sampler's own
// process tree is own, a process visible in /proc outside it (one this
// test starts) is foreign and fails the leg with clock.foreign_process, a
// pid /proc does not show is unknown, and a process on a GPU not sampled
// is left out.
func TestRecordForeignProcess(t *testing.T) {
	tools := newRecTools(t)
	l := tools.leg(t, map[string]any{"compute_apps": "apps.csv", "gpus": 2})
	other := exec.Command("sleep", "30")
	if err := other.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { other.Process.Kill(); other.Wait() })
	const gpu0, gpu1 = "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30", "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31"
	const gone = 2147483000 // no such pid in this /proc
	apps := fmt.Sprintf("@parent, clockgate-own, %s\n%d, /usr/bin/trainer, %s\n%d, vllm serve, %s\n%d, elsewhere, %s\n",
		gpu0, other.Process.Pid, gpu0, gone, gpu0, other.Process.Pid, gpu1)
	if err := os.WriteFile(filepath.Join(l.smiDir, "apps.csv"), []byte(apps), 0o644); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := l.run("", "record", "--out", l.prefix, "--interval", recInterval.String(), "--backend", "nvidia-smi", "--gpu", "0", "--", "sleep", "0.3")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "verdict: ") || !strings.Contains(stderr, clocks.CodeForeignProcess) {
		t.Errorf("verdict does not name %s:\n%s", clocks.CodeForeignProcess, stderr)
	}
	data, err := os.ReadFile(l.record())
	if err != nil {
		t.Fatal(err)
	}
	rec, err := clocks.ParseRecord(data)
	if err != nil {
		t.Fatal(err)
	}
	cp := rec.ComputeProcesses
	if cp == nil {
		t.Fatalf("no compute_processes in the record; stderr:\n%s", stderr)
	}
	for _, ps := range [][]clocks.ComputeProcess{cp.First, cp.Last} {
		if len(ps) != 3 {
			t.Fatalf("processes %+v, want 3 on GPU 0", ps)
		}
		procs := map[string]string{}
		for _, p := range ps {
			if p.GPUUUID != gpu0 {
				t.Errorf("a process on another GPU: %+v", p)
			}
			procs[p.Name] = p.Proc
		}
		if procs["clockgate-own"] != clocks.ProcOwn || procs["/usr/bin/trainer"] != clocks.ProcForeign || procs["vllm serve"] != clocks.ProcUnknown {
			t.Errorf("classified %v", procs)
		}
	}
	if len(cp.Own) != 1 {
		t.Errorf("own %v", cp.Own)
	}
	leg := clocks.LoadLeg(clocks.LegFiles{Name: "r1", RecordPath: l.record(), StreamPath: l.stream()})
	found := false
	for _, r := range leg.Reasons {
		if r.Code == clocks.CodeForeignProcess {
			found = true
			want := fmt.Sprintf(`pid %d "/usr/bin/trainer" on %s at the first and the last reading`, other.Process.Pid, gpu0)
			if !strings.Contains(r.Message, want) {
				t.Errorf("message %q\nwant it to hold %q", r.Message, want)
			}
		}
	}
	if !found {
		t.Errorf("reasons %v", leg.Reasons)
	}
}

// Where the driver cannot list compute processes, the record has none
// and says nothing new: the leg is judged as before.
func TestRecordWithoutComputeApps(t *testing.T) {
	tools := newRecTools(t)
	l := tools.leg(t, nil)
	code, _, stderr := l.run("", "record", "--out", l.prefix, "--interval", recInterval.String(), "--backend", "nvidia-smi", "--", "sleep", "0.3")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if rec := l.readRecord(clocks.StopCommandExit, 0.1); rec.ComputeProcesses != nil {
		t.Errorf("compute_processes %+v", rec.ComputeProcesses)
	}
	if !strings.Contains(stderr, "compute processes not recorded: nvidia-smi --query-compute-apps=pid,process_name,gpu_uuid") {
		t.Errorf("stderr:\n%s", stderr)
	}
}
