package clocks

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// quietStatic is the test machine's identity, as its host stream says it.
func quietStatic() *HostStatic {
	return &HostStatic{Name: "vm", CPUModel: "Intel(R) Xeon(R) Processor", LogicalCPUs: 2, MemoryTotalMiB: 24105,
		Kernel: "6.18.44-fc-v1147", SMT: "off", NUMANodes: 1, Virtualized: true, CPUsAllowedList: []string{"0-1"}}
}

// quietLines are one quiet host reading per tick of ss: the engine runs a
// core and waits 0.4% of it, nothing else runs.
func quietLines(ss []*Sample) []*HostLine {
	var out []*HostLine
	seen := map[string]bool{}
	for _, s := range ss {
		if seen[s.T] {
			continue
		}
		seen[s.T] = true
		out = append(out, &HostLine{T: s.T, CPU: HostCPU{Busy: 0.5}, OwnCPU: 0.996, OwnWait: 0.004, OtherCPU: 0.004,
			Top: []HostProc{}, PSI: &HostPSI{CPUSome: 1000, MemoryFull: 0, IOFull: 0}, Swap: HostSwap{}})
	}
	return out
}

func hostStreamOf(st *HostStatic, lines []*HostLine) []byte {
	b := append(st.AppendJSON(nil), '\n')
	for _, l := range lines {
		b = append(l.AppendJSON(b), '\n')
	}
	return b
}

