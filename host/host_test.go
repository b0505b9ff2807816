package host

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// TestStaticFromThisMachine reads the identity of the machine whose /proc
// and /sys vm/ holds (see testdata/SOURCE.md).
func TestStaticFromThisMachine(t *testing.T) {
	st, err := ReadStatic(Dir("testdata/vm"), []string{"0-1"})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(st)
	want := `{"name":"vm","cpu_model":"Intel(R) Xeon(R) Processor","logical_cpus":2,"memory_total_mib":24105,"kernel":"6.18.44-fc-v1147","smt":"off","numa_nodes":1,"cpufreq":null,"virtualized":true,"cpus_allowed_list":["0-1"]}`
	if string(got) != want {
		t.Fatalf("static\n got %s\nwant %s", got, want)
	}
	if mhz := CPUMHz(Dir("testdata/vm"), []int{0, 1}); mhz != nil {
		t.Fatalf("no cpufreq, cpu_mhz %v: never guessed", *mhz)
	}
}

// TestCPUFreqFromProcfsFixtures reads prometheus/procfs's cpufreq files:
// one governor, intel_pstate, no boost file, and cpu0's scaling_cur_freq
// alone (cpu1 has none).
func TestCPUFreqFromProcfsFixtures(t *testing.T) {
	src := Dir("testdata/cpufreq")
	st, err := ReadStatic(src, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(st.CPUFreq)
	if string(got) != `{"driver":"intel_pstate","governors":["powersave"],"boost":null}` || st.CPUsAllowedList == nil {
		t.Fatalf("cpufreq %s, allowed %v", got, st.CPUsAllowedList)
	}
	if mhz := CPUMHz(src, []int{0, 1}); mhz == nil || *mhz != 1219.9 {
		t.Fatalf("cpu_mhz %v, want 1219.9 (1219917 kHz)", mhz)
	}
}

// TestBoostAndMedian: boost from cpufreq/boost or intel_pstate/no_turbo,
// and the median of an even count of CPUs.
func TestBoostAndMedian(t *testing.T) {
	root := t.TempDir()
	write := func(p, s string) {
		p = filepath.Join(root, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(s+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for c, khz := range []string{"2000000", "3000000", "2400000", "2600000"} {
		d := "sys/devices/system/cpu/cpu" + string(rune('0'+c)) + "/cpufreq/"
		write(d+"scaling_cur_freq", khz)
		write(d+"scaling_governor", []string{"performance", "schedutil"}[c%2])
		write(d+"scaling_driver", "acpi-cpufreq")
	}
	write("sys/devices/system/cpu/intel_pstate/no_turbo", "1")
	cf := readCPUFreq(Dir(root), []int{0, 1, 2, 3})
	if cf == nil || cf.Boost == nil || *cf.Boost || len(cf.Governors) != 2 || cf.Governors[0] != "performance" || cf.Driver != "acpi-cpufreq" {
		t.Fatalf("cpufreq %+v", cf)
	}
	write("sys/devices/system/cpu/cpufreq/boost", "1")
	if cf := readCPUFreq(Dir(root), []int{0, 1, 2, 3}); !*cf.Boost {
		t.Fatal("cpufreq/boost 1 is boost on")
	}
	if mhz := CPUMHz(Dir(root), []int{0, 1, 2, 3}); *mhz != 2500 {
		t.Fatalf("median of 2000, 2400, 2600, 3000 MHz: %v", *mhz)
	}
}

// TestCountersFromThisMachine reads the snapshots of /proc/stat,
// /proc/vmstat, /proc/pressure/* and one thread's schedstat.
func TestCountersFromThisMachine(t *testing.T) {
	src := Dir("testdata/vm")
	st, err := ReadCPUStat(src)
	if err != nil || st != (CPUStat{112862, 0, 29238, 62090, 643, 0, 440, 1554}) {
		t.Fatalf("cpu %v %v", st, err)
	}
	in, out, err := ReadSwap(src)
	if err != nil || in != 0 || out != 0 {
		t.Fatalf("swap %d %d %v", in, out, err)
	}
	if p := ReadPSI(src); p == nil || *p != (clocks.HostPSI{CPUSome: 522058217, MemoryFull: 0, IOFull: 3800264}) {
		t.Fatalf("psi %+v", p)
	}
	run, wait, err := Schedstat(src, 18315, 18315)
	if err != nil || run != 1750753 || wait != 370301 {
		t.Fatalf("schedstat %d %d %v", run, wait, err)
	}
	ps, err := ReadProcStat(src, 18315)
	if err != nil || ps.Comm != "sleep" || ps.PID != 18315 {
		t.Fatalf("stat %+v %v", ps, err)
	}
	if a, ok := CPUsAllowed(src, 18315); !ok || a != "0-1" {
		t.Fatalf("Cpus_allowed_list %q", a)
	}
}

func TestShares(t *testing.T) {
	a := CPUStat{100, 0, 50, 800, 10, 0, 0, 40}
	b := CPUStat{160, 0, 70, 1000, 20, 5, 5, 60}
	// Δ: user 60, system 20, idle 200, iowait 10, irq 5, softirq 5, steal 20: total 320.
	got := Shares(a, b)
	if got != (clocks.HostCPU{Busy: 0.2813, Steal: 0.0625, IOWait: 0.0313}) {
		t.Fatalf("shares %+v", got)
	}
	if Shares(a, a) != (clocks.HostCPU{}) {
		t.Fatal("no time, no share")
	}
}

func TestParseCPUList(t *testing.T) {
	got, err := ParseCPUList("0-3,8,10-11\n")
	if err != nil || len(got) != 7 || got[4] != 8 || got[6] != 11 {
		t.Fatalf("%v %v", got, err)
	}
	if _, err := ParseCPUList("3-1"); err == nil {
		t.Fatal("a backwards range accepted")
	}
}

// TestReaderOnFixture: a reader on a fixture root reads the own process
// there, and a reading of counters that did not move is a quiet one.
func TestReaderOnFixture(t *testing.T) {
	r, st, err := NewReader(Dir("testdata/vm"), []int{18315}, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Stop()
	if len(st.CPUsAllowedList) != 1 || st.CPUsAllowedList[0] != "0-1" {
		t.Fatalf("allowed %v", st.CPUsAllowedList)
	}
	l, err := r.Read("2026-12-03T12:00:00.000Z")
	if err != nil {
		t.Fatal(err)
	}
	got, _ := json.Marshal(l)
	want := `{"t":"2026-12-03T12:00:00.000Z","cpu":{"busy":0,"steal":0,"iowait":0},"own_cpu":0,"own_wait":0,"other_cpu":0,"top":[],"psi":{"cpu_some":522058217,"memory_full":0,"io_full":3800264},"swap":{"in":0,"out":0}}`
	if string(got) != want {
		t.Fatalf("reading\n got %s\nwant %s", got, want)
	}
	if _, err := clocks.ParseHostLine(got); err != nil {
		t.Fatalf("the reading does not parse back: %v", err)
	}
}

// TestReaderNeedsProc: a root without /proc is refused, so a sampler
// there writes no host stream.
func TestReaderNeedsProc(t *testing.T) {
	if _, _, err := NewReader(Dir(t.TempDir()), nil, 1); err == nil {
		t.Fatal("an empty root read as a host")
	}
}
