package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/sampler"
)

// recAsMainEnv makes this test binary run as clockgate itself, so the
// recording tests run the real command in a process of its own (signals,
// pids and exit codes are per process) without building it again.
const recAsMainEnv = "CLOCKGATE_TEST_RUN_AS_MAIN"

func init() {
	if os.Getenv(recAsMainEnv) == "1" {
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
}

const recBoot = "13dc5579-455c-45c8-8e4d-d09c457fa826"

// recTools builds the fake nvidia-smi (sampler/testdata/fakesmi) for one
// top-level test and writes a boot id file.
type recTools struct {
	fakeSMI  string
	bootFile string
}

func newRecTools(t *testing.T) *recTools {
	t.Helper()
	dir := t.TempDir()
	bin := filepath.Join(dir, "fakesmi")
	cmd := exec.Command("go", "build", "-o", bin, "github.com/clockgate/clockgate/sampler/testdata/fakesmi")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the fake nvidia-smi: %v\n%s", err, out)
	}
	boot := filepath.Join(dir, "boot_id")
	if err := os.WriteFile(boot, []byte(recBoot+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return &recTools{fakeSMI: bin, bootFile: boot}
}

// recLeg is one subtest's world: a fake nvidia-smi configured with cfg
// (see fakesmi.json in sampler/testdata/fakesmi) first on PATH, and an
// output prefix.
type recLeg struct {
	t      *testing.T
	smiDir string
	prefix string
	env    []string
}

func (tools *recTools) leg(t *testing.T, cfg map[string]any) *recLeg {
	t.Helper()
	dir := t.TempDir()
	smiDir := filepath.Join(dir, "bin")
	os.Mkdir(smiDir, 0o755)
	// A hard link, not a copy: an executable written while a parallel test
	// forks can fail to exec with "text file busy".
	if err := os.Link(tools.fakeSMI, filepath.Join(smiDir, "nvidia-smi")); err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(cfg)
	if err := os.WriteFile(filepath.Join(smiDir, "fakesmi.json"), data, 0o644); err != nil {
		t.Fatal(err)
	}
	// The fake's time to answer on a loaded test machine is not a GPU's:
	// the interval check (TestIntervalTheSamplerCannotHold) is given 1 ns
	// for it, unless a test means to measure.
	env := []string{recAsMainEnv + "=1", bootIDFileEnv + "=" + tools.bootFile, "PATH=" + smiDir + ":" + os.Getenv("PATH"), probeLatencyEnv + "=1ns"}
	// CUDA_VISIBLE_DEVICES and CUDA_DEVICE_ORDER choose the GPUs without
	// --gpu: a test sets them when it means to, never the box it runs on.
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "PATH=") && !strings.HasPrefix(kv, bootIDFileEnv+"=") && !strings.HasPrefix(kv, probeLatencyEnv+"=") &&
			!strings.HasPrefix(kv, sampler.EnvCUDAVisibleDevices+"=") && !strings.HasPrefix(kv, sampler.EnvCUDADeviceOrder+"=") {
			env = append(env, kv)
		}
	}
	return &recLeg{t: t, smiDir: smiDir, prefix: filepath.Join(dir, "clocks", "m", "e", "r1"), env: env}
}

func (l *recLeg) stream() string { return l.prefix + ".samples.jsonl" }
func (l *recLeg) record() string { return l.prefix + ".summary.json" }

// proc is a clockgate process under test, in a process group of its own
// with everything it starts; cleanup kills that whole group, so no sampler
// and no child of record outlives its test.
type proc struct {
	cmd    *exec.Cmd
	stdout bytes.Buffer
	stderr bytes.Buffer
	done   chan struct{}
	err    error
}

// start runs clockgate args in its own process.
func (l *recLeg) start(stdin string, args ...string) *proc {
	l.t.Helper()
	p := &proc{cmd: exec.Command(os.Args[0], args...), done: make(chan struct{})}
	p.cmd.Env = l.env
	p.cmd.Stdin = strings.NewReader(stdin)
	p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// A child of record that outlives it must not hold Wait on the pipes.
	p.cmd.WaitDelay = 2 * time.Second
	if err := p.cmd.Start(); err != nil {
		l.t.Fatal(err)
	}
	go func() {
		p.err = p.cmd.Wait()
		close(p.done)
	}()
	l.t.Cleanup(func() {
		killGroup(p.cmd.Process.Pid)
		<-p.done
	})
	return p
}

