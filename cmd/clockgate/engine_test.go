package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math"
	"net"
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
)

// standInEnv makes this test binary a stand-in engine server: it listens
// on a loopback TCP port, starts a worker child, prints "PORT WORKER_PID"
// and waits to be killed, as 'vllm serve' and its EngineCore would.
const standInEnv = "CLOCKGATE_TEST_STAND_IN_SERVER"

func init() {
	if os.Getenv(standInEnv) == "1" {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		worker := exec.Command("sleep", "60")
		if err := worker.Start(); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		fmt.Printf("%d %d\n", ln.Addr().(*net.TCPAddr).Port, worker.Process.Pid)
		time.Sleep(60 * time.Second)
		os.Exit(0)
	}
}

// standIn is a stand-in engine server started before the leg.
type standIn struct {
	pid, worker, port int
	cmd               *exec.Cmd
}

func startStandIn(t *testing.T) *standIn {
	t.Helper()
	cmd := exec.Command(os.Args[0])
	cmd.Env = append(os.Environ(), standInEnv+"=1")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		killGroup(cmd.Process.Pid)
		cmd.Wait()
	})
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("the stand-in server said nothing: %v", err)
	}
	s := &standIn{pid: cmd.Process.Pid, cmd: cmd}
	if _, err := fmt.Sscanf(line, "%d %d", &s.port, &s.worker); err != nil {
		t.Fatalf("the stand-in server said %q: %v", line, err)
	}
	return s
}

const engineGPU0 = "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30"

// engineLeg is a leg whose fake nvidia-smi lists the stand-in server and
// its worker as computing on GPU 0.
func engineLeg(t *testing.T, tools *recTools, s *standIn) *recLeg {
	t.Helper()
	l := tools.leg(t, map[string]any{"compute_apps": "apps.csv"})
	apps := fmt.Sprintf("%d, vllm serve, %s\n%d, VLLM::EngineCore, %s\n", s.pid, engineGPU0, s.worker, engineGPU0)
	if err := os.WriteFile(filepath.Join(l.smiDir, "apps.csv"), []byte(apps), 0o644); err != nil {
		t.Fatal(err)
	}
	return l
}

// The engine under test, started before the leg and named by its pid or
// by the port it listens on, is the leg's own with its worker: no
// clock.foreign_process, and the record says how it was named. Unnamed,
// it is clock.foreign_process, and the message says how to name it.
func TestRecordEngineNamed(t *testing.T) {
	tools := newRecTools(t)
	srv := startStandIn(t)
	for _, tc := range []struct {
		name  string
		flags []string
		want  []clocks.Engine
	}{
		{"port", []string{"--engine-port", strconv.Itoa(srv.port)}, []clocks.Engine{{PID: srv.pid, How: "port:" + strconv.Itoa(srv.port)}}},
		{"pid", []string{"--engine-pid", strconv.Itoa(srv.pid)}, []clocks.Engine{{PID: srv.pid, How: "pid"}}},
		{"both", []string{"--engine-pid", strconv.Itoa(srv.pid), "--engine-port", strconv.Itoa(srv.port)}, []clocks.Engine{{PID: srv.pid, How: "pid"}}},
		{"none", nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := engineLeg(t, tools, srv)
			// 1 s: a stall of a loaded test machine must not end the
			// window unobserved (what is judged here is whose processes
			// are on the GPU).
			args := append([]string{"record", "--out", l.prefix, "--interval", "1s", "--backend", "nvidia-smi"}, tc.flags...)
			// The command ends once the first sample is in the stream, as
			// a bench client ends well after the sampler's first reading
			// (a fixed sleep may end first on a loaded machine).
			code, _, stderr := l.run("", append(args, "--", "sh", "-c", `while [ ! -s "$0" ]; do sleep 0.05; done; sleep 0.3`, l.stream())...)
			if code != 0 {
				t.Fatalf("exit %d; stderr:\n%s", code, stderr)
			}
			rec := parsedRecord(t, l)
			cp := rec.ComputeProcesses
			if cp == nil {
				t.Fatalf("no compute processes; stderr:\n%s", stderr)
			}
			if fmt.Sprint(cp.Engine) != fmt.Sprint(tc.want) {
				t.Errorf("engine %+v, want %+v", cp.Engine, tc.want)
			}
			leg := clocks.LoadLeg(clocks.LegFiles{Name: "r1", RecordPath: l.record(), StreamPath: l.stream()})
			if tc.want == nil {
				msg := ""
				for _, r := range leg.Reasons {
					if r.Code == clocks.CodeForeignProcess {
						msg = r.Message
					}
				}
				want := fmt.Sprintf(`pid %d "vllm serve" on %s at the first and the last reading; pid %d "VLLM::EngineCore" on %s at the first and the last reading;`, srv.pid, engineGPU0, srv.worker, engineGPU0)
				if !strings.Contains(msg, want) || !strings.HasSuffix(msg, "stop it before the leg; "+clocks.EngineHint) {
					t.Errorf("%s message %q\nwant it to hold %q and end %q", clocks.CodeForeignProcess, msg, want, clocks.EngineHint)
				}
				return
			}
			for _, r := range leg.Reasons {
				if r.Code == clocks.CodeForeignProcess {
					t.Errorf("reason %s: %s", r.Code, r.Message)
				}
			}
			for _, ps := range [][]clocks.ComputeProcess{cp.First, cp.Last} {
				if len(ps) != 2 || ps[0].Proc != clocks.ProcOwn || ps[1].Proc != clocks.ProcOwn {
					t.Errorf("processes %+v, want the server and its worker, own", ps)
				}
			}
			if !strings.Contains(stderr, fmt.Sprintf("engine under test: pid %d (", srv.pid)) || strings.Contains(stderr, clocks.CodeForeignProcess) {
				t.Errorf("stderr:\n%s", stderr)
			}
		})
	}
}

