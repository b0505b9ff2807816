package sampler

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// fakeProcFS is a /proc for tests: processes with a parent, a name, open
// sockets and a VmRSS, and the tcp tables.
type fakeProcFS struct {
	t    *testing.T
	root string
}

func newFakeProcFS(t *testing.T) *fakeProcFS {
	t.Helper()
	root := t.TempDir()
	if err := os.MkdirAll(filepath.Join(root, "net"), 0o755); err != nil {
		t.Fatal(err)
	}
	return &fakeProcFS{t: t, root: root}
}

// proc adds pid, a child of ppid named comm, started at start, holding
// the socket inodes given, with rssKB of resident memory.
func (p *fakeProcFS) proc(pid, ppid int, comm, start string, rssKB int, sockets ...string) {
	p.t.Helper()
	dir := filepath.Join(p.root, strconv.Itoa(pid))
	if err := os.MkdirAll(filepath.Join(dir, "fd"), 0o755); err != nil {
		p.t.Fatal(err)
	}
	// Fields 3 to 22: state, ppid, then 16 more, starttime last.
	stat := fmt.Sprintf("%d (%s) S %d 0 0 0 -1 0 0 0 0 0 0 0 0 0 20 0 1 0 %s 1000 100\n", pid, comm, ppid, start)
	write(p.t, filepath.Join(dir, "stat"), stat)
	write(p.t, filepath.Join(dir, "comm"), comm+"\n")
	write(p.t, filepath.Join(dir, "status"), fmt.Sprintf("Name:\t%s\nVmPeak:\t  999999 kB\nVmRSS:\t  %d kB\nThreads:\t1\n", comm, rssKB))
	for i, ino := range append([]string{"pipe:[1]"}, sockets...) {
		link := ino
		if !strings.Contains(ino, ":") {
			link = "socket:[" + ino + "]"
		}
		if err := os.Symlink(link, filepath.Join(dir, "fd", strconv.Itoa(i+3))); err != nil {
			p.t.Fatal(err)
		}
	}
}

// tcp writes the tcp (v6 false) or tcp6 table: one line per "PORTHEX STATE INODE".
func (p *fakeProcFS) tcp(v6 bool, socks ...string) {
	p.t.Helper()
	name, addr := "tcp", "0100007F"
	if v6 {
		name, addr = "tcp6", "00000000000000000000000001000000"
	}
	b := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	for i, s := range socks {
		f := strings.Fields(s)
		b += fmt.Sprintf("   %d: %s:%s %s:0000 %s 00000000:00000000 00:00000000 00000000  1000        0 %s 1 0000000000000000 100 0 0 10 0\n",
			i, addr, f[0], strings.Repeat("0", len(addr)), f[1], f[2])
	}
	write(p.t, filepath.Join(p.root, "net", name), b)
}

func write(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The process listening on a port is found through /proc/net/tcp and tcp6
// and the socket inodes in /proc/PID/fd: the topmost holder of the socket
// (a worker that inherited it is its descendant), IPv4 or IPv6, and only a
// socket in state LISTEN.
func TestPortListeners(t *testing.T) {
	p := newFakeProcFS(t)
	// 8000 = 0x1F40; 30000 = 0x7530.
	p.tcp(false, "1F40 0A 5001", "1F40 01 5002", "7530 01 5003")
	p.tcp(true, "7530 0A 6001")
	p.proc(100, 1, "vllm", "10", 1000, "5001")
	p.proc(101, 100, "uvicorn-worker", "11", 1000, "5001")
	p.proc(200, 1, "client", "12", 1000, "5002", "5003")
	p.proc(300, 1, "sglang", "13", 1000, "6001")
	for _, tc := range []struct {
		port int
		want []int
	}{{8000, []int{100}}, {30000, []int{300}}} {
		got, err := PortListeners(p.root, tc.port)
		if err != nil || fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("port %d: %v, %v; want %v", tc.port, got, err, tc.want)
		}
	}
	engines, err := ResolveEngines(p.root, nil, []int{30000, 8000})
	if err != nil || fmt.Sprint(engines) != fmt.Sprint([]clocks.Engine{{PID: 300, How: "port:30000"}, {PID: 100, How: "port:8000"}}) {
		t.Errorf("ResolveEngines: %+v, %v", engines, err)
	}
}