// killGroup kills the process group a test started (its leader's pid).
func killGroup(pgid int) { syscall.Kill(-pgid, syscall.SIGKILL) }

// wait waits up to 60 s for the process and returns its exit code: a
// guard against a hang, never a bound a test measures (a leg recorded
// again at 4 × its interval on a loaded machine runs 20 s and more).
func (p *proc) wait(t *testing.T) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(60 * time.Second):
		killGroup(p.cmd.Process.Pid)
		<-p.done
		t.Fatalf("clockgate %v did not stop within 60s; stderr:\n%s", p.cmd.Args[1:], p.stderr.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

// run runs clockgate args to the end.
func (l *recLeg) run(stdin string, args ...string) (code int, stdout, stderr string) {
	l.t.Helper()
	p := l.start(stdin, args...)
	code = p.wait(l.t)
	return code, p.stdout.String(), p.stderr.String()
}

// waitLines waits until the stream holds at least n whole lines.
func (l *recLeg) waitLines(n int) {
	l.t.Helper()
	l.waitLinesWithin(n, 10*time.Second)
}

// parsedRecordIfAny is the leg's record as check reads it, nil when there
// is none or it does not parse.
func (l *recLeg) parsedRecordIfAny() *clocks.Record {
	data, err := os.ReadFile(l.record())
	if err != nil {
		return nil
	}
	rec, err := clocks.ParseRecord(data)
	if err != nil {
		return nil
	}
	return rec
}

// waitLinesWithin waits up to limit until the stream holds at least n whole
// lines.
func (l *recLeg) waitLinesWithin(n int, limit time.Duration) {
	l.t.Helper()
	deadline := time.Now().Add(limit)
	for time.Now().Before(deadline) {
		data, _ := os.ReadFile(l.stream())
		if bytes.Count(data, []byte("\n")) >= n {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	l.t.Fatalf("the stream never reached %d lines", n)
}

// readStream reads the stream with clocks.NewScanner; every line must be a
// valid sample.
func (l *recLeg) readStream() (*clocks.Fold, []*clocks.Sample) {
	l.t.Helper()
	f, err := os.Open(l.stream())
	if err != nil {
		l.t.Fatal(err)
	}
	defer f.Close()
	sc := clocks.NewReader(f, "")
	fold := clocks.NewFold()
	var all []*clocks.Sample
	for sc.Scan() {
		fold.Add(sc.Sample(), sc.Line())
		all = append(all, sc.Sample())
	}
	if err := sc.Err(); err != nil {
		l.t.Fatalf("%s: %v", l.stream(), err)
	}
	return fold, all
}

// host folds the host stream beside the stream, where there is one, with
// the busy ticks of samples: the record's host block must be it.
func (l *recLeg) host(samples []*clocks.Sample) *clocks.Host {
	l.t.Helper()
	path := clocks.HostStreamPath(l.stream())
	f, err := os.Open(path)
	if err != nil {
		return nil
	}
	defer f.Close()
	ticks := clocks.BusyTicks{}
	for _, s := range samples {
		ticks.Add(s.T, s.UtilizationGPUPct != 0)
	}
	h, err := clocks.FoldHostStream(f, path, &ticks)
	if err != nil {
		l.t.Fatalf("%s: %v", path, err)
	}
	return h
}

// readRecord reads the record and checks it is exactly what its stream
// folds to, with the given stop reason.
func (l *recLeg) readRecord(stopReason string, interval float64) *clocks.Record {
	l.t.Helper()
	data, err := os.ReadFile(l.record())
	if err != nil {
		l.t.Fatalf("no record: %v", err)
	}
	var rec clocks.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		l.t.Fatal(err)
	}
	fold, samples := l.readStream()
	want, err := fold.Record(interval, stopReason)
	if err != nil {
		l.t.Fatal(err)
	}
	// clockgate build recomputes the host block too.
	want.Host = l.host(samples)
	if stopReason == clocks.StopRefused {
		if rec.Refusal == "" {
			l.t.Error("a refused record without its refusal")
		}
		want.Refusal = rec.Refusal
	}
	if stopReason != clocks.StopRebuilt {
		// The sampler names the host's zone; the stream cannot.
		first, _ := time.Parse(time.RFC3339Nano, rec.Window.FirstT)
		if _, off := first.In(time.Local).Zone(); rec.Window.UTCOffsetS == nil || *rec.Window.UTCOffsetS != off {
			l.t.Errorf("utc_offset_s %v, want the host's %d at the first sample", rec.Window.UTCOffsetS, off)
		}
		want.Window.UTCOffsetS, want.Window.TimeZone = rec.Window.UTCOffsetS, rec.Window.TimeZone
	}
	got, _ := json.Marshal(rec)
	exp, _ := json.Marshal(want)
	if !bytes.Equal(got, exp) {
		l.t.Errorf("record %s\nstream folds to %s", got, exp)
	}
	return &rec
}

func (l *recLeg) noFile(path string) {
	l.t.Helper()
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		l.t.Errorf("%s exists (%v)", path, err)
	}
}

// The listing (--query-gpu=index,uuid,name without -i) is the only call
// without -i.
var recReadOnlyCall = regexp.MustCompile(`^(--query-gpu=(index,uuid,name --format=csv,noheader,nounits|[a-z_.,]+ --format=csv,noheader,nounits -i [0-9]+(,[0-9]+)*)|--query-compute-apps=pid,process_name,gpu_uuid --format=csv,noheader)$`)

// readOnly checks that nvidia-smi was only ever asked to read.
func (l *recLeg) readOnly() {
	l.t.Helper()
	data, err := os.ReadFile(filepath.Join(l.smiDir, "fakesmi.log"))
	if err != nil {
		l.t.Fatal(err)
	}
	for _, c := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		if !recReadOnlyCall.MatchString(c) {
			l.t.Errorf("nvidia-smi called with %q", c)
		}
	}
}

