package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// smiCalls returns the argument lists the leg's fake nvidia-smi was called
// with.
func (l *recLeg) smiCalls() []string {
	l.t.Helper()
	data, err := os.ReadFile(filepath.Join(l.smiDir, "fakesmi.log"))
	if err != nil {
		l.t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(data)), "\n")
}

// ticks checks that the stream is whole ticks of the given GPUs, in order,
// each tick's rows at one time, and returns the number of ticks.
func (l *recLeg) ticks(gpus ...int) int {
	l.t.Helper()
	_, rows := l.readStream()
	if len(rows) == 0 || len(rows)%len(gpus) != 0 {
		l.t.Fatalf("%d rows for %d GPUs", len(rows), len(gpus))
	}
	for k := 0; k < len(rows)/len(gpus); k++ {
		for i, g := range gpus {
			if r := rows[k*len(gpus)+i]; r.GPUIndex != g || r.T != rows[k*len(gpus)].T {
				l.t.Errorf("tick %d row %d: %s", k, i, r.AppendJSON(nil))
			}
		}
	}
	return len(rows) / len(gpus)
}

// gpuValues sets per-GPU values in a fake nvidia-smi configuration.
func gpuValues(n int, f func(i int) map[string]any) map[string]any {
	v := map[string]any{}
	for i := 0; i < n; i++ {
		v[strconv.Itoa(i)] = f(i)
	}
	return v
}

// the four RTX 3090s a real box listed (sampler/testdata/real-smi).
var real3090 = []string{
	"GPU-e1924eea-b9bb-d537-39f2-b345087fa145",
	"GPU-899c71bf-27be-b6a0-ae8f-d8afe5ba0f85",
	"GPU-acd314e9-4c7a-4824-eb0f-b6e38b1ec38c",
	"GPU-2639988f-1756-0583-db8f-faee38effce2",
}

