package clocks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"reflect"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// HostStatic is a leg's static host identity (SPEC §12.2): the first line
// of its host stream and the first fields of its record's host block.
type HostStatic struct {
	// Name is the host name (/proc/sys/kernel/hostname).
	Name string `json:"name"`
	// CPUModel is /proc/cpuinfo's first "model name" ("" where it has none).
	CPUModel string `json:"cpu_model"`
	// LogicalCPUs counts the online logical CPUs.
	LogicalCPUs int `json:"logical_cpus"`
	// MemoryTotalMiB is /proc/meminfo's MemTotal, in MiB.
	MemoryTotalMiB int64 `json:"memory_total_mib"`
	// Kernel is the kernel release (/proc/sys/kernel/osrelease).
	Kernel string `json:"kernel"`
	// SMT is "on" or "off".
	SMT string `json:"smt"`
	// NUMANodes counts /sys/devices/system/node/node*; 1 where none is
	// listed.
	NUMANodes int `json:"numa_nodes"`
	// CPUFreq is the frequency scaling the kernel exposes, nil where it
	// exposes none (most VMs).
	CPUFreq *CPUFreq `json:"cpufreq"`
	// Virtualized says /proc/cpuinfo carries the hypervisor flag.
	Virtualized bool `json:"virtualized"`
	// CPUsAllowedList are the distinct Cpus_allowed_list values of the
	// leg's own processes at the first reading, sorted; empty when it has
	// none.
	CPUsAllowedList []string `json:"cpus_allowed_list"`
}

// CPUFreq is a host's CPU frequency scaling.
type CPUFreq struct {
	// Driver is scaling_driver, such as "intel_pstate" or "acpi-cpufreq".
	Driver string `json:"driver"`
	// Governors is the set of the online CPUs' scaling_governor, sorted.
	Governors []string `json:"governors"`
	// Boost says turbo/boost is on; nil where the kernel does not say.
	Boost *bool `json:"boost"`
}

// HostCPU is a reading's split of the host's logical CPUs since the
// reading before, as shares of their time (0 to 1).
type HostCPU struct {
	Busy   float64 `json:"busy"`
	Steal  float64 `json:"steal"`
	IOWait float64 `json:"iowait"`
}

// HostProc is one other process and the CPU it used, in cores.
type HostProc struct {
	PID   int     `json:"pid"`
	Comm  string  `json:"comm"`
	Cores float64 `json:"cores"`
}

// HostPSI are the cumulative stall totals of /proc/pressure/*, in µs.
type HostPSI struct {
	CPUSome    int64 `json:"cpu_some"`
	MemoryFull int64 `json:"memory_full"`
	IOFull     int64 `json:"io_full"`
}

// HostSwap are the pages swapped in and out since the reading before.
type HostSwap struct {
	In  int64 `json:"in"`
	Out int64 `json:"out"`
}

// HostLine is one reading of the host stream: T is its tick's GPU reading
// time; OwnCPU, OwnWait and OtherCPU are in cores since the reading
// before; Top are the other processes that used the most CPU since the
// last process walk; PSI is nil where the kernel has none, CPUMHz where
// there is no cpufreq.
type HostLine struct {
	T        string     `json:"t"`
	CPU      HostCPU    `json:"cpu"`
	OwnCPU   float64    `json:"own_cpu"`
	OwnWait  float64    `json:"own_wait"`
	OtherCPU float64    `json:"other_cpu"`
	Top      []HostProc `json:"top"`
	PSI      *HostPSI   `json:"psi,omitempty"`
	CPUMHz   *float64   `json:"cpu_mhz,omitempty"`
	Swap     HostSwap   `json:"swap"`
}

// HostStreamPath is the host stream beside a GPU stream path
// (PREFIX.samples.jsonl gives PREFIX.host.jsonl).
func HostStreamPath(streamPath string) string {
	return strings.TrimSuffix(streamPath, ".samples.jsonl") + ".host.jsonl"
}

// AppendJSON appends the static line, {"static": {...}}, without newline.
func (s *HostStatic) AppendJSON(b []byte) []byte {
	data, _ := json.Marshal(struct {
		Static *HostStatic `json:"static"`
	}{s})
	return append(b, data...)
}