// lastT parses the stream's last sample time.
func lastT(t *testing.T, samples []*clocks.Sample) time.Time {
	t.Helper()
	ts, err := time.Parse(time.RFC3339Nano, samples[len(samples)-1].T)
	if err != nil {
		t.Fatal(err)
	}
	return ts
}

// gone reports whether pid has exited (no such process, or a zombie).
func gone(pid int) bool {
	if err := syscall.Kill(pid, 0); errors.Is(err, syscall.ESRCH) {
		return true
	}
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return true
	}
	i := bytes.LastIndexByte(data, ')')
	return i > 0 && len(data) > i+2 && (data[i+2] == 'Z' || data[i+2] == 'X')
}

const recInterval = 100 * time.Millisecond

// nvmlPresent reports whether NVML opens here (it never does without a GPU
// driver); tests that expect it to be missing skip when it is not.
func nvmlPresent() bool {
	b, err := sampler.Open(context.Background(), sampler.Options{Kind: sampler.KindNVML})
	if err != nil {
		return false
	}
	b.Close()
	return true
}

// TestSampleStopPaths runs the real command and proves each way it stops.
func TestSampleStopPaths(t *testing.T) {
	tools := newRecTools(t)
	base := []string{"sample", "--interval", recInterval.String(), "--backend", "nvidia-smi"}

	// --pid's process exits: the sampler stops within two intervals, both
	// when the process is reaped and while it is a zombie.
	for _, reap := range []bool{true, false} {
		name := "pid-exit reaped"
		if !reap {
			name = "pid-exit zombie"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			l := tools.leg(t, nil)
			sleeper := exec.Command("sleep", "30")
			if err := sleeper.Start(); err != nil {
				t.Fatal(err)
			}
			reaped := make(chan struct{})
			t.Cleanup(func() { sleeper.Process.Kill(); <-reaped })
			p := l.start("", append(base, "--out", l.prefix, "--pid", strconv.Itoa(sleeper.Process.Pid))...)
			l.waitLines(3)
			killed := time.Now()
			sleeper.Process.Kill()
			if reap {
				sleeper.Wait()
				close(reaped)
			} else {
				defer func() { sleeper.Wait(); close(reaped) }()
			}
			if code := p.wait(t); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
			}
			stopped := time.Since(killed)
			rec := l.readRecord(clocks.StopPIDExit, 0.1)
			_, samples := l.readStream()
			if last := lastT(t, samples); last.After(killed.Add(2 * recInterval)) {
				t.Errorf("sampled at %v, %v after the pid exited", last, last.Sub(killed))
			}
			if stopped > 3*time.Second {
				t.Errorf("took %v to stop", stopped)
			}
			if rec.Window.StopReason != "pid-exit" || !strings.Contains(p.stderr.String(), "stopped (pid-exit)") {
				t.Errorf("stop %q; stderr:\n%s", rec.Window.StopReason, p.stderr.String())
			}
			l.readOnly()
		})
	}

	t.Run("max-duration", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, nil)
		start := time.Now()
		code, stdout, stderr := l.run("", append(base, "--out", l.prefix, "--max-duration", "400ms")...)
		if code != 0 || stdout != "" {
			t.Fatalf("exit %d, stdout %q; stderr:\n%s", code, stdout, stderr)
		}
		if el := time.Since(start); el > 5*time.Second {
			t.Errorf("ran %v", el)
		}
		rec := l.readRecord(clocks.StopMaxDuration, 0.1)
		if rec.Window.StopReason != "max-duration" || rec.Window.SamplesTotal < 2 {
			t.Errorf("window %+v", rec.Window)
		}
		if !strings.Contains(stderr, "the window was cut off at --max-duration 400ms: the record is partial") {
			t.Errorf("stderr:\n%s", stderr)
		}
	})

	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run("signal "+sig.String(), func(t *testing.T) {
			t.Parallel()
			l := tools.leg(t, nil)
			p := l.start("", append(base, "--out", l.prefix)...)
			l.waitLines(3)
			p.cmd.Process.Signal(sig)
			if code := p.wait(t); code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
			}
			rec := l.readRecord(clocks.StopSignal, 0.1)
			_, samples := l.readStream()
			if rec.Window.StopReason != "signal" || samples[0].ThrottleField != sampler.FieldEventReasons ||
				samples[0].ClocksApplicationsGraphicsMHz != nil || rec.BootID != recBoot {
				t.Errorf("record %+v, first sample %s", rec, samples[0].AppendJSON(nil))
			}
		})
	}

	// The shell that started a background sampler dies by SIGKILL, so no
	// EXIT trap runs: --pid $$ still stops the orphaned sampler.
	t.Run("parent killed", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, nil)
		dir := t.TempDir()
		pidFile, errFile := filepath.Join(dir, "sampler.pid"), filepath.Join(dir, "sampler.err")
		script := `"$CG" sample --out "$OUT" --pid $$ --interval 100ms --backend nvidia-smi 2>"$ERRF" & echo $! >"$PIDF"; exec sleep 30`
		sh := exec.Command("sh", "-c", script)
		sh.Env = append(append([]string(nil), l.env...), "CG="+os.Args[0], "OUT="+l.prefix, "ERRF="+errFile, "PIDF="+pidFile)
		sh.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
		if err := sh.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { killGroup(sh.Process.Pid) })
		l.waitLines(3)
		data, err := os.ReadFile(pidFile)
		if err != nil {
			t.Fatal(err)
		}
		samplerPID, err := strconv.Atoi(strings.TrimSpace(string(data)))
		if err != nil {
			t.Fatal(err)
		}
		sh.Process.Signal(syscall.SIGKILL)
		sh.Wait()
		killed := time.Now()
		for !gone(samplerPID) {
			if time.Since(killed) > 10*time.Second {
				t.Fatal("the orphaned sampler is still running 10s after its parent died")
			}
			time.Sleep(10 * time.Millisecond)
		}
		rec := l.readRecord(clocks.StopPIDExit, 0.1)
		if rec.Window.StopReason != "pid-exit" {
			t.Errorf("stop %q", rec.Window.StopReason)
		}
		_, samples := l.readStream()
		if last := lastT(t, samples); last.After(killed.Add(2 * recInterval)) {
			t.Errorf("sampled %v after the parent died", last.Sub(killed))
		}
	})

	// A sampler killed with SIGKILL leaves whole valid lines and no record;
	// the record can be rebuilt from the stream on purpose.
	t.Run("SIGKILL leaves a valid stream", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, nil)
		p := l.start("", append(base, "--out", l.prefix, "--interval", "100ms")...)
		l.waitLines(5)
		p.cmd.Process.Kill()
		p.wait(t)
		l.noFile(l.record())
		fold, samples := l.readStream()
		if len(samples) < 5 {
			t.Fatalf("%d samples", len(samples))
		}
		rec, err := fold.Record(0.1, clocks.StopRebuilt)
		if err != nil || rec.Window.SamplesTotal != len(samples) || rec.GPUs[0].SMClockMHz.N != len(samples) {
			t.Fatalf("rebuilt record %+v, %v", rec, err)
		}
	})

	t.Run("multi-GPU --gpu 1", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, map[string]any{"gpus": 2, "driver": "old"})
		code, _, stderr := l.run("", append(base, "--out", l.prefix, "--gpu", "1", "--max-duration", "200ms")...)
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		_, samples := l.readStream()
		for _, s := range samples {
			if s.GPUIndex != 1 || s.GPUUUID != "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31" || s.ThrottleField != sampler.FieldThrottleReasons {
				t.Fatalf("sample %s", s.AppendJSON(nil))
			}
		}
		l.readOnly()
	})

	t.Run("auto falls back to nvidia-smi", func(t *testing.T) {
		t.Parallel()
		l := tools.leg(t, nil)
		code, _, stderr := l.run("", "sample", "--out", l.prefix, "--interval", "100ms", "--max-duration", "300ms")
		if code != 0 {
			t.Fatalf("exit %d; stderr:\n%s", code, stderr)
		}
		if strings.Contains(stderr, "sampling NVML") {
			t.Skip("NVML is installed here")
		}
		if !strings.Contains(stderr, "clockgate sample: NVML unavailable: ") || !strings.Contains(stderr, "; using nvidia-smi") {
			t.Errorf("stderr:\n%s", stderr)
		}
	})
}