// A port nobody listens on (a connection on it is not a listener), a
// listener no process holds (a container), a container's port forwarder,
// unreadable tables and a pid not running are ErrEngine, each saying what
// to do.
func TestPortListenersRefused(t *testing.T) {
	p := newFakeProcFS(t)
	p.tcp(false, "1F40 01 5002", "1F41 0A 7001", "1F42 0A 7002")
	p.tcp(true)
	p.proc(200, 1, "client", "12", 1000, "5002")
	p.proc(400, 1, "docker-proxy", "14", 1000, "7002")
	for _, tc := range []struct {
		port int
		want string
	}{
		{8000, "--engine-port 8000: engine not found: nothing listens on TCP port 8000 (read " + p.root + "/net/tcp, " + p.root + "/net/tcp6); start the server first"},
		{8001, "--engine-port 8001: engine not found: a socket listens on TCP port 8001, but no process in " + p.root + " holds it: the server runs in a container"},
		{8002, "--engine-port 8002: engine not found: TCP port 8002 is held by docker-proxy (pid 400), a container's port forwarder"},
		{0, "--engine-port 0: engine not found: want a TCP port, 1 to 65535"},
	} {
		_, err := PortListeners(p.root, tc.port)
		if !errors.Is(err, ErrEngine) || !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("port %d: %v\nwant %s…", tc.port, err, tc.want)
		}
	}
	_, err := PortListeners(t.TempDir(), 8000)
	if !errors.Is(err, ErrEngine) || !strings.Contains(err.Error(), "can be read, so no listener can be found") {
		t.Errorf("no tables: %v", err)
	}
	write(t, filepath.Join(p.root, "net", "tcp"), "  sl  local_address\n   0: 0100007F\n")
	if _, err := PortListeners(p.root, 8000); !errors.Is(err, ErrEngine) || !strings.Contains(err.Error(), p.root+"/net/tcp:2: want at least 10 fields, found 2") {
		t.Errorf("a torn table: %v", err)
	}
	const gone = 2147483000
	if _, err := ResolveEngines(p.root, []int{gone}, nil); !errors.Is(err, ErrEngine) ||
		err.Error() != fmt.Sprintf("--engine-pid %d: engine not found: no process %d is running; start the engine first, then name its pid (pgrep -f 'vllm serve' finds it), or name its port with --engine-port", gone, gone) {
		t.Errorf("a pid not running: %v", err)
	}
	self := os.Getpid()
	if e, err := ResolveEngines("/proc", []int{self, self}, nil); err != nil || fmt.Sprint(e) != fmt.Sprint([]clocks.Engine{{PID: self, How: "pid"}}) {
		t.Errorf("a running pid named twice: %+v, %v", e, err)
	}
}

// The host RSS of the leg's own processes is VmRSS summed over the roots'
// trees, a worker that reparented away still counted, and a pid reused by
// another process not.
func TestHostRSS(t *testing.T) {
	p := newFakeProcFS(t)
	p.proc(100, 1, "vllm", "10", 2048, "5001")
	p.proc(101, 100, "EngineCore", "11", 4096)
	p.proc(102, 101, "worker", "12", 1024)
	p.proc(200, 1, "other", "13", 999999)
	if NewHostRSS(p.root, 0, -1) != nil {
		t.Errorf("no roots, and a reader")
	}
	h := NewHostRSS(p.root, 100, 0)
	if mib, n := h.Read(); mib != 7 || n != 3 {
		t.Errorf("first reading %v MiB over %d processes, want 7 over 3", mib, n)
	}
	// The worker reparents to init: still own.
	os.RemoveAll(filepath.Join(p.root, "102"))
	p.proc(102, 1, "worker", "12", 3072)
	if mib, n := h.Read(); mib != 9 || n != 3 {
		t.Errorf("reparented: %v MiB over %d, want 9 over 3", mib, n)
	}
	// The worker's pid is reused by another process: not own.
	os.RemoveAll(filepath.Join(p.root, "102"))
	p.proc(102, 1, "reused", "99", 3072)
	if mib, n := h.Read(); mib != 6 || n != 2 {
		t.Errorf("reused pid: %v MiB over %d, want 6 over 2", mib, n)
	}
}