// hostFoldOf folds lines with ss's busy ticks, as the judge does.
func hostFoldOf(t *testing.T, st *HostStatic, ss []*Sample, lines []*HostLine) *Host {
	t.Helper()
	ticks := BusyTicks{}
	for _, s := range ss {
		ticks.Add(s.T, s.UtilizationGPUPct != 0)
	}
	h, err := FoldHostStream(bytes.NewReader(hostStreamOf(st, lines)), "r1.host.jsonl", &ticks)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// hostLeg writes a leg with a host stream into a directory and loads it:
// the record's host block is what the stream folds to, after edit.
func hostLeg(t *testing.T, ss []*Sample, st *HostStatic, lines []*HostLine, edit func(*Record)) *Leg {
	t.Helper()
	dir := t.TempDir()
	r := recordOf(t, ss, StopPIDExit)
	r.Host = hostFoldOf(t, st, ss, lines)
	if edit != nil {
		edit(r)
	}
	for name, data := range map[string][]byte{"r1.summary.json": recordJSON(t, r), "r1.samples.jsonl": streamOf(ss),
		"r1.host.jsonl": hostStreamOf(st, lines)} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return LoadLeg(LegFiles{Name: "r1", Root: dir, RecordPath: "r1.summary.json", StreamPath: "r1.samples.jsonl"})
}

func TestHostQuietLegEligible(t *testing.T) {
	ss := cleanWindow(boot13)
	l := hostLeg(t, ss, quietStatic(), quietLines(ss), nil)
	wantCodes(t, l.Reasons)
	h := l.Record.Host
	if h.Readings != 64 || h.BusyReadings != 61 || *h.OwnWaitShare != 0.004 || h.OwnCPUS != 59.76 || *h.OtherCPUCores.Median != 0.004 || h.CPUMHz != nil {
		t.Fatalf("host block %+v", h)
	}
}

// TestHostBlockRecomputed: a host block is the one its stream folds to;
// an edited block, a missing stream, or a reading at no GPU tick is
// clock.invalid (§9.2's rule), and the leg untrusted.
func TestHostBlockRecomputed(t *testing.T) {
	ss := cleanWindow(boot13)
	l := hostLeg(t, ss, quietStatic(), quietLines(ss), func(r *Record) { r.Host.OwnWaitShare = ptr(0.001) })
	wantCodes(t, l.Reasons, CodeInvalid)
	wantReason(t, l.Reasons, CodeInvalid, "the host block is not what its host stream r1.host.jsonl recomputes to", "host.own_wait_share: record 0.001, stream 0.004")
	if l.Trusted() {
		t.Fatal("an edited host block left the leg trusted")
	}
	l = hostLeg(t, ss, quietStatic(), quietLines(ss), func(r *Record) { r.Host.Kernel = "6.1.0" })
	wantReason(t, l.Reasons, CodeInvalid, `host.kernel: record "6.1.0", stream "6.18.44-fc-v1147"`)

	lines := quietLines(ss)
	lines[5].T = "2026-08-12T10:15:08.500Z"
	dir := t.TempDir()
	r := recordOf(t, ss, StopPIDExit)
	r.Host = hostFoldOf(t, quietStatic(), ss, quietLines(ss))
	os.WriteFile(filepath.Join(dir, "r1.summary.json"), recordJSON(t, r), 0o644)
	os.WriteFile(filepath.Join(dir, "r1.samples.jsonl"), streamOf(ss), 0o644)
	lf := LegFiles{Name: "r1", Root: dir, RecordPath: "r1.summary.json", StreamPath: "r1.samples.jsonl"}
	l = LoadLeg(lf)
	wantCodes(t, l.Reasons, CodeInvalid)
	wantReason(t, l.Reasons, CodeInvalid, "has a host block, but its host stream r1.host.jsonl", "a host block stands only on its stream")
	os.WriteFile(filepath.Join(dir, "r1.host.jsonl"), hostStreamOf(quietStatic(), lines), 0o644)
	l = LoadLeg(lf)
	wantReason(t, l.Reasons, CodeInvalid, "host stream r1.host.jsonl:7:", "t 2026-08-12T10:15:08.500Z is no reading time of the GPU stream")
}

// TestHostAbsentJudgedAsBefore: a leg whose record has no host block is
// judged as before, whatever lies beside it.
func TestHostAbsentJudgedAsBefore(t *testing.T) {
	ss := cleanWindow(boot13)
	lines := quietLines(ss)
	for _, l := range lines {
		l.CPU.Steal, l.Swap.In = 0.5, 100
	}
	l := hostLeg(t, ss, quietStatic(), lines, func(r *Record) { r.Host = nil })
	wantCodes(t, l.Reasons)
}

// contended sets every busy reading's own time.
func contended(ss []*Sample, cpu, wait float64) []*HostLine {
	lines := quietLines(ss)
	for _, l := range lines[:61] {
		l.OwnCPU, l.OwnWait = cpu, wait
		l.OtherCPU = 1.5
		l.Top = []HostProc{{PID: 4242, Comm: "burn", Cores: 1.5}, {PID: 77, Comm: "kworker/0:1", Cores: 0.01}}
	}
	return lines
}

func TestHostContentionBoundary(t *testing.T) {
	ss := cleanWindow(boot13)
	// 0.05 / (0.95 + 0.05) is 5.00% exactly: not over the bound.
	l := hostLeg(t, ss, quietStatic(), contended(ss, 0.95, 0.05), nil)
	wantCodes(t, l.Reasons)
	l = hostLeg(t, ss, quietStatic(), contended(ss, 0.9499, 0.0501), nil)
	wantCodes(t, l.Reasons, CodeHostContention)
	wantReason(t, l.Reasons, CodeHostContention, "waited for a CPU 5.01% of their running time over 61 busy readings > 5.00%",
		"other processes used a median 1.50 cores (p90 1.50) of 2 logical CPUs", "top other processes: burn (pid 4242) 1.50 cores, kworker/0:1 (pid 77) 0.01 cores",
		"stop them, or pin them and the engine to CPUs of their own (taskset)")
}

// TestHostContentionNeedsOneCPUSecond: the share is judged only where the
// own threads ran 1 CPU-second or more over the busy readings.
func TestHostContentionNeedsOneCPUSecond(t *testing.T) {
	ss := cleanWindow(boot13)
	for _, c := range []struct {
		readings int
		code     []string
	}{{4, []string{CodeHostContention}}, {3, nil}} {
		lines := quietLines(ss)
		for _, l := range lines {
			l.OwnCPU, l.OwnWait = 0, 0
		}
		for _, l := range lines[1 : 1+c.readings] {
			l.OwnCPU, l.OwnWait = 0.25, 0.1
		}
		l := hostLeg(t, ss, quietStatic(), lines, nil)
		if l.Record.Host.OwnCPUS != 0.25*float64(c.readings) {
			t.Fatalf("own_cpu_s %v", l.Record.Host.OwnCPUS)
		}
		wantCodes(t, l.Reasons, c.code...)
	}
}

func TestHostStealBoundary(t *testing.T) {
	ss := cleanWindow(boot13)
	for _, c := range []struct {
		steal float64
		code  []string
	}{{0.02, nil}, {0.0201, []string{CodeHostSteal}}} {
		lines := quietLines(ss)
		for _, l := range lines {
			l.CPU.Steal = c.steal
		}
		l := hostLeg(t, ss, quietStatic(), lines, nil)
		wantCodes(t, l.Reasons, c.code...)
		if c.code != nil {
			wantReason(t, l.Reasons, CodeHostSteal, "steal_share 2.01% of the host's CPU time over 64 readings > 2.00%", "rerun on a dedicated host")
		}
	}
}

// TestHostSwapBusyWindow: one page in a busy reading is host.swap; pages
// swapped in an idle reading are not the busy window's.
func TestHostSwapBusyWindow(t *testing.T) {
	ss := cleanWindow(boot13)
	lines := quietLines(ss)
	lines[62].Swap = HostSwap{In: 40, Out: 9}
	wantCodes(t, hostLeg(t, ss, quietStatic(), lines, nil).Reasons)
	lines[30].Swap.Out = 1
	l := hostLeg(t, ss, quietStatic(), lines, nil)
	wantCodes(t, l.Reasons, CodeHostSwap)
	wantReason(t, l.Reasons, CodeHostSwap, "1 pages swapped in or out over 61 busy readings, want 0", "free memory")
}

// hostArmLegs are one leg of each given identity and CPU clock.
func hostArmLeg(t *testing.T, st *HostStatic, mhz *float64) *Leg {
	ss := cleanWindow(boot13)
	lines := quietLines(ss)
	for _, l := range lines {
		l.CPUMHz = mhz
	}
	return hostLeg(t, ss, st, lines, nil)
}

func TestHostMismatchEachSide(t *testing.T) {
	good := quietStatic()
	for _, c := range []struct {
		name string
		edit func(*HostStatic)
		msg  string
	}{
		{"cpu_model", func(s *HostStatic) { s.CPUModel = "AMD EPYC 9654" }, `ENGINE "AMD EPYC 9654"`},
		{"logical_cpus", func(s *HostStatic) { s.LogicalCPUs = 4 }, "ENGINE 4"},
		{"smt", func(s *HostStatic) { s.SMT = "on" }, "ENGINE on"},
		{"numa_nodes", func(s *HostStatic) { s.NUMANodes = 2 }, "ENGINE 2"},
		{"kernel", func(s *HostStatic) { s.Kernel = "6.8.0-45-generic" }, `ENGINE "6.8.0-45-generic"`},
		{"cpufreq.governors", func(s *HostStatic) {
			s.CPUFreq = &CPUFreq{Driver: "intel_pstate", Governors: []string{"powersave"}}
		}, "ENGINE powersave"},
		{"memory_total_mib", func(s *HostStatic) { s.MemoryTotalMiB = 24347 }, "ENGINE 24347 MiB"},
	} {
		bad := quietStatic()
		c.edit(bad)
		for _, side := range []string{"ours", "baseline"} {
			o, b := bad, good
			if side == "baseline" {
				o, b = good, bad
			}
			rs := HostReasons("fastengine", []*Leg{hostArmLeg(t, o, nil)}, "vllm", []*Leg{hostArmLeg(t, b, nil)})
			engine := "fastengine"
			if side == "baseline" {
				engine = "vllm"
			}
			wantCodes(t, rs, CodeHostMismatch)
			wantReason(t, rs, CodeHostMismatch, "arms are not on one host: "+c.name+": ", strings.ReplaceAll(c.msg, "ENGINE", engine), "run both arms on one box")
		}
	}
	if rs := HostReasons("fastengine", []*Leg{hostArmLeg(t, good, nil)}, "vllm", []*Leg{hostArmLeg(t, quietStatic(), nil)}); len(rs) != 0 {
		t.Fatalf("one host: %+v", rs)
	}
}

// TestHostMemoryBoundary: memory_total_mib 1% apart is one host; a MiB
// more is not, with the bad arm on either side.
func TestHostMemoryBoundary(t *testing.T) {
	lo, at, over := quietStatic(), quietStatic(), quietStatic()
	lo.MemoryTotalMiB, at.MemoryTotalMiB, over.MemoryTotalMiB = 10000, 10100, 10101
	for _, pair := range [][2]*HostStatic{{lo, at}, {at, lo}} {
		if rs := HostReasons("a", []*Leg{hostArmLeg(t, pair[0], nil)}, "b", []*Leg{hostArmLeg(t, pair[1], nil)}); len(rs) != 0 {
			t.Fatalf("1.00%% apart: %+v", rs)
		}
	}
	for _, pair := range [][2]*HostStatic{{lo, over}, {over, lo}} {
		rs := HostReasons("a", []*Leg{hostArmLeg(t, pair[0], nil)}, "b", []*Leg{hostArmLeg(t, pair[1], nil)})
		wantCodes(t, rs, CodeHostMismatch)
		wantReason(t, rs, CodeHostMismatch, "memory_total_mib: a ", "differ by more than 1.00%")
	}
}

func TestHostCPUOffsetBoundary(t *testing.T) {
	st := quietStatic()
	for _, c := range []struct {
		ours, base float64
		code       []string
		msg        string
	}{
		{2100, 2000, nil, ""},
		{2100.1, 2000, []string{CodeHostCPUOffset}, "busy median CPU clock a 2100.1 MHz, b 2000 MHz: 5.005% apart > 5.00%"},
		{1900, 2000, nil, ""},
		{1899.9, 2000, []string{CodeHostCPUOffset}, "busy median CPU clock a 1899.9 MHz, b 2000 MHz: 5.005% apart > 5.00%"},
		{2000, 1904.7, []string{CodeHostCPUOffset}, "busy median CPU clock a 2000 MHz, b 1904.7 MHz: 5.003% apart"},
	} {
		rs := HostReasons("a", []*Leg{hostArmLeg(t, st, ptr(c.ours))}, "b", []*Leg{hostArmLeg(t, st, ptr(c.base))})
		wantCodes(t, rs, c.code...)
		if c.msg != "" {
			wantReason(t, rs, CodeHostCPUOffset, c.msg, "hold the CPU clock")
		}
	}
	// Only where both arms recorded a CPU clock.
	if rs := HostReasons("a", []*Leg{hostArmLeg(t, st, ptr(3000.0))}, "b", []*Leg{hostArmLeg(t, st, nil)}); len(rs) != 0 {
		t.Fatalf("one arm without cpufreq: %+v", rs)
	}
}

// TestHostGovernorsExposed: the host block names its cpufreq governors,
// for a declared cpu_governor to be judged against.
func TestHostGovernorsExposed(t *testing.T) {
	st := quietStatic()
	st.CPUFreq = &CPUFreq{Driver: "intel_pstate", Governors: []string{"performance", "powersave"}}
	l := hostArmLeg(t, st, ptr(1219.9))
	if g := l.Record.Host.Governors(); strings.Join(g, ",") != "performance,powersave" {
		t.Fatalf("governors %v", g)
	}
	data, _ := json.Marshal(l.Record)
	if !bytes.Contains(data, []byte(`"cpufreq":{"driver":"intel_pstate","governors":["performance","powersave"],"boost":null}`)) || !bytes.Contains(data, []byte(`"cpu_mhz":1219.9`)) {
		t.Fatalf("record %s", data)
	}
	if (*Host)(nil).Governors() != nil || quietStatic().CPUFreq != nil {
		t.Fatal("no cpufreq has no governors")
	}
}

// TestHostLineFastAgrees: the fast reader of host lines reads what
// ParseHostLine reads from every line in the writer's layout, and leaves
// every other line to it.
func TestHostLineFastAgrees(t *testing.T) {
	mhz := 2399.9
	lines := []*HostLine{
		{T: "2026-12-03T12:52:11.157Z", CPU: HostCPU{Busy: 0.9955, Steal: 0.0045}, OwnCPU: 0.004, OwnWait: 0.02, OtherCPU: 1.987,
			Top: []HostProc{{PID: 23531, Comm: "clocks.test", Cores: 0.433}, {PID: 1, Comm: "kworker/0:1", Cores: 0}},
			PSI: &HostPSI{CPUSome: 1539746281, IOFull: 3880068}, CPUMHz: &mhz, Swap: HostSwap{In: 3, Out: 12}},
		{T: "2026-12-03T12:52:12.157Z", CPU: HostCPU{Busy: 1}, OwnCPU: 12, Top: []HostProc{}},
		{T: "2026-12-03T12:52:13.157Z", CPU: HostCPU{Busy: 0.1234, IOWait: 0.0001}, OwnCPU: 0.001, OtherCPU: 0.000123456789, Top: []HostProc{}},
	}
	f := NewHostFold(quietStatic())
	for _, want := range lines {
		data := want.AppendJSON(nil)
		var got HostLine
		tb, ok := parseHostLineFast(data, &got, f)
		slow, err := ParseHostLine(data)
		if !ok || err != nil || string(tb) != want.T {
			t.Fatalf("%s: fast %v, strict %v", data, ok, err)
		}
		got.T = string(tb)
		a, _ := json.Marshal(&got)
		b, _ := json.Marshal(slow)
		if string(a) != string(b) || string(a) != string(data) {
			t.Fatalf("fast %s\nstrict %s\nline %s", a, b, data)
		}
	}
	for _, line := range []string{
		`{"cpu":{"busy":1,"steal":0,"iowait":0},"t":"2026-12-03T12:52:12.157Z","own_cpu":0,"own_wait":0,"other_cpu":0,"top":[],"swap":{"in":0,"out":0}}`,
		`{"t":"2026-12-03T12:52:12.157Z", "cpu":{"busy":1,"steal":0,"iowait":0},"own_cpu":0,"own_wait":0,"other_cpu":0,"top":[],"swap":{"in":0,"out":0}}`,
		`{"t":"2026-12-03T12:52:12.157Z","cpu":{"busy":1,"steal":0,"iowait":0},"own_cpu":1e-07,"own_wait":0,"other_cpu":0,"top":[],"swap":{"in":0,"out":0}}`,
		`{"t":"2026-12-03T12:52:12.157Z","cpu":{"busy":1,"steal":0,"iowait":0},"own_cpu":0,"own_wait":0,"other_cpu":0,"top":[{"pid":7,"comm":"a\u003cb","cores":1}],"swap":{"in":0,"out":0}}`,
	} {
		var got HostLine
		if _, ok := parseHostLineFast([]byte(line), &got, f); ok {
			t.Fatalf("fast read a line not in the writer's layout: %s", line)
		}
		if _, err := ParseHostLine([]byte(line)); err != nil {
			t.Fatalf("strict: %s: %v", line, err)
		}
	}
	for _, line := range []string{
		`{"t":"2026-12-03T12:52:12.157Z","cpu":{"busy":1,"steal":0,"iowait":0},"own_cpu":0,"own_wait":0,"other_cpu":0,"top":[],"swap":{"in":0,"out":0},"swap":{"in":0,"out":0}}`,
		`{"t":"2026-12-03T12:52:12.157Z","cpu":{"busy":1.5,"steal":0,"iowait":0},"own_cpu":0,"own_wait":0,"other_cpu":0,"top":[],"swap":{"in":0,"out":0}}`,
		`{"t":"2026-12-03T12:52:12.157Z","cpu":{"busy":1,"steal":0,"iowait":0},"own_cpu":0,"own_wait":0,"other_cpu":0,"top":[],"swap":{"in":0,"out":0},"x":1}`,
		`{"t":"2026-12-03T12:52:12.157Z","cpu":{"busy":1,"steal":0,"iowait":0},"own_cpu":0,"own_wait":0,"other_cpu":0,"top":[]}`,
	} {
		var got HostLine
		_, ok := parseHostLineFast([]byte(line), &got, f)
		if ok && got.check() == nil {
			t.Fatalf("fast accepted %s", line)
		}
		if _, err := ParseHostLine([]byte(line)); err == nil {
			t.Fatalf("strict accepted %s", line)
		}
	}
}

// TestHostSideText: an arm's host line, and what it says of legs whose
// own threads barely ran (a sleep under record) and of legs without a
// host stream.
func TestHostSideText(t *testing.T) {
	ss := cleanWindow(boot13)
	quiet := hostLeg(t, ss, quietStatic(), quietLines(ss), nil)
	if got := Merge("vllm", []*Leg{quiet}, false).Side.Host.Text("vllm"); got != "vllm host: own wait share 0.40%, other processes 0.00 cores, steal 0.00%" {
		t.Fatalf("quiet: %q", got)
	}
	lines := quietLines(ss)
	for _, l := range lines {
		l.OwnCPU, l.OwnWait = 0.001, 0
	}
	idle := hostLeg(t, ss, quietStatic(), lines, nil)
	old := legOf(t, "r3", ss, nil)
	got := Merge("vllm", []*Leg{quiet, idle, old}, false).Side.Host.Text("vllm")
	if !strings.Contains(got, "(own wait not judged in 1 of 2 legs: their own threads ran under 1 CPU-second over the busy readings) (2 of 3 legs recorded their host)") {
		t.Fatalf("mixed: %q", got)
	}
	if got := Merge("vllm", []*Leg{old}, false).Side.Host.Text("vllm"); got != "vllm host: not recorded" {
		t.Fatalf("old: %q", got)
	}
}