// TestSampleRefusals: every failure stops the sampler with exit 1 (a
// refusal) or 2 (its inputs) and says why once on stderr. A refusal after
// the first sample writes the record with stop_reason refused; one before
// it, or a setup error, writes none.
func TestSampleRefusals(t *testing.T) {
	tools := newRecTools(t)
	base := []string{"sample", "--interval", "100ms", "--backend", "nvidia-smi"}
	cases := []struct {
		name      string
		cfg       map[string]any
		args      []string
		setup     func(l *recLeg)
		code      int
		stderr    string
		samplesOK int // whole samples the stream must keep; -1: no stream
	}{
		{"N/A mid-run", map[string]any{"plan": []any{map[string]any{}, map[string]any{}, map[string]any{}, map[string]any{"values": map[string]any{"clocks.sm": "[N/A]"}}}}, nil, nil,
			1, `clockgate: refusing to sample: nvidia-smi -i 0: clocks.sm: nvidia-smi printed "[N/A]": no value (not available on this GPU or driver); the driver cannot give clocks.sm, which every sample needs: clockgate cannot record clock evidence with this driver: update the NVIDIA driver, or record the leg on a GPU and driver that answer every field of the query in docs/recording.md; the record says stop_reason refused, and the leg will not be established`, 2},
		{"failure mid-run", map[string]any{"plan": []any{map[string]any{}, map[string]any{}, map[string]any{"exit": 15, "msg": "Unable to determine the device handle for GPU0000:01:00.0: Unknown Error"}}}, nil, nil,
			1, `clockgate: refusing to sample: nvidia-smi -i 0 exited with status 15: "Unable to determine the device handle for GPU0000:01:00.0: Unknown Error"; the record says stop_reason refused`, 1},
		{"MIG mid-run", map[string]any{"plan": []any{map[string]any{}, map[string]any{}, map[string]any{"values": map[string]any{"utilization.gpu": "[N/A]"}}}}, nil, nil,
			1, `clockgate: refusing to sample: nvidia-smi -i 0: utilization.gpu: nvidia-smi printed "[N/A]": no value (not available on this GPU or driver); this GPU reports no utilization, as a MIG-enabled GPU does: clockgate needs utilization.gpu to tell busy samples from idle ones, so it cannot sample a MIG instance or a GPU in MIG mode: record the leg on a GPU with MIG disabled`, 1},
		{"prefix ends in a separator", nil, nil, func(l *recLeg) { l.prefix += "/" },
			2, `clockgate: invalid sampler configuration: output prefix "`, -3},
		{"prefix name too long", nil, nil, func(l *recLeg) { l.prefix = filepath.Join(filepath.Dir(l.prefix), strings.Repeat("r", 235)) },
			2, `is 235 bytes: the record's temporary file (` + strings.Repeat("r", 235) + `.summary.json plus up to 16 bytes) would be 264 bytes, over the 255-byte file name limit; use a name of at most 226 bytes`, -1},
		{"N/A at start", map[string]any{"plan": []any{map[string]any{"values": map[string]any{"clocks.max.sm": "[N/A]"}}}}, nil, nil,
			1, `clockgate: nvidia-smi -i 0: clocks.max.sm: nvidia-smi printed "[N/A]"`, -1},
		{"wrong GPU answers", map[string]any{"gpus": 2, "ignore_i": true}, nil, nil,
			1, "clockgate: nvidia-smi -i 0 printed 2 lines, want one: a line for GPU 1, which it was not asked for\n", -1},
		{"no such GPU", nil, []string{"--gpu", "3"}, nil,
			2, `clockgate: nvidia-smi -i 3 exited with status 6: "No devices were found": nvidia-smi knows no GPU by one of the indices 3; nvidia-smi -L lists the GPUs`, -1},
		{"nvml not installed", nil, []string{"--backend", "nvml"}, nil,
			1, "clockgate: NVML unavailable: ", -1},
		{"stream exists", nil, nil, func(l *recLeg) {
			os.MkdirAll(filepath.Dir(l.stream()), 0o755)
			os.WriteFile(l.stream(), []byte("theirs\n"), 0o644)
		}, 2, ": already exists; a sampler never adds to evidence it did not start", -2},
		{"pid not running", nil, []string{"--pid", "999999999"}, nil, 2, "clockgate: pid 999999999: no such process", -1},
		{"boot id unreadable", nil, nil, func(l *recLeg) {
			l.env = append(l.env, bootIDFileEnv+"=/nonexistent/boot_id")
		}, 2, "clockgate: cannot read the boot id: open /nonexistent/boot_id: no such file or directory", -1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			if c.name == "nvml not installed" && nvmlPresent() {
				t.Skip("NVML is installed here")
			}
			l := tools.leg(t, c.cfg)
			if c.setup != nil {
				c.setup(l)
			}
			code, stdout, stderr := l.run("", append(append(append([]string(nil), base...), "--out", l.prefix), c.args...)...)
			if code != c.code || !strings.Contains(stderr, c.stderr) || stdout != "" {
				t.Fatalf("exit %d (want %d), stdout %q; stderr:\n%s\nwant it to contain %s", code, c.code, stdout, stderr, c.stderr)
			}
			if n := strings.Count(stderr, "clockgate: "); n != 1 {
				t.Errorf("%d error lines:\n%s", n, stderr)
			}
			if c.samplesOK < 0 {
				l.noFile(l.record())
			}
			switch {
			case c.samplesOK == -3:
				// Nothing under the directory the prefix names.
				entries, _ := os.ReadDir(l.prefix)
				if len(entries) != 0 {
					t.Errorf("files written under %s: %v", l.prefix, entries)
				}
			case c.samplesOK == -2:
				if data, _ := os.ReadFile(l.stream()); string(data) != "theirs\n" {
					t.Errorf("the existing stream changed: %q", data)
				}
			case c.samplesOK == -1:
				l.noFile(l.stream())
			case c.samplesOK >= 0:
				fold, _ := l.readStream()
				if fold.Total != c.samplesOK {
					t.Errorf("stream keeps %d samples, want %d", fold.Total, c.samplesOK)
				}
				rec := l.readRecord(clocks.StopRefused, 0.1)
				if rec.Window.StopReason != "refused" || !strings.Contains(stderr, "clockgate: refusing to sample: "+rec.Refusal+"; the record says stop_reason refused") {
					t.Errorf("record %+v", rec)
				}
				if !strings.Contains(stderr, "clockgate sample: verdict: clock.busy_samples clock.refused (clockgate check "+l.record()+" says why)\n") {
					t.Errorf("no verdict line:\n%s", stderr)
				}
			}
		})
	}
}