// AppendJSON appends the reading's line, without newline.
func (l *HostLine) AppendJSON(b []byte) []byte {
	data, _ := json.Marshal(l)
	return append(b, data...)
}

// Round4 rounds a share to the 4 decimals the host stream carries.
func Round4(x float64) float64 { return math.Round(x*1e4) / 1e4 }

// Round3 rounds cores to the 3 decimals the host stream carries.
func Round3(x float64) float64 { return math.Round(x*1e3) / 1e3 }

// strictDecode reads data as one strict-JSON object (no duplicate key, no
// trailing bytes) into v, refusing a field v does not name.
func strictDecode(data []byte, v any) error {
	if _, err := strictjson.ParseObject(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	return dec.Decode(v)
}

// ParseHostStatic reads a host stream's first line.
func ParseHostStatic(line []byte) (*HostStatic, error) {
	var w struct {
		Static *struct {
			HostStatic
			LogicalCPUs    *int    `json:"logical_cpus"`
			MemoryTotalMiB *int64  `json:"memory_total_mib"`
			SMT            *string `json:"smt"`
			NUMANodes      *int    `json:"numa_nodes"`
		} `json:"static"`
	}
	if err := strictDecode(line, &w); err != nil {
		return nil, err
	}
	st := w.Static
	switch {
	case st == nil:
		return nil, errors.New(`want {"static": {...}} on the first line`)
	case st.LogicalCPUs == nil || *st.LogicalCPUs < 1:
		return nil, errors.New("static.logical_cpus: want a count ≥ 1")
	case st.MemoryTotalMiB == nil || *st.MemoryTotalMiB < 1:
		return nil, errors.New("static.memory_total_mib: want MiB ≥ 1")
	case st.SMT == nil || (*st.SMT != "on" && *st.SMT != "off"):
		return nil, errors.New(`static.smt: want "on" or "off"`)
	case st.NUMANodes == nil || *st.NUMANodes < 1:
		return nil, errors.New("static.numa_nodes: want a count ≥ 1")
	case st.CPUsAllowedList == nil:
		return nil, errors.New("static.cpus_allowed_list: want an array")
	case st.CPUFreq != nil && st.CPUFreq.Governors == nil:
		return nil, errors.New("static.cpufreq.governors: want an array")
	}
	s := st.HostStatic
	s.LogicalCPUs, s.MemoryTotalMiB, s.SMT, s.NUMANodes = *st.LogicalCPUs, *st.MemoryTotalMiB, *st.SMT, *st.NUMANodes
	return &s, nil
}

// ParseHostLine reads one reading of a host stream.
func ParseHostLine(line []byte) (*HostLine, error) {
	var w struct {
		T        *string    `json:"t"`
		CPU      *HostCPU   `json:"cpu"`
		OwnCPU   *float64   `json:"own_cpu"`
		OwnWait  *float64   `json:"own_wait"`
		OtherCPU *float64   `json:"other_cpu"`
		Top      []HostProc `json:"top"`
		PSI      *HostPSI   `json:"psi"`
		CPUMHz   *float64   `json:"cpu_mhz"`
		Swap     *HostSwap  `json:"swap"`
	}
	if err := strictDecode(line, &w); err != nil {
		return nil, err
	}
	for _, f := range []struct {
		name string
		ok   bool
	}{{"t", w.T != nil}, {"cpu", w.CPU != nil}, {"own_cpu", w.OwnCPU != nil}, {"own_wait", w.OwnWait != nil},
		{"other_cpu", w.OtherCPU != nil}, {"top", w.Top != nil}, {"swap", w.Swap != nil}} {
		if !f.ok {
			return nil, fmt.Errorf("%s: missing", f.name)
		}
	}
	if _, err := time.Parse(time.RFC3339Nano, *w.T); err != nil {
		return nil, fmt.Errorf("t: want an RFC 3339 time, found %q", *w.T)
	}
	l := &HostLine{T: *w.T, CPU: *w.CPU, OwnCPU: *w.OwnCPU, OwnWait: *w.OwnWait, OtherCPU: *w.OtherCPU,
		Top: w.Top, PSI: w.PSI, CPUMHz: w.CPUMHz, Swap: *w.Swap}
	if err := l.check(); err != nil {
		return nil, err
	}
	return l, nil
}

// check refuses a reading's values out of range.
func (w *HostLine) check() error {
	share := func(name string, x float64) error {
		if !(x >= 0 && x <= 1) {
			return fmt.Errorf("%s: want a share from 0 to 1, found %v", name, x)
		}
		return nil
	}
	if e := share("cpu.busy", w.CPU.Busy); e != nil {
		return e
	}
	if e := share("cpu.steal", w.CPU.Steal); e != nil {
		return e
	}
	if e := share("cpu.iowait", w.CPU.IOWait); e != nil {
		return e
	}
	for _, c := range [...]struct {
		name string
		x    float64
	}{{"own_cpu", w.OwnCPU}, {"own_wait", w.OwnWait}, {"other_cpu", w.OtherCPU}} {
		if !(c.x >= 0) {
			return fmt.Errorf("%s: want cores ≥ 0, found %v", c.name, c.x)
		}
	}
	for i, p := range w.Top {
		if p.PID <= 0 || !(p.Cores >= 0) {
			return fmt.Errorf("top[%d]: want a pid > 0 and cores ≥ 0", i)
		}
	}
	if w.CPUMHz != nil && !(*w.CPUMHz > 0) {
		return fmt.Errorf("cpu_mhz: want MHz > 0, found %v", *w.CPUMHz)
	}
	if w.Swap.In < 0 || w.Swap.Out < 0 || (w.PSI != nil && (w.PSI.CPUSome < 0 || w.PSI.MemoryFull < 0 || w.PSI.IOFull < 0)) {
		return errors.New("swap and psi: want counts ≥ 0")
	}
	return nil
}

// Host is a record's host block: the static identity and the window's
// summaries, recomputed from the host stream (SPEC §12.2).
type Host struct {
	HostStatic
	// Readings counts the stream's readings; BusyReadings those whose
	// tick's GPU readings were all busy.
	Readings     int `json:"readings"`
	BusyReadings int `json:"busy_readings"`
	// OwnCPUS is the CPU time the leg's own threads ran over the busy
	// readings, in CPU-seconds.
	OwnCPUS float64 `json:"own_cpu_s"`
	// OwnWaitShare is Σ own_wait / Σ (own_cpu + own_wait) over the busy
	// readings; nil where the own threads neither ran nor waited.
	OwnWaitShare *float64 `json:"own_wait_share"`
	// OtherCPUCores are the median and p90 of other_cpu over the busy
	// readings.
	OtherCPUCores HostSpread `json:"other_cpu_cores"`
	// StealShare is the mean steal share over the window's readings.
	StealShare float64 `json:"steal_share"`
	// CPUMHz is the median cpu_mhz over the busy readings that have it.
	CPUMHz *float64 `json:"cpu_mhz"`
	// PSICPUSomeShare is the cpu "some" stall over the window: Δ total /
	// the window's time; nil without PSI.
	PSICPUSomeShare *float64 `json:"psi_cpu_some_share"`
	// SwapPages are the pages swapped in and out over the busy readings.
	SwapPages int64 `json:"swap_pages"`
	// Top are the three other processes that used the most CPU over the
	// busy readings, in mean cores, by pid, each named by its last comm.
	Top []HostProc `json:"top"`
}

// HostSpread is a median and 90th percentile, nil without values.
type HostSpread struct {
	Median *float64 `json:"median"`
	P90    *float64 `json:"p90"`
}

// Governors returns the host's cpufreq governors, nil where it exposes no
// cpufreq (a declared cpu_governor is judged against them).
func (h *Host) Governors() []string {
	if h == nil || h.CPUFreq == nil {
		return nil
	}
	return h.CPUFreq.Governors
}

// HostFold folds a host stream into its record's host block, reading by
// reading, in stream order; the sampler and the judge fold alike.
type HostFold struct {
	Static   *HostStatic
	n, busy  int
	ownCPU   float64
	ownWait  float64
	ownCPUS  float64
	others   []float64
	steal    float64
	mhz      []float64
	swap     int64
	firstNS  int64 // Unix nanoseconds
	lastNS   int64
	firstPSI HostPSI
	lastPSI  HostPSI
	top      map[int]*hostTop // cores and last comm by pid
	lastTop  []*hostTop       // the last busy reading's, in its order
	havePSI  bool
	// What the fast reader of lines reuses: the comm strings by pid, and
	// a line's PSI and CPU clock.
	comms map[int]string
	psi   HostPSI
	mhz1  float64
	// slots are the values parseHostLineFast read last; tmpl the layout
	// learned from its lines (hosttemplate.go).
	slots []hostSlot
	tmpl  hostTemplate
	// buf is FoldHostStream's scanner buffer.
	buf []byte
}

// NewHostFold starts a fold of the stream whose static line is st.
func NewHostFold(st *HostStatic) *HostFold {
	return &HostFold{Static: st, top: map[int]*hostTop{}, havePSI: true, comms: map[int]string{}}
}

// Add folds one reading; busy says its tick's GPU readings were all busy.
func (f *HostFold) Add(l *HostLine, busy bool) {
	t, _ := time.Parse(time.RFC3339Nano, l.T)
	f.add(l, busy, t.UnixNano())
}

// add folds one reading taken at ns (Unix nanoseconds).
func (f *HostFold) add(l *HostLine, busy bool, ns int64) {
	dt := 0.0
	if f.n > 0 {
		dt = sinceNS(ns, f.lastNS).Seconds()
	} else {
		f.firstNS = ns
	}
	f.n++
	f.lastNS = ns
	f.steal += l.CPU.Steal
	if l.PSI == nil {
		f.havePSI = false
	} else {
		if f.n == 1 {
			f.firstPSI = *l.PSI
		}
		f.lastPSI = *l.PSI
	}
	if !busy {
		return
	}
	f.busy++
	f.ownCPU += l.OwnCPU
	f.ownWait += l.OwnWait
	f.ownCPUS += l.OwnCPU * dt
	f.others = append(f.others, l.OtherCPU)
	if l.CPUMHz != nil {
		f.mhz = append(f.mhz, *l.CPUMHz)
	}
	f.swap += l.Swap.In + l.Swap.Out
	for i, p := range l.Top {
		var e *hostTop
		if i < len(f.lastTop) && f.lastTop[i].pid == p.PID {
			e = f.lastTop[i]
		} else {
			if e = f.top[p.PID]; e == nil {
				e = &hostTop{pid: p.PID}
				f.top[p.PID] = e
			}
			if i < len(f.lastTop) {
				f.lastTop[i] = e
			} else {
				f.lastTop = append(f.lastTop, e)
			}
		}
		e.cores += p.Cores
		if e.comm != p.Comm {
			e.comm = p.Comm
		}
	}
}

// sinceNS is time.Unix(0, a).Sub(time.Unix(0, b)), without building the
// times where a - b cannot overflow.
func sinceNS(a, b int64) time.Duration {
	const lim = 1 << 61
	if a > -lim && a < lim && b > -lim && b < lim {
		return time.Duration(a - b)
	}
	return time.Unix(0, a).Sub(time.Unix(0, b))
}

// hostTop is one other process's cores summed over the busy readings and
// its last comm.
type hostTop struct {
	pid   int
	cores float64
	comm  string
}

// quantile is the q-quantile of xs (nearest rank), nil for none; xs is
// sorted in place.
func quantile(xs []float64, q float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	if q == 0.5 {
		n := len(xs)
		m := selectK(xs, n/2)
		if n%2 == 0 {
			m = slices.Max(xs[:n/2])/2 + m/2
		}
		return ptr(Round3(m))
	}
	i := int(math.Ceil(q*float64(len(xs)))) - 1
	return ptr(Round3(selectK(xs, max(i, 0))))
}

// selectK returns what xs[k] would be were xs sorted, and leaves xs with
// no greater value before k and no smaller after: a selection, linear
// where a sort of a leg's thousands of readings is not (sorted only where
// the pivots fail 64 times). xs holds no NaN.
func selectK(xs []float64, k int) float64 {
	lo, hi := 0, len(xs)
	for tries := 0; hi-lo > 1; tries++ {
		if tries == 64 {
			slices.Sort(xs[lo:hi])
			break
		}
		a, b, c := xs[lo], xs[lo+(hi-lo)/2], xs[hi-1]
		p := max(min(a, b), min(max(a, b), c))
		// Three ways: < p, == p, > p.
		lt, i, gt := lo, lo, hi
		for i < gt {
			switch x := xs[i]; {
			case x < p:
				xs[lt], xs[i] = x, xs[lt]
				lt, i = lt+1, i+1
			case x > p:
				gt--
				xs[gt], xs[i] = x, xs[gt]
			default:
				i++
			}
		}
		switch {
		case k < lt:
			hi = lt
		case k >= gt:
			lo = gt
		default:
			return p
		}
	}
	return xs[k]
}

// Host returns the host block the stream folds to.
func (f *HostFold) Host() *Host {
	h := &Host{HostStatic: *f.Static, Readings: f.n, BusyReadings: f.busy, OwnCPUS: Round3(f.ownCPUS),
		SwapPages: f.swap, Top: []HostProc{}}
	if tot := f.ownCPU + f.ownWait; tot > 0 {
		h.OwnWaitShare = ptr(Round4(f.ownWait / tot))
	}
	// The quantiles sort the fold's values in place: their order is not
	// needed, and a fold read on stays the same fold.
	h.OtherCPUCores.Median = quantile(f.others, 0.5)
	h.OtherCPUCores.P90 = quantile(f.others, 0.9)
	if f.n > 0 {
		h.StealShare = Round4(f.steal / float64(f.n))
	}
	if m := quantile(f.mhz, 0.5); m != nil {
		h.CPUMHz = ptr(math.Round(*m*10) / 10)
	}
	if win := sinceNS(f.lastNS, f.firstNS); f.havePSI && f.n > 0 && win > 0 {
		d := float64(f.lastPSI.CPUSome - f.firstPSI.CPUSome)
		h.PSICPUSomeShare = ptr(Round4(max(d, 0) / float64(win.Microseconds())))
	}
	for pid, e := range f.top {
		p := HostProc{PID: pid, Comm: e.comm}
		if f.busy > 0 {
			p.Cores = Round3(e.cores / float64(f.busy))
		}
		h.Top = append(h.Top, p)
	}
	sort.Slice(h.Top, func(i, j int) bool {
		a, b := h.Top[i], h.Top[j]
		if a.Cores != b.Cores {
			return a.Cores > b.Cores
		}
		return a.PID < b.PID
	})
	if len(h.Top) > 3 {
		h.Top = h.Top[:3]
	}
	return h
}

// BusyTicks are a GPU stream's reading times, in the stream's order, each
// with whether every GPU's sample at it was busy, for the host stream's
// fold.
type BusyTicks struct {
	ticks []tick
	next  int
	at    map[int64]int // built at the first reading out of order
}

type tick struct {
	ns   int64
	busy bool
}

// busyTicks are the ticks' storage, reused from leg to leg.
var busyTicks sync.Pool

// newBusyTicks returns empty BusyTicks on reused storage; release gives
// it back.
func newBusyTicks() *BusyTicks {
	if p, _ := busyTicks.Get().(*[]tick); p != nil {
		return &BusyTicks{ticks: (*p)[:0]}
	}
	return &BusyTicks{}
}

// release gives b's storage back for another leg; b is not used after.
func (b *BusyTicks) release() {
	if b == nil || cap(b.ticks) == 0 {
		return
	}
	ts := b.ticks // emptied by newBusyTicks
	b.ticks, b.at = nil, nil
	busyTicks.Put(&ts)
}

// Add adds a GPU sample's time t and whether it was busy.
func (b *BusyTicks) Add(t string, busy bool) {
	ts, _ := time.Parse(time.RFC3339Nano, t)
	b.add(busy, ts.UnixNano())
}

func (b *BusyTicks) add(busy bool, ns int64) {
	if n := len(b.ticks); n > 0 && b.ticks[n-1].ns == ns {
		b.ticks[n-1].busy = b.ticks[n-1].busy && busy
		return
	}
	b.ticks = append(b.ticks, tick{ns, busy})
}

// find returns the tick at ns: the one after the last found, or any.
func (b *BusyTicks) find(ns int64) (tick, bool) {
	if b.next < len(b.ticks) && b.ticks[b.next].ns == ns {
		b.next++
		return b.ticks[b.next-1], true
	}
	if b.at == nil {
		b.at = make(map[int64]int, len(b.ticks))
		for i, t := range b.ticks {
			if _, dup := b.at[t.ns]; !dup {
				b.at[t.ns] = i
			}
		}
	}
	i, ok := b.at[ns]
	if !ok {
		return tick{}, false
	}
	b.next = i + 1
	return b.ticks[i], true
}

// FoldHostStream reads a host stream, named path in errors, and folds it
// with the GPU stream's busy ticks. A reading whose t is not a GPU
// reading's time is an error: the host stream is the GPU stream's.
//
// It is on summarize's path for every leg with a host stream, as many
// bytes as the GPU stream: a line that fits the learned template is
// folded from its holes without a copy (hosttemplate.go), and the fold,
// its buffers and the scanner's are reused from leg to leg (hostFolds).
func FoldHostStream(r io.Reader, path string, ticks *BusyTicks) (*Host, error) {
	f, _ := hostFolds.Get().(*HostFold)
	if f == nil {
		f = NewHostFold(nil)
		f.buf = make([]byte, 64*1024)
	}
	defer hostFolds.Put(f)
	sc := bufio.NewScanner(r)
	sc.Buffer(f.buf, MaxLineBytes)
	var scratch HostLine
	var stamps times
	line := 0
	for sc.Scan() {
		line++
		if line == 1 {
			st, err := ParseHostStatic(sc.Bytes())
			if err != nil {
				return nil, &LineError{Path: path, Line: line, Err: err}
			}
			f.reset(st)
			if n := len(ticks.ticks); cap(f.others) < n {
				f.others = make([]float64, 0, n)
			}
			continue
		}
		tb, l, ok := f.readFast(sc.Bytes(), &scratch)
		var tk tick
		if ok {
			sec, nsec, valid := stamps.read(tb)
			if tk, ok = ticks.find(sec*1e9 + nsec); !valid || !ok {
				return nil, &LineError{Path: path, Line: line, Err: fmt.Errorf("t %s is no reading time of the GPU stream", tb)}
			}
			if err := l.check(); err != nil {
				return nil, &LineError{Path: path, Line: line, Err: err}
			}
		} else {
			var err error
			if l, err = ParseHostLine(sc.Bytes()); err != nil {
				return nil, &LineError{Path: path, Line: line, Err: err}
			}
			sec, nsec, _ := stamps.read([]byte(l.T))
			if tk, ok = ticks.find(sec*1e9 + nsec); !ok {
				return nil, &LineError{Path: path, Line: line, Err: fmt.Errorf("t %s is no reading time of the GPU stream", l.T)}
			}
		}
		f.add(l, tk.busy, tk.ns)
	}
	if err := sc.Err(); err != nil {
		return nil, &LineError{Path: path, Line: line + 1, Err: err}
	}
	if line == 0 {
		return nil, &LineError{Path: path, Line: 1, Err: errors.New("empty: want the static line")}
	}
	return f.Host(), nil
}

// hostFolds are FoldHostStream's folds, reused: Host's block shares no
// memory with its fold.
var hostFolds sync.Pool

// reset makes f a new fold of the stream whose static line is st,
// keeping its storage.
func (f *HostFold) reset(st *HostStatic) {
	*f = HostFold{Static: st, havePSI: true, top: f.top, lastTop: f.lastTop[:0], comms: f.comms,
		others: f.others[:0], mhz: f.mhz[:0], slots: f.slots[:0], tmpl: f.tmpl, buf: f.buf}
	clear(f.top)
	clear(f.comms)
	f.tmpl.reset()
}

// diffHost names every field where the record's host block differs from
// what its stream recomputes to.
func diffHost(rec, want *Host) []string {
	var bad []string
	var walk func(pre string, a, b reflect.Value)
	walk = func(pre string, a, b reflect.Value) {
		t := a.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if f.Anonymous {
				walk(pre, a.Field(i), b.Field(i))
				continue
			}
			name := pre + strings.Split(f.Tag.Get("json"), ",")[0]
			x, _ := json.Marshal(a.Field(i).Interface())
			y, _ := json.Marshal(b.Field(i).Interface())
			if !bytes.Equal(x, y) {
				bad = append(bad, fmt.Sprintf("host.%s: record %s, stream %s", name, x, y))
			}
		}
	}
	walk("", reflect.ValueOf(*rec), reflect.ValueOf(*want))
	return bad
}