// The memory record's path mirrors the clock prefix's under TREE/memory,
// and only for a prefix laid out as TREE/clocks/<model>/<engine>/r<N>.
func TestMemoryPath(t *testing.T) {
	for _, tc := range []struct{ prefix, want string }{
		{"tree/clocks/llama/vllm/r1", "tree/memory/llama/vllm/r1.summary.json"},
		{"/x/clocks/meta-llama--Llama-3.1-8B-Instruct/sglang/r12", "/x/memory/meta-llama--Llama-3.1-8B-Instruct/sglang/r12.summary.json"},
		{"clocks/llama/vllm/r3", "memory/llama/vllm/r3.summary.json"},
		{"tree/clocks/llama/vllm/leg1", ""},
		{"tree/clocks/llama/vllm/r0", ""},
		{"tree/clock/llama/vllm/r1", ""},
		{"tree/clocks/meta-llama/Llama-3.1/vllm/r1", ""},
		{"/tmp/leg", ""},
	} {
		got, ok := MemoryPath(tc.prefix)
		if got != tc.want || ok != (tc.want != "") {
			t.Errorf("MemoryPath(%q) = %q, %v; want %q", tc.prefix, got, ok, tc.want)
		}
	}
}

// The memory record is the largest per-reading sum over the GPUs, the
// largest host RSS, and the count; a reading without a GPU's memory, or
// nothing but zeros, is no record. It is written once, never replaced.
func TestMemoryPeaks(t *testing.T) {
	gpu := func(i int, mib float64) *clocks.Sample {
		return &clocks.Sample{GPUIndex: i, GPUUUID: "GPU-" + strconv.Itoa(i), MemoryUsedMiB: &mib}
	}
	f := func(x float64) *float64 { return &x }
	var m MemoryPeaks
	if _, err := m.Record(); err == nil || err.Error() != "no reading was taken" {
		t.Errorf("empty: %v", err)
	}
	m.Add([]*clocks.Sample{gpu(0, 1000), gpu(1, 2000)}, f(10))
	m.Add([]*clocks.Sample{gpu(0, 5000), gpu(1, 100)}, f(30.5))
	m.Add([]*clocks.Sample{gpu(0, 2500), gpu(1, 2600.5)}, f(20))
	rec, err := m.Record()
	if err != nil || string(rec.JSON()) != `{"peak_gpu_memory_mib":5100.5,"peak_host_rss_mib":30.5,"n":3}`+"\n" {
		t.Fatalf("record %s, %v", rec.JSON(), err)
	}
	var noRSS MemoryPeaks
	noRSS.Add([]*clocks.Sample{gpu(0, 12)}, nil)
	if rec, err := noRSS.Record(); err != nil || string(rec.JSON()) != `{"peak_gpu_memory_mib":12,"peak_host_rss_mib":null,"n":1}`+"\n" {
		t.Errorf("no host RSS: %v, %v", rec, err)
	}
	var missing MemoryPeaks
	missing.Add([]*clocks.Sample{gpu(0, 12)}, nil)
	missing.Add([]*clocks.Sample{gpu(0, 12), {GPUIndex: 1, GPUUUID: "GPU-1"}}, nil)
	if _, err := missing.Record(); err == nil || err.Error() != "GPU 1 (GPU-1) gave no memory used at reading 2" {
		t.Errorf("missing: %v", err)
	}
	var zero MemoryPeaks
	zero.Add([]*clocks.Sample{gpu(0, 0)}, f(1))
	if _, err := zero.Record(); err == nil || err.Error() != "every one of the 1 readings gave 0 MiB of GPU memory used" {
		t.Errorf("zero: %v", err)
	}
	path := filepath.Join(t.TempDir(), "memory", "m", "e", "r1.summary.json")
	if err := WriteMemoryRecord(path, rec); err != nil {
		t.Fatal(err)
	}
	if err := WriteMemoryRecord(path, rec); err == nil {
		t.Errorf("a memory record was replaced")
	}
}

// measuredHold is a configuration at a 1 s interval whose interval check
// times the fake nvidia-smi at path itself, and an opener of that fake
// that keeps the backend it opened in *got.
func measuredHold(t *testing.T, path string) (Config, func(context.Context) (Backend, error), **SMI) {
	cfg := testConfig(t)
	cfg.ProbeLatency = 0
	cfg.Interval = time.Second
	got := new(*SMI)
	open := func(ctx context.Context) (Backend, error) {
		b, err := Open(ctx, Options{Kind: KindSMI, SMIPath: path, Logf: t.Logf})
		*got, _ = b.(*SMI)
		return b, err
	}
	return cfg, open, got
}