// TestSampleSeveralGPUs runs the real commands on several GPUs: one stream
// per leg, one row per GPU per tick, one nvidia-smi call per tick, the GPUs
// chosen by --gpu or CUDA_VISIBLE_DEVICES and named on the status line,
// and the record the stream folds to.
func TestSampleSeveralGPUs(t *testing.T) {
	tools := newRecTools(t)
	base := []string{"sample", "--interval", "100ms", "--backend", "nvidia-smi", "--max-duration", "450ms"}
	clocks4 := map[string]any{"gpus": 4, "gpu_values": gpuValues(4, func(i int) map[string]any {
		return map[string]any{"clocks.sm": strconv.Itoa(1980 - 15*i), "uuid": real3090[i], "name": "NVIDIA GeForce RTX 3090"}
	})}

	t.Run("TP=4 --gpu 0,1,2,3", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, clocks4)
		code, stdout, stderr := l.run("", append(base, "--out", l.prefix, "--gpu", "0,1,2,3")...)
		if code != 0 || stdout != "" {
			t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
		}
		ticks := l.ticks(0, 1, 2, 3)
		_, rows := l.readStream()
		for i, r := range rows[:4] {
			if r.SMClockMHz != 1980-15*i || r.GPUUUID != real3090[i] {
				t.Errorf("row %d: %s", i, r.AppendJSON(nil))
			}
		}
		l.readRecord(clocks.StopMaxDuration, 0.1)
		var calls []string
		for _, c := range l.smiCalls() {
			if strings.HasPrefix(c, "--query-compute-apps=") {
				continue // the compute processes' listing names no GPU
			}
			if !strings.HasSuffix(c, " -i 0,1,2,3") {
				t.Errorf("call %q", c)
			}
			calls = append(calls, c)
		}
		// The probe, then one call per tick (and at most the one the stop
		// cut short).
		if n := len(calls) - 1; n != ticks && n != ticks+1 {
			t.Errorf("%d reading calls for %d ticks", n, ticks)
		}
		if !strings.Contains(stderr, "clockgate sample: GPUs 0,1,2,3 chosen by --gpu 0,1,2,3\n") ||
			!strings.Contains(stderr, " ticks × 4 GPUs = ") {
			t.Errorf("stderr:\n%s", stderr)
		}
		l.readOnly()
	})

	t.Run("--gpu all on 8 GPUs", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, map[string]any{"gpus": 8})
		code, _, stderr := l.run("", append(base, "--out", l.prefix, "--gpu", "all")...)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		ticks := l.ticks(0, 1, 2, 3, 4, 5, 6, 7)
		var calls []string
		for _, c := range l.smiCalls() {
			// The compute processes' listing names no GPU, and when it
			// runs depends on the machine's pace: not a reading.
			if !strings.HasPrefix(c, "--query-compute-apps=") {
				calls = append(calls, c)
			}
		}
		if calls[0] != "--query-gpu=index,uuid,name --format=csv,noheader,nounits" {
			t.Errorf("first call %q, want the listing", calls[0])
		}
		reading := len(calls) - 2 // after the listing and the probe
		if reading != ticks && reading != ticks+1 {
			t.Errorf("%d nvidia-smi calls for %d ticks of 8 GPUs:\n%s", reading, ticks, strings.Join(calls, "\n"))
		}
		t.Logf("measured: %d ticks of 8 GPUs took %d nvidia-smi calls (the listing and the probe aside), %d stream rows per tick", ticks, reading, 8)
		if !strings.Contains(stderr, "clockgate sample: GPUs 0,1,2,3,4,5,6,7 chosen by --gpu all\n") {
			t.Errorf("stderr:\n%s", stderr)
		}
		l.readRecord(clocks.StopMaxDuration, 0.1)
		l.readOnly()
	})

	t.Run("--gpu by UUID prefix", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, clocks4)
		code, _, stderr := l.run("", append(base, "--out", l.prefix, "--gpu", "GPU-2639988f,GPU-899c71bf")...)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		l.ticks(1, 3)
		_, rows := l.readStream()
		if rows[0].GPUUUID != real3090[1] || rows[1].GPUUUID != real3090[3] {
			t.Errorf("rows %s %s", rows[0].AppendJSON(nil), rows[1].AppendJSON(nil))
		}
		if !strings.Contains(stderr, "clockgate sample: GPUs 1,3 chosen by --gpu GPU-2639988f,GPU-899c71bf (GPU-2639988f is GPU 3, GPU-899c71bf is GPU 1)\n") {
			t.Errorf("stderr:\n%s", stderr)
		}
	})

	t.Run("CUDA_VISIBLE_DEVICES", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, clocks4)
		l.env = append(l.env, "CUDA_VISIBLE_DEVICES=3,1")
		code, _, stderr := l.run("", append(base, "--out", l.prefix)...)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		l.ticks(1, 3)
		if !strings.Contains(stderr, "clockgate sample: GPUs 1,3 chosen by CUDA_VISIBLE_DEVICES=3,1 (no --gpu; CUDA device 0 is GPU 3, CUDA device 1 is GPU 1)\n") {
			t.Errorf("stderr:\n%s", stderr)
		}
		if calls := l.smiCalls(); calls[0] != "--query-gpu=index,uuid,name --format=csv,noheader,nounits" || !strings.HasSuffix(calls[1], " -i 1,3") {
			t.Errorf("calls:\n%s", strings.Join(calls, "\n"))
		}
	})

	t.Run("--gpu wins over CUDA_VISIBLE_DEVICES", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, clocks4)
		l.env = append(l.env, "CUDA_VISIBLE_DEVICES=3,1")
		code, _, stderr := l.run("", append(base, "--out", l.prefix, "--gpu", "2")...)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		l.ticks(2)
		if !strings.Contains(stderr, "clockgate sample: GPU 2 chosen by --gpu 2\n") {
			t.Errorf("stderr:\n%s", stderr)
		}
	})

	t.Run("default GPU 0", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, clocks4)
		code, _, stderr := l.run("", append(base, "--out", l.prefix)...)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		l.ticks(0)
		if !strings.Contains(stderr, "clockgate sample: GPU 0 by default: no --gpu, and CUDA_VISIBLE_DEVICES is not set\n") {
			t.Errorf("stderr:\n%s", stderr)
		}
	})

	t.Run("CUDA_VISIBLE_DEVICES indices, mixed box, PCI bus order", func(t *testing.T) {
		t.Parallel()
		mixed := map[string]any{"gpus": 2, "gpu_values": map[string]any{"1": map[string]any{"name": "NVIDIA A100-SXM4-80GB"}}}
		l := tools.leg(t, mixed)
		l.env = append(l.env, "CUDA_VISIBLE_DEVICES=1,0", "CUDA_DEVICE_ORDER=PCI_BUS_ID")
		code, _, stderr := l.run("", append(base, "--out", l.prefix)...)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		l.ticks(0, 1)
	})

	// A refusal on one GPU refuses the leg, naming the GPU; the stream
	// keeps the whole ticks before it.
	t.Run("refusal on GPU 2", func(t *testing.T) {
		t.Parallel()
		na := map[string]any{"gpu_values": map[string]any{"2": map[string]any{"clocks.sm": "[N/A]"}}}
		l := tools.leg(t, map[string]any{"gpus": 4, "plan": []any{map[string]any{}, map[string]any{}, map[string]any{}, na}})
		code, _, stderr := l.run("", append(base[:len(base)-2], "--out", l.prefix, "--gpu", "0,1,2,3")...)
		const why = `nvidia-smi -i 0,1,2,3: GPU 2: clocks.sm: nvidia-smi printed "[N/A]": no value (not available on this GPU or driver); the driver cannot give clocks.sm, which every sample needs`
		if code != 1 || !strings.Contains(stderr, "clockgate: refusing to sample: "+why) {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		if ticks := l.ticks(0, 1, 2, 3); ticks != 2 {
			t.Errorf("%d ticks kept, want 2", ticks)
		}
		if rec := l.readRecord(clocks.StopRefused, 0.1); !strings.HasPrefix(rec.Refusal, why) {
			t.Errorf("refusal %q", rec.Refusal)
		}
	})
}