// parseHostBlock reads the record's host block, when it has one, into r.
func parseHostBlock(o *obj, r *Record) {
	f, ok := o.v.Fields["host"]
	if !ok || o.err != nil {
		return
	}
	if f.Kind != strictjson.Object {
		o.fail("host", "want the host block, found %s", f.Describe())
		return
	}
	raw, err := json.Marshal(hostRaw(f))
	if err == nil {
		var h Host
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err = dec.Decode(&h); err == nil {
			r.Host = &h
			return
		}
	}
	o.fail("host", "%v", err)
}

// hostRaw turns a strict-JSON value back into plain Go values for
// encoding/json.
func hostRaw(v *strictjson.Value) any {
	switch v.Kind {
	case strictjson.Object:
		m := map[string]any{}
		for k, e := range v.Fields {
			m[k] = hostRaw(e)
		}
		return m
	case strictjson.Array:
		a := []any{}
		for _, e := range v.Elems {
			a = append(a, hostRaw(e))
		}
		return a
	case strictjson.Number:
		return json.Number(v.Raw)
	case strictjson.String:
		return v.Str
	case strictjson.Bool:
		return v.Bool
	}
	return nil
}

// parseHostLineFast reads a host line written as HostLine.AppendJSON
// writes it (its keys in its order, no escapes, no exponents) into l,
// reusing l's and f's storage, and returns its t; ok is false for any
// other line, which ParseHostLine then reads strictly.
func parseHostLineFast(b []byte, l *HostLine, f *HostFold) (t []byte, ok bool) {
	p := hostScan{b: b, slots: f.slots[:0]}
	defer func() { f.slots = p.slots }()
	if !p.lit(`{"t":"`) {
		return nil, false
	}
	t = p.strAt(slotT, 0)
	ok = t != nil && p.lit(`,"cpu":{"busy":`) && p.numAt(slotBusy, 0, &l.CPU.Busy) && p.lit(`,"steal":`) && p.numAt(slotSteal, 0, &l.CPU.Steal) &&
		p.lit(`,"iowait":`) && p.numAt(slotIOWait, 0, &l.CPU.IOWait) && p.lit(`},"own_cpu":`) && p.numAt(slotOwnCPU, 0, &l.OwnCPU) &&
		p.lit(`,"own_wait":`) && p.numAt(slotOwnWait, 0, &l.OwnWait) && p.lit(`,"other_cpu":`) && p.numAt(slotOtherCPU, 0, &l.OtherCPU) && p.lit(`,"top":[`)
	if !ok {
		return nil, false
	}
	if l.Top = l.Top[:0]; l.Top == nil {
		l.Top = []HostProc{}
	}
	for i := 0; !p.lit(`]`); i++ {
		if i > 0 && !p.lit(`,`) {
			return nil, false
		}
		var pr HostProc
		var pid int64
		if !p.lit(`{"pid":`) || !p.intAt(slotPID, i, &pid) || !p.lit(`,"comm":"`) {
			return nil, false
		}
		comm := p.strAt(slotComm, i)
		if comm == nil || !p.lit(`,"cores":`) || !p.numAt(slotCores, i, &pr.Cores) || !p.lit(`}`) {
			return nil, false
		}
		pr.PID = int(pid)
		if c, seen := f.comms[pr.PID]; seen && c == string(comm) {
			pr.Comm = c
		} else {
			pr.Comm = string(comm)
			f.comms[pr.PID] = pr.Comm
		}
		l.Top = append(l.Top, pr)
	}
	l.PSI, l.CPUMHz = nil, nil
	if p.lit(`,"psi":{"cpu_some":`) {
		if !p.intAt(slotPSICPU, 0, &f.psi.CPUSome) || !p.lit(`,"memory_full":`) || !p.intAt(slotPSIMem, 0, &f.psi.MemoryFull) ||
			!p.lit(`,"io_full":`) || !p.intAt(slotPSIIO, 0, &f.psi.IOFull) || !p.lit(`}`) {
			return nil, false
		}
		l.PSI = &f.psi
	}
	if p.lit(`,"cpu_mhz":`) {
		if !p.numAt(slotMHz, 0, &f.mhz1) {
			return nil, false
		}
		l.CPUMHz = &f.mhz1
	}
	if !p.lit(`,"swap":{"in":`) || !p.intAt(slotSwapIn, 0, &l.Swap.In) || !p.lit(`,"out":`) || !p.intAt(slotSwapOut, 0, &l.Swap.Out) || !p.lit(`}}`) || p.i != len(b) {
		return nil, false
	}
	return t, true
}

