package clocks

import (
	"errors"
	"fmt"
	"io/fs"
	"math"
	"sort"
	"strconv"
	"strings"
)

// judgeHostStream recomputes the record's host block from the host stream
// beside the GPU stream (SPEC §12.2, §9.2's rule): a record that says it
// has a host stream whose stream is missing, unreadable or recomputes to
// another block is clock.invalid. It reports whether the block stands.
func (l *Leg) judgeHostStream(rec *Record, fold *Fold) bool {
	path := HostStreamPath(l.StreamPath)
	if l.hostOpen == "" {
		l.add(CodeInvalid, "clock record %s has a host block, but its host stream %s cannot be read: the leg was judged from bytes", l.RecordPath, path)
		return false
	}
	f, err := OpenRegular(l.hostOpen)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			l.Unreadable = err
		}
		l.add(CodeInvalid, "clock record %s has a host block, but its host stream %s: %v; a host block stands only on its stream: copy rN.host.jsonl along with the record, or re-measure", l.RecordPath, path, unwrapPath(err))
		return false
	}
	defer f.Close()
	want, err := FoldHostStream(f, path, fold.Ticks)
	if err != nil {
		l.add(CodeInvalid, "host stream %s", ErrorAt(path, err))
		return false
	}
	if bad := diffHost(rec.Host, want); len(bad) > 0 {
		l.add(CodeInvalid, "clock record %s: the host block is not what its host stream %s recomputes to: %s; restore the original files, or re-measure", l.RecordPath, path, strings.Join(bad, "; "))
		return false
	}
	return true
}

// basisPoints is a share in hundredths of a percent, exact for the 4
// decimals the host block carries.
func basisPoints(share float64) int64 { return int64(math.Round(share * 1e4)) }

// pct prints basis points as a percentage with two decimals.
func pct(bp int64) string { return strconv.FormatFloat(float64(bp)/100, 'f', 2, 64) + "%" }

// cores prints a number of cores.
func cores(x *float64) string {
	if x == nil {
		return "unknown"
	}
	return strconv.FormatFloat(*x, 'f', 2, 64)
}

// TopText names processes with their cores, "none" for none.
func TopText(ps []HostProc) string {
	if len(ps) == 0 {
		return "none"
	}
	var out []string
	for _, p := range ps {
		out = append(out, fmt.Sprintf("%s (pid %d) %s cores", p.Comm, p.PID, strconv.FormatFloat(p.Cores, 'f', 2, 64)))
	}
	return strings.Join(out, ", ")
}

// checkHost runs the host's leg checks on a trusted leg with a host block.
func (l *Leg) checkHost() {
	h := l.Record.Host
	if h == nil {
		return
	}
	if h.OwnWaitShare != nil && h.OwnCPUS >= HostMinOwnCPUSeconds {
		if bp := basisPoints(*h.OwnWaitShare); bp > HostContentionBasisPoints {
			l.add(CodeHostContention, "the leg's own threads waited for a CPU %s of their running time over %d busy readings > %s (they ran %.2f CPU-seconds): other processes used a median %s cores (p90 %s) of %d logical CPUs; top other processes: %s; stop them, or pin them and the engine to CPUs of their own (taskset), and rerun the leg",
				pct(bp), h.BusyReadings, pct(HostContentionBasisPoints), h.OwnCPUS, cores(h.OtherCPUCores.Median), cores(h.OtherCPUCores.P90), h.LogicalCPUs, TopText(h.Top))
		}
	}
	if bp := basisPoints(h.StealShare); bp > HostStealBasisPoints {
		l.add(CodeHostSteal, "steal_share %s of the host's CPU time over %d readings > %s: the hypervisor gave this VM's CPUs to another guest; rerun on a dedicated host or instance",
			pct(bp), h.Readings, pct(HostStealBasisPoints))
	}
	if h.SwapPages > 0 {
		l.add(CodeHostSwap, "%d pages swapped in or out over %d busy readings, want 0: the box ran short of memory during the leg; free memory (or turn swap off) and rerun the leg",
			h.SwapPages, h.BusyReadings)
	}
}