// sample takes the same flags, beside --pid: --engine-pid as a comma list.
func TestSampleEnginePIDList(t *testing.T) {
	tools := newRecTools(t)
	srv := startStandIn(t)
	l := engineLeg(t, tools, srv)
	p := l.start("", "sample", "--out", l.prefix, "--interval", "1s", "--backend", "nvidia-smi",
		"--pid", strconv.Itoa(os.Getpid()), "--engine-pid", fmt.Sprintf("%d,%d", srv.pid, srv.worker))
	l.waitLines(1)
	p.cmd.Process.Signal(syscall.SIGTERM)
	if code := p.wait(t); code != 0 {
		t.Fatalf("exit %d; stderr:\n%s", code, p.stderr.String())
	}
	rec := parsedRecord(t, l)
	want := []clocks.Engine{{PID: srv.pid, How: "pid"}, {PID: srv.worker, How: "pid"}}
	if rec.ComputeProcesses == nil || fmt.Sprint(rec.ComputeProcesses.Engine) != fmt.Sprint(want) {
		t.Errorf("compute processes %+v, want engines %+v", rec.ComputeProcesses, want)
	}
}

// An engine that is not running, a port nobody listens on, and a flag
// value that is no pid or port are usage errors (exit 2) before anything
// runs: no stream, no command.
func TestEngineRefusedAtStart(t *testing.T) {
	tools := newRecTools(t)
	exited := exec.Command("true")
	if err := exited.Run(); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	free := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	gone := exited.Process.Pid
	for _, tc := range []struct {
		name  string
		flags []string
		want  string
	}{
		{"a stand-in that exited", []string{"--engine-pid", strconv.Itoa(gone)},
			fmt.Sprintf("--engine-pid %d: engine not found: no process %d is running; start the engine first, then name its pid", gone, gone)},
		{"a port nobody listens on", []string{"--engine-port", strconv.Itoa(free)},
			fmt.Sprintf("--engine-port %d: engine not found: nothing listens on TCP port %d (read /proc/net/tcp", free, free)},
		{"pid 0", []string{"--engine-pid", "0"}, "--engine-pid 0: want a process id > 0"},
		{"port 70000", []string{"--engine-port", "70000"}, "--engine-port 70000: want a TCP port, 1 to 65535"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			l := tools.leg(t, nil)
			marker := filepath.Join(t.TempDir(), "ran")
			for _, cmd := range [][]string{
				append(append([]string{"record", "--out", l.prefix, "--backend", "nvidia-smi"}, tc.flags...), "--", "touch", marker),
				append([]string{"sample", "--out", l.prefix, "--backend", "nvidia-smi"}, tc.flags...),
			} {
				code, _, stderr := l.run("", cmd...)
				if code != ExitUsage || !strings.Contains(stderr, tc.want) {
					t.Errorf("%s: exit %d, want %d; stderr:\n%s\nwant it to hold %q", cmd[0], code, ExitUsage, stderr, tc.want)
				}
				for _, p := range []string{l.stream(), l.record(), marker} {
					if _, err := os.Stat(p); err == nil {
						t.Errorf("%s: %s exists", cmd[0], p)
					}
				}
			}
		})
	}
}