// TestSampleGPUSelectionRefused: a selection the box cannot satisfy, or
// that CUDA would read otherwise, is a usage error (exit 2) before anything
// is sampled, and record does not run its command.
func TestSampleGPUSelectionRefused(t *testing.T) {
	tools := newRecTools(t)
	mixed := map[string]any{"gpus": 2, "gpu_values": map[string]any{"1": map[string]any{"name": "NVIDIA A100-SXM4-80GB"}}}
	cases := []struct {
		name string
		cfg  map[string]any
		env  []string
		args []string
		want string
	}{
		{"CUDA_VISIBLE_DEVICES empty", nil, []string{"CUDA_VISIBLE_DEVICES="}, nil,
			"clockgate: CUDA_VISIBLE_DEVICES is set and empty: CUDA sees no GPU, so there is no GPU to sample; pass --gpu, or unset CUDA_VISIBLE_DEVICES to sample GPU 0\n"},
		{"CUDA_VISIBLE_DEVICES stops early", map[string]any{"gpus": 4}, []string{"CUDA_VISIBLE_DEVICES=0,2,-1,1"}, nil,
			`clockgate: CUDA_VISIBLE_DEVICES="0,2,-1,1": entry 3 ("-1") is a negative index; CUDA stops reading at the first invalid entry, so the command sees only 0,2: pass --gpu 0,2 to sample exactly those, or fix CUDA_VISIBLE_DEVICES` + "\n"},
		{"CUDA_VISIBLE_DEVICES a MIG instance", nil, []string{"CUDA_VISIBLE_DEVICES=MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a"}, nil,
			"clockgate: CUDA_VISIBLE_DEVICES=MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a: entry 1 (MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a): a MIG instance, and clockgate samples whole GPUs"},
		{"CUDA_VISIBLE_DEVICES indices on a mixed box", mixed, []string{"CUDA_VISIBLE_DEVICES=1,0"}, nil,
			"clockgate: CUDA_VISIBLE_DEVICES=1,0 names GPUs by CUDA index, and CUDA_DEVICE_ORDER is not set, so CUDA numbers the GPUs fastest first, which on this box of different GPUs (NVIDIA A100-SXM4-80GB; NVIDIA H100 80GB HBM3) need not be nvidia-smi's order: set CUDA_DEVICE_ORDER=PCI_BUS_ID (for the command too), name the GPUs by UUID, or pass --gpu\n"},
		{"CUDA_VISIBLE_DEVICES past the box", map[string]any{"gpus": 2}, []string{"CUDA_VISIBLE_DEVICES=1,2"}, nil,
			"clockgate: CUDA_VISIBLE_DEVICES=1,2: there is no GPU 2 on this box: the driver lists GPU 0 GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30 (NVIDIA H100 80GB HBM3), 1 GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31 (NVIDIA H100 80GB HBM3); CUDA stops reading at an entry it cannot find, so the command sees only 1: pass --gpu 1 to sample exactly those, or fix CUDA_VISIBLE_DEVICES\n"},
		{"--gpu index past the box", map[string]any{"gpus": 2}, nil, []string{"--gpu", "0,5"},
			`clockgate: nvidia-smi -i 0,5 exited with status 6: "No devices were found": nvidia-smi knows no GPU by one of the indices 0,5; nvidia-smi -L lists the GPUs` + "\n"},
		{"--gpu unknown UUID", map[string]any{"gpus": 2}, nil, []string{"--gpu", "GPU-e1924eea"},
			"clockgate: --gpu GPU-e1924eea: no GPU on this box has UUID GPU-e1924eea (or one starting with it): the driver lists GPU 0 "},
		{"--gpu ambiguous UUID prefix", map[string]any{"gpus": 2}, nil, []string{"--gpu", "GPU-7f3a"},
			"clockgate: --gpu GPU-7f3a: UUID prefix GPU-7f3a names 2 GPUs (GPU 0 GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30, GPU 1 GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31): give enough of the UUID to name one\n"},
		{"--gpu a GPU twice", map[string]any{"gpus": 2}, nil, []string{"--gpu", "1,GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31"},
			"clockgate: --gpu 1,GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31 names GPU 1 twice (as 1 and as GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31): name each GPU once\n"},
	}
	for _, c := range cases {
		for _, cmd := range []string{"sample", "record"} {
			t.Run(cmd+" "+c.name, func(t *testing.T) {
				t.Parallel()
				l := tools.leg(t, c.cfg)
				l.env = append(l.env, c.env...)
				marker := filepath.Join(t.TempDir(), "ran")
				args := append([]string{cmd, "--out", l.prefix, "--interval", "100ms", "--backend", "nvidia-smi"}, c.args...)
				if cmd == "record" {
					args = append(args, "--", "sh", "-c", "touch "+marker)
				}
				code, stdout, stderr := l.run("", args...)
				want := c.want
				if cmd == "record" {
					want = strings.TrimSuffix(want, "\n") // record adds " (sh not started)"
				}
				if code != 2 || !strings.Contains(stderr, want) || stdout != "" || strings.Contains(stderr, "chosen by") {
					t.Fatalf("exit %d (want 2), stdout %q; stderr:\n%s\nwant it to contain %s, and no GPUs said chosen", code, stdout, stderr, want)
				}
				if _, err := os.Stat(marker); err == nil {
					t.Error("record ran its command although its GPUs could not be chosen")
				}
				l.noFile(l.stream())
				l.noFile(l.record())
			})
		}
	}
}