// hostScan reads a line written in one layout, byte by byte.
type hostScan struct {
	b []byte
	i int
	// slots are the values read, in the line's order (hosttemplate.go).
	slots []hostSlot
}

func (p *hostScan) lit(s string) bool {
	if len(p.b)-p.i < len(s) || string(p.b[p.i:p.i+len(s)]) != s {
		return false
	}
	p.i += len(s)
	return true
}

// str reads a string's bytes up to its closing quote: printable ASCII
// without escapes only (nil otherwise).
func (p *hostScan) str() []byte {
	j := p.i
	for j < len(p.b) && plainByte[p.b[j]] {
		j++
	}
	if j < len(p.b) && p.b[j] == '"' {
		s := p.b[p.i:j]
		p.i = j + 1
		return s
	}
	return nil
}

// plainByte marks the bytes str reads inside a string: printable ASCII
// but the quote, the backslash and the characters encoding/json escapes
// (< > &).
var plainByte = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// int reads a non-negative integer under 2^53, without leading zeros.
func (p *hostScan) int(v *int64) bool {
	j, n := p.i, int64(0)
	for ; j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9'; j++ {
		n = n*10 + int64(p.b[j]-'0')
		if n >= 1<<53 {
			return false
		}
	}
	if j == p.i || (p.b[p.i] == '0' && j-p.i > 1) {
		return false
	}
	p.i, *v = j, n
	return true
}