// record writes the memory record beside the tree's clocks: the largest
// per-reading sum of the GPUs' memory_used_mib in the stream, the host RSS
// of the command's tree, and the readings.
func TestRecordWritesMemory(t *testing.T) {
	tools := newRecTools(t)
	l := tools.leg(t, map[string]any{"gpus": 2, "plan": []map[string]any{
		{"gpu_values": map[string]map[string]string{"0": {"memory.used": "1000"}, "1": {"memory.used": "2000"}}},
		{"gpu_values": map[string]map[string]string{"0": {"memory.used": "5000"}, "1": {"memory.used": "100"}}},
		{"gpu_values": map[string]map[string]string{"0": {"memory.used": "2500"}, "1": {"memory.used": "2600.5"}}},
		{"gpu_values": map[string]map[string]string{"0": {"memory.used": "10"}, "1": {"memory.used": "20"}}},
	}})
	// The memory record is written whether or not the clock window holds:
	// a loaded test machine that stalls the sampler past 3 intervals ends
	// it refused (exit 1), and the record is checked against the stream
	// all the same.
	code, _, stderr := l.run("", "record", "--out", l.prefix, "--interval", "250ms", "--backend", "nvidia-smi", "--gpu", "0,1", "--", "sh", "-c", `while [ ! -s "$0" ]; do sleep 0.05; done; sleep 1`, l.stream())
	if code != 0 && !strings.Contains(stderr, "the end of the window is unobserved") {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	mem := filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(l.prefix)))), "memory", "m", "e", "r1.summary.json")
	data, err := os.ReadFile(mem)
	if err != nil {
		t.Fatalf("no memory record: %v; stderr:\n%s", err, stderr)
	}
	var got struct {
		GPU *float64 `json:"peak_gpu_memory_mib"`
		RSS *float64 `json:"peak_host_rss_mib"`
		N   int      `json:"n"`
	}
	if err := json.Unmarshal(data, &got); err != nil {
		t.Fatal(err)
	}
	// What the stream says, reading for reading.
	sums := map[string]float64{}
	var order []string
	for _, line := range strings.Split(strings.TrimSpace(readFile(t, l.stream())), "\n") {
		var s struct {
			T   string   `json:"t"`
			Mem *float64 `json:"memory_used_mib"`
		}
		if err := json.Unmarshal([]byte(line), &s); err != nil || s.Mem == nil {
			t.Fatalf("stream line %q: %v", line, err)
		}
		if _, ok := sums[s.T]; !ok {
			order = append(order, s.T)
		}
		sums[s.T] += *s.Mem
	}
	peak := 0.0
	for _, v := range sums {
		peak = math.Max(peak, v)
	}
	if got.GPU == nil || *got.GPU != peak || got.N != len(order) || len(order) < 1 {
		t.Errorf("memory record %s, want peak %v over %d readings", data, peak, len(order))
	}
	// The probe took the plan's first step (3000 MiB), which is no
	// reading; the second reading's 5100.5 MiB is the peak.
	if len(order) >= 2 && peak != 5100.5 {
		t.Errorf("peak %v over the stream, want 5100.5 (the second reading)", peak)
	}
	// sleep's RSS is a few hundred kB to a few MB.
	if got.RSS == nil || !(*got.RSS > 0) || *got.RSS > 64 {
		t.Errorf("peak host RSS %v MiB, want the command's (> 0, < 64 MiB): %s", got.RSS, data)
	}
	if !strings.Contains(stderr, "wrote "+mem+": peak GPU memory ") {
		t.Errorf("stderr:\n%s", stderr)
	}
	// A memory record already there is never replaced: a usage error
	// before anything runs.
	r2 := strings.TrimSuffix(mem, "r1.summary.json") + "r2.summary.json"
	if err := os.WriteFile(r2, []byte("{}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	prefix2 := strings.TrimSuffix(l.prefix, "r1") + "r2"
	code, _, stderr = l.run("", "record", "--out", prefix2, "--backend", "nvidia-smi", "--", "true")
	if code != ExitUsage || !strings.Contains(stderr, r2+": already exists; a sampler never adds to evidence it did not start") {
		t.Errorf("an existing memory record: exit %d; stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(prefix2 + ".samples.jsonl"); err == nil {
		t.Errorf("a stream was started")
	}
	// --memory-out names the record where the prefix is not in a tree (the
	// fake now repeats its plan's last step: 10 MiB on GPU 0).
	out := filepath.Join(t.TempDir(), "leg")
	memOut := filepath.Join(t.TempDir(), "mem", "leg.json")
	code, _, stderr = l.run("", "record", "--out", out, "--memory-out", memOut, "--interval", "1s", "--backend", "nvidia-smi", "--", "sh", "-c", `while [ ! -s "$0" ]; do sleep 0.05; done; sleep 0.3`, out+".samples.jsonl")
	if code != 0 || !strings.HasPrefix(readFile(t, memOut), `{"peak_gpu_memory_mib":10,"peak_host_rss_mib":`) {
		t.Errorf("--memory-out: exit %d; stderr:\n%s", code, stderr)
	}
}

// parsedRecord reads the leg's record as check does.
func parsedRecord(t *testing.T, l *recLeg) *clocks.Record {
	t.Helper()
	rec, err := clocks.ParseRecord([]byte(readFile(t, l.record())))
	if err != nil {
		t.Fatal(err)
	}
	return rec
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

// summarize on a tree with no leg exits 2 saying what it found; a model id
// with a "/" (a Hugging Face id used as $model) is named, with the fix.
func TestSummarizeNoLeg(t *testing.T) {
	tree := t.TempDir()
	p := filepath.Join(tree, "bench", "meta-llama", "Llama-3.1-8B-Instruct", "vllm", "r1", "8.json")
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr strings.Builder
	code := Main([]string{"summarize", "--baseline", "vllm", tree}, strings.NewReader(""), &stdout, &stderr)
	want := `no leg found: want bench/<model>/<engine>/r<N>/<point>.json, memory/<model>/<engine>/r<N>.summary.json or clocks/<model>/<engine>/r<N>.summary.json; found: bench/meta-llama/Llama-3.1-8B-Instruct/vllm: one level too deep: the model id "meta-llama/Llama-3.1-8B-Instruct" holds a "/"`
	if code != ExitUsage || !strings.Contains(stderr.String(), want) || !strings.Contains(stderr.String(), "e.g. meta-llama--Llama-3.1-8B-Instruct") || stdout.Len() != 0 {
		t.Errorf("exit %d, stdout %q, stderr:\n%s", code, stdout.String(), stderr.String())
	}
}

// An --interval the sampler cannot hold (shorter than 3 times the fastest
// of 3 readings timed at the start: here a fake nvidia-smi that takes
// 400 ms each time) is exit 2 before anything runs, naming the interval it
// can hold.
func TestIntervalTheSamplerCannotHold(t *testing.T) {
	tools := newRecTools(t)
	l := tools.leg(t, map[string]any{"plan": []map[string]any{{"sleep_ms": 400}, {"sleep_ms": 400}, {"sleep_ms": 400}, {}}})
	var env []string
	for _, kv := range l.env {
		if !strings.HasPrefix(kv, probeLatencyEnv+"=") {
			env = append(env, kv)
		}
	}
	l.env = env
	marker := filepath.Join(t.TempDir(), "ran")
	code, _, stderr := l.run("", "record", "--out", l.prefix, "--interval", "250ms", "--backend", "nvidia-smi", "--", "touch", marker)
	re := regexp.MustCompile(`--interval 250ms is shorter than 3 × ([0-9.]+) s, the fastest of 3 readings timed at the start: this sampler cannot hold it on this box ` +
		`\(a reading over 3 intervals is a gap that voids the leg, clock.coverage\); use --interval ([0-9.]+)s or more \(reading nvidia-smi `)
	m := re.FindStringSubmatch(stderr)
	if code != ExitUsage || m == nil || m[1] < "0.400" {
		t.Errorf("exit %d; stderr:\n%s", code, stderr)
	}
	for _, p := range []string{marker, l.stream()} {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s exists", p)
		}
	}
}

// record whose command died of a signal says so on its verdict line: a
// clean clock is no clean run.
func TestRecordVerdictNamesTheSignal(t *testing.T) {
	tools := newRecTools(t)
	l := tools.leg(t, nil)
	code, _, stderr := l.run("", "record", "--out", l.prefix, "--interval", "1s", "--backend", "nvidia-smi", "--", "sh", "-c", "sleep 0.3; kill -TERM $$")
	want := "; but sh was killed by signal 15 (terminated): its run did not finish, so its results are not a leg's\n"
	if code != 128+15 || !regexp.MustCompile(`clockgate record: verdict: [^\n]*`+regexp.QuoteMeta(want)).MatchString(stderr) {
		t.Errorf("exit %d; stderr:\n%s\nwant the verdict line to end %q", code, stderr, want)
	}
	l = tools.leg(t, nil)
	_, _, stderr = l.run("", "record", "--out", l.prefix, "--interval", "1s", "--backend", "nvidia-smi", "--", "sh", "-c", "sleep 0.3; exit 3")
	if strings.Contains(stderr, "killed by signal") {
		t.Errorf("a command that exited 3 named as killed:\n%s", stderr)
	}
}