// TestRecordSeveralGPUs: without --gpu, record samples the GPUs its command
// is given by CUDA_VISIBLE_DEVICES, which the command inherits.
func TestRecordSeveralGPUs(t *testing.T) {
	tools := newRecTools(t)
	l := tools.leg(t, map[string]any{"gpus": 4})
	l.env = append(l.env, "CUDA_VISIBLE_DEVICES=2,0")
	code, stdout, stderr := l.run("", "record", "--out", l.prefix, "--interval", "100ms", "--backend", "nvidia-smi", "--",
		"sh", "-c", `echo "$CUDA_VISIBLE_DEVICES"; sleep 0.4`)
	if code != 0 || stdout != "2,0\n" {
		t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
	}
	l.ticks(0, 2)
	l.readRecord(clocks.StopCommandExit, 0.1)
	if !strings.Contains(stderr, "clockgate record: GPUs 0,2 chosen by CUDA_VISIBLE_DEVICES=2,0 (no --gpu; CUDA device 0 is GPU 2, CUDA device 1 is GPU 0)\n") {
		t.Errorf("stderr:\n%s", stderr)
	}
	l.readOnly()
}

// TestBuildSeveralGPUs: build infers the interval of a tensor-parallel
// stream, whose rows of one tick share a time, from the gaps of each GPU:
// a TP=4 stream the real sampler wrote at --interval 100ms rebuilds,
// without --interval, to the record the stream folds to at 0.1 s.
func TestBuildSeveralGPUs(t *testing.T) {
	tools := newRecTools(t)
	l := tools.leg(t, map[string]any{"gpus": 4})
	code, _, stderr := l.run("", "sample", "--out", l.prefix, "--interval", "100ms", "--backend", "nvidia-smi", "--gpu", "0,1,2,3", "--max-duration", "1s")
	if code != 0 {
		t.Fatalf("sample: exit %d; stderr:\n%s", code, stderr)
	}
	ticks := l.ticks(0, 1, 2, 3)
	sampled := l.readRecord(clocks.StopMaxDuration, 0.1)
	os.Remove(l.record())
	code, stdout, stderr := l.run("", "build", l.stream(), "-o", l.record())
	if code != 0 || stdout != "" {
		t.Fatalf("build of %d ticks × 4 GPUs without --interval: exit %d, stdout %q; stderr:\n%s", ticks, code, stdout, stderr)
	}
	// The rebuilt interval is the median gap of one GPU's samples, to the
	// millisecond (never the 0 that rows sharing a time would give), or,
	// where a loaded machine put it over 110% of a GPU's mean spacing (the
	// share the record check allows), that spacing floored to the
	// millisecond: reckoned here by hand.
	var gaps []time.Duration
	first, last := map[int]time.Time{}, map[int]time.Time{}
	n := map[int]int{}
	_, rows := l.readStream()
	for _, r := range rows {
		ts, err := time.Parse(time.RFC3339Nano, r.T)
		if err != nil {
			t.Fatal(err)
		}
		if prev, ok := last[r.GPUIndex]; ok {
			gaps = append(gaps, ts.Sub(prev))
		} else {
			first[r.GPUIndex] = ts
		}
		last[r.GPUIndex] = ts
		n[r.GPUIndex]++
	}
	slices.Sort(gaps)
	want := gaps[len(gaps)/2].Round(time.Millisecond)
	for g := range n {
		if mean := last[g].Sub(first[g]) / time.Duration(n[g]-1); want*100 > mean*clocks.MaxIntervalOfMeanGapPct {
			want = mean.Truncate(time.Millisecond)
		}
	}
	rec := l.readRecord(clocks.StopRebuilt, want.Seconds())
	if rec.Window.IntervalS != want.Seconds() || want.Seconds() < 0.9*sampled.Window.IntervalS ||
		rec.Window.StopReason != clocks.StopRebuilt || len(rec.GPUs) != 4 {
		t.Errorf("rebuilt interval_s %v (by hand %v), stop %s, %d GPUs; the sampler's interval_s %v",
			rec.Window.IntervalS, want, rec.Window.StopReason, len(rec.GPUs), sampled.Window.IntervalS)
	}
	// The rebuilt record is what its stream recomputes to: the rebuilt
	// window stands against it (and a second of readings is too few
	// busy samples), never clock.stream_mismatch.
	if code, codes := l.checkCodes(); code != 1 || !contains(codes, clocks.CodePartialWindow) || contains(codes, clocks.CodeStreamMismatch) {
		t.Errorf("check of the rebuilt record: exit %d, codes %v; want %s and no %s", code, codes, clocks.CodePartialWindow, clocks.CodeStreamMismatch)
	}

	// One tick: four rows, but no GPU has two samples.
	data, err := os.ReadFile(l.stream())
	if err != nil {
		t.Fatal(err)
	}
	one := filepath.Join(t.TempDir(), "one.samples.jsonl")
	lines := strings.SplitAfter(string(data), "\n")
	os.WriteFile(one, []byte(strings.Join(lines[:4], "")), 0o644)
	code, _, stderr = l.run("", "build", one)
	if want := "clockgate: " + one + ": fewer than two samples of any one GPU: the interval cannot be inferred; pass --interval\n"; code != 2 || stderr != want {
		t.Errorf("build of one tick: exit %d, stderr %q, want %q", code, stderr, want)
	}
}

