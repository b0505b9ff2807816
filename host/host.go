// Package host reads the state of the box a leg runs on (SPEC §12.2) from
// Linux's /proc and /sys, and from nothing else: no new dependency, never a
// privileged call. Every file is read through a Source rooted at a
// directory, so that tests point it at fixture trees.
package host

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/clocks"
)

// Source reads the files of /proc and /sys.
type Source interface {
	// ReadFile reads a file by its absolute path on the host, such as
	// "/proc/stat".
	ReadFile(path string) ([]byte, error)
	// ReadDir lists the names in a directory by its absolute path.
	ReadDir(path string) ([]string, error)
}

// Dir is a Source rooted at a directory: Dir("/") is the running machine,
// Dir("testdata/host/vm") a fixture tree holding proc/ and sys/.
type Dir string

func (d Dir) path(p string) string { return filepath.Join(string(d), filepath.FromSlash(p)) }

// ReadFile reads p under the root.
func (d Dir) ReadFile(p string) ([]byte, error) { return os.ReadFile(d.path(p)) }

// ReadDir lists p under the root.
func (d Dir) ReadDir(p string) ([]string, error) {
	ents, err := os.ReadDir(d.path(p))
	names := make([]string, 0, len(ents))
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names, err
}

// trimmed reads a one-line file.
func trimmed(src Source, p string) (string, error) {
	data, err := src.ReadFile(p)
	return strings.TrimSpace(string(data)), err
}

// ParseCPUList reads a kernel CPU list such as "0-3,8,10-11".
func ParseCPUList(s string) ([]int, error) {
	var out []int
	for _, part := range strings.Split(strings.TrimSpace(s), ",") {
		if part == "" {
			continue
		}
		lo, hi, isRange := strings.Cut(part, "-")
		a, err := strconv.Atoi(lo)
		if err != nil {
			return nil, fmt.Errorf("CPU list %q: %v", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.Atoi(hi); err != nil || b < a {
				return nil, fmt.Errorf("CPU list %q: bad range %q", s, part)
			}
		}
		for c := a; c <= b; c++ {
			out = append(out, c)
		}
	}
	return out, nil
}

// cpuinfo is what the static identity takes from /proc/cpuinfo.
type cpuinfo struct {
	model          string
	processors     int
	hypervisor     bool
	siblings, core int
}

func parseCPUInfo(data []byte) cpuinfo {
	var ci cpuinfo
	for _, line := range strings.Split(string(data), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		switch k {
		case "processor":
			ci.processors++
		case "model name":
			if ci.model == "" {
				ci.model = v
			}
		case "flags":
			for _, f := range strings.Fields(v) {
				ci.hypervisor = ci.hypervisor || f == "hypervisor"
			}
		case "siblings":
			if ci.siblings == 0 {
				ci.siblings, _ = strconv.Atoi(v)
			}
		case "cpu cores":
			if ci.core == 0 {
				ci.core, _ = strconv.Atoi(v)
			}
		}
	}
	return ci
}

// OnlineCPUs lists the online logical CPUs (/sys/devices/system/cpu/online).
func OnlineCPUs(src Source) ([]int, error) {
	s, err := trimmed(src, "/sys/devices/system/cpu/online")
	if err != nil {
		return nil, err
	}
	return ParseCPUList(s)
}

// ReadStatic reads the host's static identity; allowed are the
// Cpus_allowed_list of the leg's own processes (CPUsAllowed).
func ReadStatic(src Source, allowed []string) (*clocks.HostStatic, error) {
	st := &clocks.HostStatic{CPUsAllowedList: allowed}
	if st.CPUsAllowedList == nil {
		st.CPUsAllowedList = []string{}
	}
	var err error
	if st.Name, err = trimmed(src, "/proc/sys/kernel/hostname"); err != nil {
		return nil, err
	}
	if st.Kernel, err = trimmed(src, "/proc/sys/kernel/osrelease"); err != nil {
		return nil, err
	}
	data, err := src.ReadFile("/proc/cpuinfo")
	if err != nil {
		return nil, err
	}
	ci := parseCPUInfo(data)
	st.CPUModel, st.Virtualized = ci.model, ci.hypervisor
	online, oerr := OnlineCPUs(src)
	st.LogicalCPUs = len(online)
	if oerr != nil {
		st.LogicalCPUs = ci.processors
	}
	if st.LogicalCPUs < 1 {
		return nil, errors.New("/proc/cpuinfo: no processor listed")
	}
	if st.MemoryTotalMiB, err = memTotalMiB(src); err != nil {
		return nil, err
	}
	st.SMT = "off"
	if s, err := trimmed(src, "/sys/devices/system/cpu/smt/active"); err == nil {
		if s == "1" {
			st.SMT = "on"
		}
	} else if ci.core > 0 && ci.siblings > ci.core {
		st.SMT = "on"
	}
	st.NUMANodes = 0
	names, _ := src.ReadDir("/sys/devices/system/node")
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, "node"); ok {
			if _, err := strconv.Atoi(rest); err == nil {
				st.NUMANodes++
			}
		}
	}
	st.NUMANodes = max(st.NUMANodes, 1)
	st.CPUFreq = readCPUFreq(src, online)
	return st, nil
}