// num reads a non-negative decimal with at most 22 fraction digits and
// no exponent: its digits as an integer under 2^53 over a power of ten
// that float64 holds exactly (pow10) is the correctly rounded value, as
// strconv.ParseFloat gives it. A number of at most 15 digits, which no
// limit of numChecked can refuse (10^15 < 2^53), is read in one pass;
// any other by numChecked.
func (p *hostScan) num(v *float64) bool {
	b := p.b
	j, n, dot := p.i, int64(0), -1
	for ; j < len(b); j++ {
		if c := b[j]; c-'0' <= 9 {
			n = n*10 + int64(c-'0')
		} else if c == '.' && dot < 0 {
			dot = j
		} else {
			break
		}
	}
	whole, digits := j-p.i, j-p.i
	if dot >= 0 {
		whole, digits = dot-p.i, digits-1
	}
	if whole == 0 || digits > 15 || (b[p.i] == '0' && whole > 1) || dot == j-1 || (j < len(b) && (b[j] == 'e' || b[j] == 'E')) {
		return p.numChecked(v)
	}
	p.i, *v = j, float64(n)
	if dot >= 0 {
		*v = float64(n) / pow10[j-dot-1]
	}
	return true
}

// numChecked is num, digit by digit.
func (p *hostScan) numChecked(v *float64) bool {
	var whole int64
	if !p.int(&whole) {
		return false
	}
	if p.i >= len(p.b) || p.b[p.i] != '.' {
		*v = float64(whole)
		return p.i >= len(p.b) || (p.b[p.i] != 'e' && p.b[p.i] != 'E')
	}
	j, n, k := p.i+1, whole, 0
	for ; j < len(p.b) && p.b[j] >= '0' && p.b[j] <= '9'; j++ {
		n, k = n*10+int64(p.b[j]-'0'), k+1
		if n >= 1<<53 || k >= len(pow10) {
			return false
		}
	}
	if k == 0 || (j < len(p.b) && (p.b[j] == 'e' || p.b[j] == 'E')) {
		return false
	}
	p.i, *v = j, float64(n)/pow10[k]
	return true
}