// hostArm is what an arm's trusted legs with a host block say.
type hostArm struct {
	engine string
	hosts  []*Host
}

func newHostArm(engine string, legs []*Leg) hostArm {
	a := hostArm{engine: engine}
	for _, l := range legs {
		if l != nil && l.Trusted() && l.Record.Host != nil {
			a.hosts = append(a.hosts, l.Record.Host)
		}
	}
	return a
}

// values are an identity field's distinct values over the arm, sorted.
func (a hostArm) values(field func(*Host) string) []string {
	seen := map[string]bool{}
	var out []string
	for _, h := range a.hosts {
		if v := field(h); !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	sort.Strings(out)
	return out
}

// hostIdentity are the fields host.mismatch compares, printed.
var hostIdentity = []struct {
	name  string
	value func(*Host) string
}{
	{"cpu_model", func(h *Host) string { return strconv.Quote(h.CPUModel) }},
	{"logical_cpus", func(h *Host) string { return strconv.Itoa(h.LogicalCPUs) }},
	{"smt", func(h *Host) string { return h.SMT }},
	{"numa_nodes", func(h *Host) string { return strconv.Itoa(h.NUMANodes) }},
	{"kernel", func(h *Host) string { return strconv.Quote(h.Kernel) }},
	{"cpufreq.governors", func(h *Host) string {
		if h.CPUFreq == nil {
			return "none"
		}
		return strings.Join(h.CPUFreq.Governors, ",")
	}},
	{"cpufreq.boost", func(h *Host) string {
		if h.CPUFreq == nil || h.CPUFreq.Boost == nil {
			return "unknown"
		}
		return strconv.FormatBool(*h.CPUFreq.Boost)
	}},
}

// HostReasons are the host's ratio checks (SPEC §12.2) on two arms' legs:
// host.mismatch (never waived) and host.cpu_offset. An arm without a leg
// that recorded its host has nothing to compare: the checks need their
// evidence and are never a reason by absence.
func HostReasons(oursEngine string, ours []*Leg, baseEngine string, baseline []*Leg) []Reason {
	o, b := newHostArm(oursEngine, ours), newHostArm(baseEngine, baseline)
	if len(o.hosts) == 0 || len(b.hosts) == 0 {
		return nil
	}
	var out []Reason
	var diff []string
	for _, f := range hostIdentity {
		ov, bv := o.values(f.value), b.values(f.value)
		if strings.Join(ov, " ") != strings.Join(bv, " ") {
			diff = append(diff, fmt.Sprintf("%s: %s %s, %s %s", f.name, o.engine, strings.Join(ov, " "), b.engine, strings.Join(bv, " ")))
		}
	}
	lo, hi := int64(math.MaxInt64), int64(0)
	for _, h := range append(append([]*Host(nil), o.hosts...), b.hosts...) {
		lo, hi = min(lo, h.MemoryTotalMiB), max(hi, h.MemoryTotalMiB)
	}
	// (hi − lo) / lo > bound, in integers: no rounding at the boundary.
	if (hi-lo)*10000 > HostMemoryBasisPoints*lo {
		diff = append(diff, fmt.Sprintf("memory_total_mib: %s %s, %s %s differ by more than %s",
			o.engine, strings.Join(o.values(memText), " "), b.engine, strings.Join(b.values(memText), " "), pct(HostMemoryBasisPoints)))
	}
	if len(diff) > 0 {
		out = append(out, ratioReason(CodeHostMismatch, "arms are not on one host: %s; run both arms on one box (or boxes of one build)",
			strings.Join(diff, "; ")))
	}
	om, bm := o.mhz(), b.mhz()
	if om != nil && bm != nil {
		// |ours − baseline| / baseline > bound, in tenths of a MHz.
		o10, b10 := int64(math.Round(*om*10)), int64(math.Round(*bm*10))
		d := o10 - b10
		if d < 0 {
			d = -d
		}
		if d*10000 > HostCPUOffsetBasisPoints*b10 {
			out = append(out, ratioReason(CodeHostCPUOffset, "busy median CPU clock %s %s MHz, %s %s MHz: %.3f%% apart > %s; hold the CPU clock (one cpufreq governor, boost set alike) or run both arms on one box",
				o.engine, fmtMHz(*om), b.engine, fmtMHz(*bm), float64(d)*100/float64(b10), pct(HostCPUOffsetBasisPoints)))
		}
	}
	return out
}

func memText(h *Host) string { return strconv.FormatInt(h.MemoryTotalMiB, 10) + " MiB" }

func fmtMHz(x float64) string { return strconv.FormatFloat(x, 'f', -1, 64) }

// mhz is the median of the arm's legs' busy median cpu_mhz, nil unless
// every leg recorded one.
func (a hostArm) mhz() *float64 {
	var xs []float64
	for _, h := range a.hosts {
		if h.CPUMHz == nil {
			return nil
		}
		xs = append(xs, *h.CPUMHz)
	}
	if len(xs) == 0 {
		return nil
	}
	m := quantile(xs, 0.5)
	return ptr(math.Round(*m*10) / 10)
}

// HostSide sums up an arm's host: over its trusted legs that recorded
// one, the medians of their own wait shares, other processes' median
// cores, steal shares and CPU clocks.
type HostSide struct {
	// Recorded counts the trusted legs with a host block, of Trusted.
	Recorded, Trusted int
	OwnWaitShare      *float64
	OtherCores        *float64
	StealShare        *float64
	// CPUMHz is nil unless some leg recorded its CPU clock.
	CPUMHz *float64
	// Unjudged counts the legs whose own threads ran under
	// HostMinOwnCPUSeconds over their busy readings (no share to judge).
	Unjudged int
}

func newHostSide(legs []*Leg) HostSide {
	var hs HostSide
	var wait, other, steal, mhz []float64
	for _, l := range legs {
		if !l.Trusted() {
			continue
		}
		hs.Trusted++
		h := l.Record.Host
		if h == nil {
			continue
		}
		hs.Recorded++
		if h.OwnWaitShare == nil || h.OwnCPUS < HostMinOwnCPUSeconds {
			hs.Unjudged++
		}
		if h.OwnWaitShare != nil {
			wait = append(wait, *h.OwnWaitShare)
		}
		if h.OtherCPUCores.Median != nil {
			other = append(other, *h.OtherCPUCores.Median)
		}
		steal = append(steal, h.StealShare)
		if h.CPUMHz != nil {
			mhz = append(mhz, *h.CPUMHz)
		}
	}
	hs.OwnWaitShare, hs.OtherCores, hs.StealShare, hs.CPUMHz = median(wait), median(other), median(steal), median(mhz)
	return hs
}

// median is the median of xs, nil for none; xs is sorted in place.
func median(xs []float64) *float64 {
	if len(xs) == 0 {
		return nil
	}
	sort.Float64s(xs)
	n := len(xs)
	m := xs[n/2]
	if n%2 == 0 {
		m = xs[n/2-1]/2 + xs[n/2]/2
	}
	return &m
}

// Text is the arm's host in one line of the observed block: "ENGINE
// host: not recorded" for an arm none of whose legs recorded its host.
func (hs HostSide) Text(engine string) string {
	if hs.Recorded == 0 {
		return engine + " host: not recorded"
	}
	share := func(x *float64) string {
		if x == nil {
			return "n/a"
		}
		return strconv.FormatFloat(*x*100, 'f', 2, 64) + "%"
	}
	out := fmt.Sprintf("%s host: own wait share %s, other processes %s cores, steal %s", engine, share(hs.OwnWaitShare), cores(hs.OtherCores), share(hs.StealShare))
	if hs.CPUMHz != nil {
		out += ", CPU " + fmtMHz(math.Round(*hs.CPUMHz*10)/10) + " MHz"
	}
	if hs.Unjudged > 0 {
		out += fmt.Sprintf(" (own wait not judged in %d of %d legs: their own threads ran under %v CPU-second over the busy readings)",
			hs.Unjudged, hs.Recorded, HostMinOwnCPUSeconds)
	}
	if hs.Recorded < hs.Trusted {
		out += fmt.Sprintf(" (%d of %d legs recorded their host)", hs.Recorded, hs.Trusted)
	}
	return out
}