func TestSampleUsageErrors(t *testing.T) {
	cases := []struct {
		args []string
		want string
	}{
		{[]string{"sample"}, "clockgate: --out PREFIX is required\n"},
		{[]string{"sample", "--out", "x", "--interval", "0s"}, "clockgate: --interval 0s: want at least 100ms: nvidia-smi takes tens to hundreds of ms per reading, and utilization.gpu is averaged over 1/6 s to 1 s\n"},
		{[]string{"sample", "--out", "x", "--interval", "99ms"}, "clockgate: --interval 99ms: want at least 100ms"},
		{[]string{"record", "--out", "x", "--interval", "1ns", "--", "true"}, "clockgate: --interval 1ns: want at least 100ms"},
		{[]string{"sample", "--out", "x", "--max-duration", "-1s"}, "clockgate: --max-duration -1s: want a positive duration\n"},
		{[]string{"sample", "--out", "x", "--gpu", "-1"}, "clockgate: --gpu -1: want a GPU index ≥ 0\n"},
		{[]string{"sample", "--out", "x", "--gpu", ""}, `clockgate: --gpu "": want a GPU index (3), a comma list (0,1,2,3), all, or GPU UUIDs (GPU-5f3c… for NVIDIA, abff74a1-… for AMD, or a prefix that names one GPU)` + "\n"},
		{[]string{"sample", "--out", "x", "--gpu", "all,0"}, `clockgate: --gpu all,0: entry 1 ("all"): all stands alone: it means every GPU the driver lists; pass --gpu all, or a list of indices and UUIDs without it` + "\n"},
		{[]string{"record", "--out", "x", "--gpu", "0,,1", "--", "true"}, `clockgate: --gpu 0,,1: entry 2 (""): empty: an entry is missing between commas; want a GPU index`},
		{[]string{"sample", "--out", "x", "--gpu", "MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a"}, "clockgate: --gpu MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a: a MIG instance, and clockgate samples whole GPUs: a MIG instance and a GPU in MIG mode give no utilization.gpu, which tells busy samples from idle ones; record the leg on a GPU with MIG disabled and name it by index or by its GPU-… UUID\n"},
		{[]string{"sample", "--out", "x", "--backend", "cuda"}, "clockgate: --backend \"cuda\": want one of auto, nvml, nvidia-smi, amd-smi\n"},
		{[]string{"sample", "--out", "x", "--pid", "0"}, "clockgate: --pid 0: want a process id > 0\n"},
		{[]string{"sample", "--out", "x", "sleep"}, "clockgate: sample takes no arguments, found [\"sleep\"] (did you mean 'clockgate record'?)\n"},
		{[]string{"sample", "--out", "x", "--interval", "fast"}, "clockgate: invalid argument \"fast\" for \"--interval\" flag"},
		{[]string{"record", "--out", "x"}, "clockgate: record needs a COMMAND to run: clockgate record --out PREFIX -- COMMAND [ARG...]\n"},
		{[]string{"record", "--out", "x", "--pid", "1", "--", "true"}, "clockgate: unknown flag: --pid"},
		{[]string{"record", "--", "true"}, "clockgate: --out PREFIX is required\n"},
	}
	for _, c := range cases {
		var stdout, stderr bytes.Buffer
		code := Main(c.args, strings.NewReader(""), &stdout, &stderr)
		if code != ExitUsage || !strings.HasPrefix(stderr.String(), c.want) || stdout.Len() != 0 {
			t.Errorf("%v: exit %d, stderr %q, want exit 2 and %q", c.args, code, stderr.String(), c.want)
		}
	}
}