func memTotalMiB(src Source) (int64, error) {
	data, err := src.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, err
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "MemTotal:"); ok {
			f := strings.Fields(rest)
			if len(f) == 2 && f[1] == "kB" {
				if kb, err := strconv.ParseInt(f[0], 10, 64); err == nil && kb >= 1024 {
					return kb / 1024, nil
				}
			}
		}
	}
	return 0, errors.New("/proc/meminfo: no MemTotal in kB")
}

// readCPUFreq reads the online CPUs' frequency scaling; nil where no
// online CPU exposes a governor (most VMs).
func readCPUFreq(src Source, online []int) *clocks.CPUFreq {
	set := map[string]bool{}
	driver := ""
	for _, c := range online {
		dir := fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpufreq/", c)
		g, err := trimmed(src, dir+"scaling_governor")
		if err != nil || g == "" {
			continue
		}
		set[g] = true
		if driver == "" {
			driver, _ = trimmed(src, dir+"scaling_driver")
		}
	}
	if len(set) == 0 {
		return nil
	}
	cf := &clocks.CPUFreq{Driver: driver}
	for g := range set {
		cf.Governors = append(cf.Governors, g)
	}
	sort.Strings(cf.Governors)
	if s, err := trimmed(src, "/sys/devices/system/cpu/cpufreq/boost"); err == nil && (s == "0" || s == "1") {
		on := s == "1"
		cf.Boost = &on
	} else if s, err := trimmed(src, "/sys/devices/system/cpu/intel_pstate/no_turbo"); err == nil && (s == "0" || s == "1") {
		on := s == "0"
		cf.Boost = &on
	}
	return cf
}

// CPUMHz is the median scaling_cur_freq over the online CPUs, in MHz to
// 0.1; nil where none exposes it (never guessed).
func CPUMHz(src Source, online []int) *float64 {
	var khz []int64
	for _, c := range online {
		s, err := trimmed(src, fmt.Sprintf("/sys/devices/system/cpu/cpu%d/cpufreq/scaling_cur_freq", c))
		if err != nil {
			continue
		}
		if v, err := strconv.ParseInt(s, 10, 64); err == nil && v > 0 {
			khz = append(khz, v)
		}
	}
	if len(khz) == 0 {
		return nil
	}
	sort.Slice(khz, func(i, j int) bool { return khz[i] < khz[j] })
	n := len(khz)
	m := float64(khz[n/2])
	if n%2 == 0 {
		m = float64(khz[n/2-1]+khz[n/2]) / 2
	}
	mhz := math.Round(m/100) / 10
	return &mhz
}

// CPUStat are /proc/stat's aggregate CPU times, in USER_HZ ticks: user,
// nice, system, idle, iowait, irq, softirq, steal.
type CPUStat [8]uint64

