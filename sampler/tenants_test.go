package sampler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// fakeProc writes a /proc of pid → ppid under a temporary directory.
func fakeProc(t *testing.T, tree map[int]int) string {
	t.Helper()
	root := t.TempDir()
	for pid, ppid := range tree {
		dir := filepath.Join(root, strconv.Itoa(pid))
		os.MkdirAll(dir, 0o755)
		// A comm with a space and a parenthesis, as /proc allows.
		stat := strconv.Itoa(pid) + " (a (b) c) S " + strconv.Itoa(ppid) + " 1 1 0 -1\n"
		if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.MkdirAll(filepath.Join(root, "self"), 0o755)
	return root
}

// The sampler's own processes are its roots and their descendants, read
// from /proc; a visible pid outside them is foreign, an invisible one
// unknown, and one own at an earlier listing stays own.
func TestClassifyProcs(t *testing.T) {
	// 1 init; 100 the sampler; 101 its command; 102 the command's worker;
	// 200 --pid; 201 its child; 300 another user's trainer.
	root := fakeProc(t, map[int]int{1: 0, 100: 1, 101: 100, 102: 101, 200: 1, 201: 200, 300: 1})
	ps := []clocks.ComputeProcess{{PID: 300, Name: "trainer", GPUUUID: "GPU-a"}, {PID: 102, Name: "worker", GPUUUID: "GPU-a"},
		{PID: 201, Name: "pidchild", GPUUUID: "GPU-a"}, {PID: 999, Name: "ghost", GPUUUID: "GPU-a"}, {PID: 400, Name: "was-own", GPUUUID: "GPU-a"}}
	got := classifyProcs(ps, root, []int{100, 200}, map[int]bool{400: true})
	want := map[int]string{102: clocks.ProcOwn, 201: clocks.ProcOwn, 300: clocks.ProcForeign, 999: clocks.ProcUnknown, 400: clocks.ProcOwn}
	for _, p := range got {
		if want[p.PID] != p.Proc {
			t.Errorf("pid %d: %s, want %s", p.PID, p.Proc, want[p.PID])
		}
	}
	if pids := []int{got[0].PID, got[1].PID, got[2].PID, got[3].PID, got[4].PID}; !reflect.DeepEqual(pids, []int{102, 201, 300, 400, 999}) {
		t.Errorf("order %v", pids)
	}
	// Without --pid, its tree is foreign.
	for _, p := range classifyProcs(ps, root, []int{100, 0}, nil) {
		if p.PID == 201 && p.Proc != clocks.ProcForeign {
			t.Errorf("pid 201 without --pid: %s", p.Proc)
		}
	}
}

// --query-compute-apps lines: pid, name (which may hold a comma), UUID;
// an empty answer is no process; anything else malformed is named.
func TestParseComputeApps(t *testing.T) {
	got, err := parseComputeApps("q", "4100, python3, GPU-a\n777, /opt/x, y/trainer, GPU-b\n")
	want := []clocks.ComputeProcess{{PID: 4100, Name: "python3", GPUUUID: "GPU-a"}, {PID: 777, Name: "/opt/x, y/trainer", GPUUUID: "GPU-b"}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, %v", got, err)
	}
	if got, err := parseComputeApps("q", ""); err != nil || len(got) != 0 {
		t.Errorf("empty: %+v, %v", got, err)
	}
	for in, msg := range map[string]string{
		"x, python3, GPU-a\n":          `q: line 1: pid "x" is not a positive integer`,
		"1, python3\n":                 `q: line 1: want pid, process_name, gpu_uuid; found "1, python3"`,
		"1, python3, [N/A]\n":          `q: line 1: gpu_uuid "[N/A]" is not a GPU UUID`,
		"1, a, GPU-a\n\n2, b, GPU-a\n": "q: line 2 is empty",
	} {
		if _, err := parseComputeApps("q", in); err == nil || err.Error() != msg {
			t.Errorf("%q: %v, want %s", in, err, msg)
		}
	}
}

// NVML lists each read GPU's compute processes by UUID, naming each, and
// one it cannot name stays listed.
func TestSamplerNVMLComputeProcesses(t *testing.T) {
	g := newFakeNVML()
	g.count = 2
	g.symbols[symComputeProcs] = true
	g.procs = map[int][]uint32{0: {4100, 777}, 1: {9}}
	g.names = map[uint32]string{4100: "python3", 777: "trainer"}
	n, err := NewNVML(g, GPUIndices(0, 1), 0, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := n.ComputeProcesses(context.Background())
	want := []clocks.ComputeProcess{{PID: 4100, Name: "python3", GPUUUID: fakeUUID(0)}, {PID: 777, Name: "trainer", GPUUUID: fakeUUID(0)},
		{PID: 9, Name: "[nvmlSystemGetProcessName: ERROR_NOT_FOUND]", GPUUUID: fakeUUID(1)}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("%+v, %v", got, err)
	}
	g.symbols[symComputeProcs] = false
	if _, err := n.ComputeProcesses(context.Background()); err == nil || err.Error() != "NVML: the driver has no nvmlDeviceGetComputeRunningProcesses_v3" {
		t.Errorf("err = %v", err)
	}
}

// listingBackend is a fake backend whose compute processes are given per
// listing (an error where lists ends).
type listingBackend struct {
	fakeBackend
	lmu   sync.Mutex
	lists [][]clocks.ComputeProcess
	calls int
}

func (b *listingBackend) ComputeProcesses(context.Context) ([]clocks.ComputeProcess, error) {
	b.lmu.Lock()
	defer b.lmu.Unlock()
	b.calls++
	if b.calls > len(b.lists) {
		return nil, fmt.Errorf("listing %d refused", b.calls)
	}
	return b.lists[b.calls-1], nil
}

// The sampler lists the compute processes after its first reading and at
// its stop, keeps those on its GPUs, classifies them from /proc (its own
// pid is its own, pid 1 is not), and writes both listings and the own
// pids into the record; a listing that fails leaves the record without
// them, saying why.
func TestSamplerRecordsComputeProcesses(t *testing.T) {
	uuid := "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37"
	self := clocks.ComputeProcess{PID: os.Getpid(), Name: "self", GPUUUID: uuid}
	initp := clocks.ComputeProcess{PID: 1, Name: "init", GPUUUID: uuid}
	elsewhere := clocks.ComputeProcess{PID: 1, Name: "init", GPUUUID: "GPU-other"}
	for _, c := range []struct {
		name  string
		lists [][]clocks.ComputeProcess
		log   string
	}{
		{"both", [][]clocks.ComputeProcess{{self, initp, elsewhere}, {initp}}, ""},
		{"last refused", [][]clocks.ComputeProcess{{self}}, "compute processes not recorded: at the last reading: listing 2 refused"},
		{"first refused", nil, "compute processes not recorded: listing 1 refused"},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := &listingBackend{lists: c.lists}
			b.util = []int{100}
			cfg := testConfig(t)
			var logs []string
			var lmu sync.Mutex
			cfg.Logf = func(f string, a ...any) { lmu.Lock(); logs = append(logs, fmt.Sprintf(f, a...)); lmu.Unlock() }
			s, err := New(context.Background(), cfg, opener(b))
			if err != nil {
				t.Fatal(err)
			}
			stop := make(chan string, 1)
			b.after = func(n int) {
				if n == 3 {
					stop <- clocks.StopSignal
				}
			}
			res, err := runWithTimeout(t, s, context.Background(), stop)
			if err != nil {
				t.Fatal(err)
			}
			cp := res.Record.ComputeProcesses
			if c.log != "" {
				lmu.Lock()
				defer lmu.Unlock()
				if cp != nil || !contains(logs, c.log) {
					t.Errorf("compute processes %+v, logs %q", cp, logs)
				}
				return
			}
			want := &clocks.ComputeProcesses{
				First: []clocks.ComputeProcess{{PID: 1, Name: "init", GPUUUID: uuid, Proc: clocks.ProcForeign}, {PID: os.Getpid(), Name: "self", GPUUUID: uuid, Proc: clocks.ProcOwn}},
				Last:  []clocks.ComputeProcess{{PID: 1, Name: "init", GPUUUID: uuid, Proc: clocks.ProcForeign}},
				Own:   []int{os.Getpid()},
			}
			if !reflect.DeepEqual(cp, want) {
				t.Errorf("compute processes %+v\nwant %+v", cp, want)
			}
			data, _ := os.ReadFile(RecordPath(cfg.Prefix))
			if _, err := clocks.ParseRecord(data); err != nil || !strings.Contains(string(data), `"compute_processes"`) {
				t.Errorf("record: %v\n%s", err, data)
			}
		})
	}
}