// An interval shorter than HoldFactor times the fastest of HoldReadings
// timed readings is refused before anything runs, naming the interval the
// sampler can hold: here a fake nvidia-smi that takes 400 ms to answer
// three times, measured.
func TestHoldRefused(t *testing.T) {
	t.Parallel()
	path := installFakeSMI(t, smiConfig{Plan: []smiStep{{SleepMS: 400}, {SleepMS: 400}, {SleepMS: 400}, {}}})
	cfg, open, got := measuredHold(t, path)
	_, err := New(context.Background(), cfg, open)
	smi := *got
	if smi == nil {
		t.Fatalf("no nvidia-smi backend: %v", err)
	}
	lat := smi.ProbeLatency()
	// The probe's own time is one of the three: the message's is at least
	// 400 ms, and no more than the probe's; the interval it names is 3
	// times the fastest, rounded up to 10 ms.
	m := regexp.MustCompile(`shorter than 3 × ([0-9.]+) s, .* use --interval ([0-9.]+s) or more`).FindStringSubmatch(fmt.Sprint(err))
	if m == nil {
		t.Fatalf("probe %v; err %v", lat, err)
	}
	fastest, _ := time.ParseDuration(m[1] + "s")
	hold, _ := time.ParseDuration(m[2])
	want := fmt.Sprintf("invalid sampler configuration: --interval 1s is shorter than 3 × %s s, the fastest of 3 readings timed at the start: this sampler cannot hold it on this box (a reading over 3 intervals is a gap that voids the leg, clock.coverage); use --interval %v or more (reading %s)",
		m[1], hold, smi.Name())
	// (The message rounds to the millisecond: the exact fastest is within
	// half of one of what it prints.)
	const half = time.Millisecond / 2
	if fastest < 400*time.Millisecond || fastest > lat+half || !errors.Is(err, ErrConfig) || err.Error() != want ||
		hold < 3*(fastest-half) || hold > 3*(fastest+half)+10*time.Millisecond || hold%(10*time.Millisecond) != 0 {
		t.Fatalf("probe %v; err %v\nwant %s", lat, err, want)
	}
	// A reading of a third of the interval named: what the sampler holds.
	lat = hold / HoldFactor
	if _, err := os.Stat(StreamPath(cfg.Prefix)); err == nil {
		t.Errorf("a stream was started")
	}
	// An interval of HoldFactor times the reading is held.
	cfg.Interval = hold
	cfg.ProbeLatency = lat
	s, err := New(context.Background(), cfg, opener(smi))
	if err != nil {
		t.Fatalf("interval %v for a %v probe: %v", hold, lat, err)
	}
	s.Close()
	cfg.Interval = HoldFactor*lat - time.Nanosecond
	if _, err := New(context.Background(), cfg, opener(smi)); !errors.Is(err, ErrConfig) {
		t.Errorf("interval %v for a %v probe: %v", cfg.Interval, lat, err)
	}
	// The grid's plan sets the interval as a key: the message names it so.
	cfg.Interval = time.Second
	cfg.IntervalSetting = func(d time.Duration) string { return fmt.Sprintf("interval = %q", d.String()) }
	_, err = New(context.Background(), cfg, opener(smi))
	if want := fmt.Sprintf(`interval = "1s" is shorter than 3 × %.3f s`, lat.Seconds()); err == nil || !strings.Contains(err.Error(), want) ||
		!strings.Contains(err.Error(), fmt.Sprintf(`use interval = %q or more`, hold.String())) {
		t.Errorf("with the plan's setting: %v", err)
	}
}

// One slow reading at the probe is not what the sampler can hold: a
// probe of 400 ms then a fast reading is timed again, and a 1 s interval
// is held. Without the readings after the probe it would be refused.
func TestHoldOneSlowProbe(t *testing.T) {
	t.Parallel()
	path := installFakeSMI(t, smiConfig{Plan: []smiStep{{SleepMS: 400}, {}}})
	cfg, open, got := measuredHold(t, path)
	s, err := New(context.Background(), cfg, open)
	smi := *got
	if err != nil {
		t.Fatalf("probe %v: %v", smi.ProbeLatency(), err)
	}
	s.Close()
	if smi.ProbeLatency() < 400*time.Millisecond {
		t.Fatalf("the probe took %v: the fake did not sleep", smi.ProbeLatency())
	}
}