// ReadCPUStat reads /proc/stat's "cpu" line.
func ReadCPUStat(src Source) (CPUStat, error) {
	var st CPUStat
	data, err := src.ReadFile("/proc/stat")
	if err != nil {
		return st, err
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	f := strings.Fields(string(line))
	if len(f) < 9 || f[0] != "cpu" {
		return st, fmt.Errorf("/proc/stat: first line %q is not the aggregate cpu line", line)
	}
	for i := range st {
		if st[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
			return st, fmt.Errorf("/proc/stat: cpu field %d: %v", i+1, err)
		}
	}
	return st, nil
}

// Shares are the CPU split between two readings of /proc/stat.
func Shares(a, b CPUStat) clocks.HostCPU {
	var d CPUStat
	var total uint64
	for i := range a {
		if b[i] > a[i] {
			d[i] = b[i] - a[i]
		}
		total += d[i]
	}
	if total == 0 {
		return clocks.HostCPU{}
	}
	t := float64(total)
	return clocks.HostCPU{
		Busy:   clocks.Round4(float64(d[0]+d[1]+d[2]+d[5]+d[6]) / t),
		Steal:  clocks.Round4(float64(d[7]) / t),
		IOWait: clocks.Round4(float64(d[4]) / t),
	}
}

// ReadSwap reads /proc/vmstat's pswpin and pswpout.
func ReadSwap(src Source) (in, out int64, err error) {
	data, err := src.ReadFile("/proc/vmstat")
	if err != nil {
		return 0, 0, err
	}
	found := 0
	for _, line := range strings.Split(string(data), "\n") {
		k, v, _ := strings.Cut(line, " ")
		switch k {
		case "pswpin":
			in, err = strconv.ParseInt(v, 10, 64)
			found++
		case "pswpout":
			out, err = strconv.ParseInt(v, 10, 64)
			found++
		}
		if err != nil {
			return 0, 0, fmt.Errorf("/proc/vmstat: %s: %v", k, err)
		}
	}
	if found != 2 {
		return 0, 0, errors.New("/proc/vmstat: no pswpin and pswpout")
	}
	return in, out, nil
}

// ReadPSI reads the cumulative stall totals of /proc/pressure/{cpu,
// memory,io}; nil where the kernel has no PSI.
func ReadPSI(src Source) *clocks.HostPSI {
	total := func(file, kind string) (int64, bool) {
		data, err := src.ReadFile("/proc/pressure/" + file)
		if err != nil {
			return 0, false
		}
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Fields(line)
			if len(f) == 0 || f[0] != kind {
				continue
			}
			for _, kv := range f[1:] {
				if v, ok := strings.CutPrefix(kv, "total="); ok {
					n, err := strconv.ParseInt(v, 10, 64)
					return n, err == nil && n >= 0
				}
			}
		}
		return 0, false
	}
	var p clocks.HostPSI
	var ok1, ok2, ok3 bool
	p.CPUSome, ok1 = total("cpu", "some")
	p.MemoryFull, ok2 = total("memory", "full")
	p.IOFull, ok3 = total("io", "full")
	if !ok1 || !ok2 || !ok3 {
		return nil
	}
	return &p
}

// Schedstat reads /proc/PID/task/TID/schedstat: the time the thread ran
// on a CPU and waited on a run queue, in ns.
func Schedstat(src Source, pid, tid int) (run, wait uint64, err error) {
	s, err := trimmed(src, fmt.Sprintf("/proc/%d/task/%d/schedstat", pid, tid))
	if err != nil {
		return 0, 0, err
	}
	f := strings.Fields(s)
	if len(f) < 2 {
		return 0, 0, fmt.Errorf("schedstat of %d/%d: %q", pid, tid, s)
	}
	if run, err = strconv.ParseUint(f[0], 10, 64); err == nil {
		wait, err = strconv.ParseUint(f[1], 10, 64)
	}
	return run, wait, err
}

// CPUsAllowed reads Cpus_allowed_list from /proc/PID/status.
func CPUsAllowed(src Source, pid int) (string, bool) {
	data, err := src.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "", false
	}
	for _, line := range strings.Split(string(data), "\n") {
		if v, ok := strings.CutPrefix(line, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

// ProcStat is what the process walk takes from /proc/PID/stat.
type ProcStat struct {
	PID, PPID int
	Comm      string
	// Ticks is utime + stime, in USER_HZ ticks; Start the start time.
	Ticks uint64
	Start string
}

// ReadProcStat reads one /proc/PID/stat.
func ReadProcStat(src Source, pid int) (ProcStat, error) {
	data, err := src.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return ProcStat{}, err
	}
	i, k := bytes.IndexByte(data, '('), bytes.LastIndexByte(data, ')')
	if i < 0 || k < i {
		return ProcStat{}, fmt.Errorf("/proc/%d/stat: no (comm)", pid)
	}
	f := strings.Fields(string(data[k+1:]))
	if len(f) < 20 {
		return ProcStat{}, fmt.Errorf("/proc/%d/stat: %d fields", pid, len(f)+2)
	}
	ps := ProcStat{PID: pid, Comm: string(data[i+1 : k]), Start: f[19]}
	ps.PPID, _ = strconv.Atoi(f[1])
	ut, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return ProcStat{}, fmt.Errorf("/proc/%d/stat: utime/stime", pid)
	}
	ps.Ticks = ut + st
	return ps, nil
}

// Procs reads every visible process's stat.
func Procs(src Source) []ProcStat {
	names, _ := src.ReadDir("/proc")
	out := make([]ProcStat, 0, len(names))
	for _, n := range names {
		pid, err := strconv.Atoi(n)
		if err != nil || pid <= 0 {
			continue
		}
		if ps, err := ReadProcStat(src, pid); err == nil {
			out = append(out, ps)
		}
	}
	return out
}