// TestSampleRowsOutOfOrder: an nvidia-smi that answers -i 0,1,2,3 in
// another order (here 3,1,0,2) gives a stream in index order, each row
// with its own GPU's values, and the record it folds to.
func TestSampleRowsOutOfOrder(t *testing.T) {
	tools := newRecTools(t)
	l := tools.leg(t, map[string]any{"gpus": 4, "order": []int{3, 1, 0, 2}, "gpu_values": gpuValues(4, func(i int) map[string]any {
		return map[string]any{"clocks.sm": strconv.Itoa(1900 + 10*i), "uuid": real3090[i]}
	})})
	code, _, stderr := l.run("", "sample", "--out", l.prefix, "--interval", "100ms", "--backend", "nvidia-smi", "--gpu", "0,1,2,3", "--max-duration", "450ms")
	if code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	ticks := l.ticks(0, 1, 2, 3)
	_, rows := l.readStream()
	for k, r := range rows {
		if g := k % 4; r.SMClockMHz != 1900+10*g || r.GPUUUID != real3090[g] {
			t.Errorf("row %d (tick %d of %d): %s; want GPU %d's values", k, k/4, ticks, r.AppendJSON(nil), g)
		}
	}
	l.readRecord(clocks.StopMaxDuration, 0.1)
}

// TestSampleGPUSkewThenCheck: a TP=4 leg sampled by the real command, GPU 2
// at 1940 MHz while the others run at 1980 (2.06% slower, over the 1.0%
// bound), long enough for 30 busy samples per GPU and stopped by its
// --pid: the stop's verdict line names clock.gpu_skew alone, and check on
// the record names GPU 2 as the slowest. The premise, a window whose every
// gap is within 3 intervals, is measured in the record: where a loaded
// machine stalled the sampler past it (clock.coverage, rightly), the leg is
// taken again at twice the interval (100 ms, up to 800 ms), never judged
// on a broken premise unless the last try breaks it too.
func TestSampleGPUSkewThenCheck(t *testing.T) {
	tools := newRecTools(t)
	for interval := 100 * time.Millisecond; ; interval *= 2 {
		if gpuSkewLeg(t, tools, interval, interval >= 800*time.Millisecond) {
			return
		}
		t.Logf("interval %v: the machine stalled the sampler past 3 intervals (clock.coverage); again at %v", interval, 2*interval)
	}
}

func gpuSkewLeg(t *testing.T, tools *recTools, interval time.Duration, last bool) bool {
	t.Helper()
	l := tools.leg(t, map[string]any{"gpus": 4, "gpu_values": gpuValues(4, func(i int) map[string]any {
		if i == 2 {
			return map[string]any{"clocks.sm": "1940"}
		}
		return map[string]any{}
	})})
	sleeper := exec.Command("sleep", "300")
	if err := sleeper.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	p := l.start("", "sample", "--out", l.prefix, "--interval", interval.String(), "--backend", "nvidia-smi", "--gpu", "0,1,2,3", "--pid", strconv.Itoa(sleeper.Process.Pid))
	l.waitLinesWithin(4*(clocks.MinBusySamples+2), 20*time.Second+40*interval)
	sleeper.Process.Kill()
	code := p.wait(t)
	stderr := p.stderr.String()
	if !last {
		if rec := l.parsedRecordIfAny(); rec != nil && rec.Window.MaxGapS != nil && *rec.Window.MaxGapS > float64(clocks.MaxGapIntervals)*interval.Seconds() {
			return false
		}
	}
	want := "clockgate sample: verdict: clock.gpu_skew (clockgate check " + l.record() + " says why)\n"
	if code != 0 || !strings.HasSuffix(stderr, want) {
		t.Fatalf("interval %v: exit %d; stderr:\n%s\nwant it to end with %s", interval, code, stderr, want)
	}
	rec := l.readRecord(clocks.StopPIDExit, interval.Seconds())
	for _, g := range rec.GPUs {
		if g.SMClockMHz.N < clocks.MinBusySamples {
			t.Fatalf("GPU %s: %d busy samples, want at least %d", g.UUID, g.SMClockMHz.N, clocks.MinBusySamples)
		}
	}
	code, stdout, _ := l.run("", "check", l.record())
	const msg = "     clock.gpu_skew: GPU busy medians differ by 2.06% > 1.0%: GPU 2 at 1940 MHz (the slowest), GPU 0 at 1980 MHz; a tensor-parallel step runs at its slowest GPU's pace\n"
	if _, codes := l.checkCodes(); code != 1 || strings.Join(codes, " ") != clocks.CodeGPUSkew || !strings.Contains(stdout, msg) {
		t.Fatalf("check: exit %d, codes %v; stdout:\n%s\nwant %s", code, codes, stdout, msg)
	}
	return true
}
