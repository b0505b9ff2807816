package clocks

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path"
	"sort"
	"strings"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// The reason codes of a leg across several hosts (SPEC §12.3), never
// waived.
const (
	CodeHostMissing    = "clock.host_missing"
	CodeHostUnexpected = "clock.host_unexpected"
	CodeHostDuplicate  = "clock.host_duplicate"
	CodeHostInterval   = "clock.host_interval"
	CodeHostWindow     = "clock.host_window"
	CodeHostSkew       = "clock.host_skew"
	CodeWallStep       = "clock.wall_step"
)

// HowToStopSamplers says how to stop a multi-host leg's samplers under
// Slurm, in every message about a host without its record: SIGTERM to an
// srun client is turned into SIGKILL for every task, so no sampler
// writes its record.
const HowToStopSamplers = "stop samplers with SIGINT to `srun --disable-status` (kill -INT $srun_pid; wait $srun_pid) or `scancel --signal=INT JOBID.STEPID`, never SIGTERM to srun, which SIGKILLs every task before it writes its record"

// The files of a leg's directory form, beside leg.json.
const (
	legHostsDir     = "hosts"
	legPointsName   = "points.jsonl"
	legRecordSuffix = ".summary.json"
	legStreamSuffix = ".samples.jsonl"
)

// legHostSuffixes are the suffixes of a host's files under hosts/.
var legHostSuffixes = []string{legRecordSuffix, legStreamSuffix, ".host.jsonl", ".memory.json"}

// HostLeg is one host of a multi-host leg, judged as a single-host leg
// on its own streams.
type HostLeg struct {
	Host, Role, Group string
	// Rank is the host's place in leg.json.
	Rank int
	// Leg is the host's leg; nil where the host wrote no record.
	Leg *Leg
}

// MultiHostPointsPath is the client's marks of the leg in dir, for the
// point evidence a caller reads (DIR/points.jsonl).
func MultiHostPointsPath(dir string) string { return path.Join(dir, legPointsName) }

// LoadMultiHostLeg reads and judges a leg in the directory form, dir
// (SPEC §12.3): each host of leg.json as a single-host leg on its own
// streams, its reasons named by host; then the hosts together (records
// missing or unexpected, a GPU claimed twice, the interval, the window,
// the time sync across hosts, wall-clock steps, clock.gpu_skew per group
// across hosts). lf names the leg and, in Points, the client's marks; a
// leg whose hosts are all trusted is trusted, its GPUs the hosts' in
// leg.json's order, so that the cross-arm checks compare position by
// position (host rank, GPU order) and boot by boot of each host.
func LoadMultiHostLeg(lf LegFiles, dir string) *Leg {
	l := NewLeg(lf)
	l.RecordPath, l.StreamPath = dir, ""
	manifestPath := path.Join(dir, MultiHostManifest)
	data, err := ReadJSONFile(lf.open(manifestPath))
	if err != nil {
		l.add(CodeInvalid, "%s: %v; a multi-host leg's directory holds the leg.json clockgate leg init wrote", manifestPath, unwrapPath(err))
		return l
	}
	m, err := ParseLegManifest(data)
	if err != nil {
		l.add(CodeInvalid, "%s: %v", manifestPath, err)
		return l
	}
	hostsDir := path.Join(dir, legHostsDir)
	l.checkUnexpectedHosts(lf.open(hostsDir), hostsDir, m)

	// The records first: the time sync they carry decides whether point
	// windows are judged on the hosts' samples.
	recs := make([]*Record, len(m.Hosts))
	for i, h := range m.Hosts {
		recPath := path.Join(hostsDir, h.Host+legRecordSuffix)
		data, err := ReadJSONFile(lf.open(recPath))
		if errors.Is(err, fs.ErrNotExist) {
			l.add(CodeHostMissing, "host %s (rank %d of %d in leg.json) has no record at %s: its sampler never ran, or was killed before it could write one; %s, and measure the leg again",
				h.Host, i+1, len(m.Hosts), recPath, HowToStopSamplers)
			continue
		}
		if err == nil {
			recs[i], _ = ParseRecord(data) // LoadLeg names what is wrong
		}
		if recs[i] != nil {
			if recs[i].TimeSync, err = ParseTimeSync(data); err != nil {
				l.add(CodeHostSkew, "host %s: %s: time_sync: %v; so how far its clock is from the others' is unknown", h.Host, recPath, err)
				recs[i].TimeSync = &TimeSyncWindow{}
			}
		}
	}
	skewHolds := l.checkTimeSync(m, recs)
	for i, h := range m.Hosts {
		hl := &HostLeg{Host: h.Host, Role: h.Role, Group: h.Group, Rank: i}
		l.Hosts = append(l.Hosts, hl)
		if recs[i] == nil && !exists(lf.open(path.Join(hostsDir, h.Host+legRecordSuffix))) {
			continue
		}
		hf := LegFiles{Name: lf.Name, Engine: lf.Engine, Run: lf.Run, Root: lf.Root, Trace: lf.Trace,
			RecordPath: path.Join(hostsDir, h.Host+legRecordSuffix), StreamPath: path.Join(hostsDir, h.Host+legStreamSuffix)}
		if lf.Points != nil && skewHolds {
			ev := *lf.Points
			hf.Points = &ev
		}
		hl.Leg = LoadLeg(hf)
		for _, r := range hl.Leg.Reasons {
			r.Message = "host " + h.Host + ": " + r.Message
			l.Reasons = append(l.Reasons, r)
		}
		if l.Unreadable == nil {
			l.Unreadable = hl.Leg.Unreadable
		}
		for _, w := range hl.Leg.PointWarnings {
			l.PointWarnings = append(l.PointWarnings, "host "+h.Host+": "+w)
		}
	}
	if lf.Points != nil && !skewHolds {
		l.PointSource = WindowMarks
		l.noSource = "the hosts' clocks are not shown to agree (clock.host_skew), so its windows are not judged on the hosts' samples"
	}
	l.evidence = nil
	l.checkHostRecords(m)
	l.checkWallSteps(lf)
	l.checkGroupSkew()
	l.combine(m)
	return l
}

func exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// checkUnexpectedHosts raises clock.host_unexpected for each file under
// hosts/ of a host leg.json does not list.
func (l *Leg) checkUnexpectedHosts(open, hostsDir string, m *LegManifest) {
	ents, err := os.ReadDir(open)
	if err != nil {
		return // every host is then missing
	}
	listed := make([]string, len(m.Hosts))
	for i, h := range m.Hosts {
		listed[i] = h.Host
	}
	seen := map[string]bool{}
	for _, e := range ents {
		host := ""
		for _, suf := range legHostSuffixes {
			if strings.HasSuffix(e.Name(), suf) {
				host = strings.TrimSuffix(e.Name(), suf)
				break
			}
		}
		if host == "" {
			continue
		}
		if _, ok := m.Host(host); ok || seen[host] {
			continue
		}
		seen[host] = true
		l.add(CodeHostUnexpected, "%s: a file of host %s, which leg.json does not list (hosts: %s): a sampler started with the wrong --leg or host name (its host is $SLURMD_NODENAME, else --host, else the host name); list every host with clockgate leg init --hosts, and measure the leg again",
			path.Join(hostsDir, e.Name()), host, strings.Join(listed, ", "))
	}
}

// checkTimeSync judges the hosts' clocks against each other (SPEC
// §12.3): each host synchronised at its window's start and end, each
// host's bound |offset| + root delay / 2 + root dispersion known, and the
// sum of any two hosts' bounds within leg.json's skew_bound_ms. It reports
// whether clock.host_skew holds. A leg whose one host is its client needs
// no time sync: one clock stamps and samples.
func (l *Leg) checkTimeSync(m *LegManifest, recs []*Record) bool {
	if len(m.Hosts) == 1 && m.Hosts[0].Host == m.Client {
		return true
	}
	holds := true
	fail := func(format string, args ...any) {
		holds = false
		l.add(CodeHostSkew, format, args...)
	}
	const why = "point windows are stamped by the client's clock and priced on every host's samples, so the hosts' clocks must agree"
	type bound struct {
		host string
		ms   float64
	}
	var known []bound
	var undeclared []string
	for i, h := range m.Hosts {
		rec := recs[i]
		if rec == nil {
			continue // clock.host_missing, or clock.invalid from its leg
		}
		ts := rec.TimeSync
		if ts == nil || ts.Start == nil || ts.End == nil {
			fail("host %s: its record has no time_sync at the window's start and end, so how far its clock is from the others' is unknown; record it with clockgate sample --leg (%s)", h.Host, why)
			continue
		}
		b, chrony, ok := 0.0, true, true
		for _, at := range []struct {
			name string
			t    *TimeSync
		}{{"start", ts.Start}, {"end", ts.End}} {
			k := at.t.Kernel
			switch {
			case k == nil:
				fail("host %s: the kernel's time state at the window's %s is unknown (adjtimex: %s); %s", h.Host, at.name, orNone(at.t.Error), why)
				ok = false
			case !k.Synchronised:
				fail("host %s: the kernel's clock is not synchronised at the window's %s (adjtimex state %d, status %#x, maxerror %d µs): run chronyd (or another NTP or PTP daemon) on every host and start the leg once it has synchronised; %s",
					h.Host, at.name, k.State, k.Status, k.MaxErrorUS, why)
				ok = false
			}
			c := at.t.Chrony
			if c == nil {
				chrony = false
				continue
			}
			if c.LeapStatus == "Not synchronised" {
				fail("host %s: chronyd is not synchronised at the window's %s (chronyc tracking: leap status %q); wait until chronyc tracking says Normal before the leg; %s", h.Host, at.name, c.LeapStatus, why)
				ok = false
			}
			b = math.Max(b, (math.Abs(c.OffsetS)+c.RootDelayS/2+c.RootDispersionS)*1000)
		}
		switch {
		case !ok:
		case !chrony:
			undeclared = append(undeclared, h.Host)
		default:
			known = append(known, bound{h.Host, b})
		}
	}
	if len(undeclared) > 0 {
		switch d := m.SkewBoundDeclaredMS; {
		case d == nil:
			fail("%s: no chronyc tracking in the record's time_sync, so the clock's bound is unknown; run chronyd on every host, or state a bound measured otherwise (PTP monitoring) with clockgate leg init --skew-bound-declared D; %s",
				hostList(undeclared), why)
		case *d > m.SkewBoundMS:
			fail("%s: no chronyc tracking; the bound declared in leg.json, skew_bound_declared_ms %v, is over skew_bound_ms %v; %s", hostList(undeclared), *d, m.SkewBoundMS, why)
		default:
			l.PointWarnings = append(l.PointWarnings, fmt.Sprintf("CAVEAT: %s: no chronyc tracking; the hosts' clocks are taken to agree within the declared skew_bound_declared_ms %v (≤ skew_bound_ms %v), a bound clockgate did not measure",
				hostList(undeclared), *d, m.SkewBoundMS))
		}
	}
	sort.SliceStable(known, func(i, j int) bool { return known[i].ms > known[j].ms })
	if len(known) >= 2 && known[0].ms+known[1].ms > m.SkewBoundMS {
		fail("hosts %s and %s: their clocks may disagree by %.3f ms (%.3f + %.3f, each |offset| + root delay / 2 + root dispersion from chronyc tracking) > skew_bound_ms %v: bring every host under one time source (chronyd against one server, or PTP) and measure the leg again; %s",
			known[0].host, known[1].host, known[0].ms+known[1].ms, known[0].ms, known[1].ms, m.SkewBoundMS, why)
	}
	return holds
}

// ParseTimeSync reads a record's time_sync (SPEC §12.3), nil where it
// has none; every key known and typed.
func ParseTimeSync(record []byte) (*TimeSyncWindow, error) {
	var raw struct {
		TimeSync json.RawMessage `json:"time_sync"`
	}
	if err := json.Unmarshal(record, &raw); err != nil || raw.TimeSync == nil {
		return nil, err
	}
	var ts TimeSyncWindow
	dec := json.NewDecoder(bytes.NewReader(raw.TimeSync))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&ts); err != nil {
		return nil, err
	}
	return &ts, nil
}

func orNone(s string) string {
	if s == "" {
		return "no reading"
	}
	return s
}

func hostList(hosts []string) string {
	if len(hosts) == 1 {
		return "host " + hosts[0]
	}
	return "hosts " + strings.Join(hosts, ", ")
}

// checkHostRecords runs the checks on the hosts' records together: each
// host at leg.json's interval, each host's window within
// MaxHostWindowIntervals of the common window, and no GPU claimed by two
// hosts.
func (l *Leg) checkHostRecords(m *LegManifest) {
	iv := m.IntervalS
	type span struct {
		host          string
		first, last   time.Time
		firstT, lastT string
	}
	var spans []span
	claims := map[string][]string{}
	var uuids []string
	for _, hl := range l.Hosts {
		if hl.Leg == nil || hl.Leg.Record == nil {
			continue
		}
		rec := hl.Leg.Record
		if rec.Window.IntervalS != iv {
			l.add(CodeHostInterval, "host %s: interval_s %v s, leg.json's %v s: every host samples at the leg's interval (clockgate sample --leg reads it from leg.json); measure the leg again with each host's sampler started by sample --leg",
				hl.Host, rec.Window.IntervalS, iv)
		}
		for _, g := range rec.GPUs {
			if claims[g.UUID] == nil {
				uuids = append(uuids, g.UUID)
			}
			if n := len(claims[g.UUID]); n == 0 || claims[g.UUID][n-1] != hl.Host {
				claims[g.UUID] = append(claims[g.UUID], hl.Host)
			}
		}
		a, err1 := time.Parse(time.RFC3339Nano, rec.Window.FirstT)
		b, err2 := time.Parse(time.RFC3339Nano, rec.Window.LastT)
		if err1 == nil && err2 == nil {
			spans = append(spans, span{hl.Host, a, b, rec.Window.FirstT, rec.Window.LastT})
		}
	}
	for _, u := range uuids {
		if hs := claims[u]; len(hs) > 1 {
			l.add(CodeHostDuplicate, "GPU %s is claimed by hosts %s: two samplers read one GPU (two --host names on one machine, or one machine under two names), so one GPU counts as two; sample each host once, under its own name",
				u, strings.Join(hs, " and "))
		}
	}
	if len(spans) < 2 {
		return
	}
	start, end := spans[0], spans[0]
	for _, s := range spans[1:] {
		if s.first.Before(start.first) {
			start = s
		}
		if s.last.After(end.last) {
			end = s
		}
	}
	limit := time.Duration(MaxHostWindowIntervals * iv * float64(time.Second))
	for _, s := range spans {
		if d := s.first.Sub(start.first); d > limit {
			l.add(CodeHostWindow, "host %s: its window starts at %s, %.3f s after the common window's start (%s, host %s) > %d × interval_s %v s = %.3f s: a late sampler did not see the leg's beginning; start every host's sampler, and wait for it (clockgate leg wait --started), before the first point",
				s.host, s.firstT, d.Seconds(), start.firstT, start.host, MaxHostWindowIntervals, iv, limit.Seconds())
		}
		if d := end.last.Sub(s.last); d > limit {
			l.add(CodeHostWindow, "host %s: its window ends at %s, %.3f s before the common window's end (%s, host %s) > %d × interval_s %v s = %.3f s: a sampler that stopped early did not see the leg's end; stop every host's sampler together, after the last point (%s)",
				s.host, s.lastT, d.Seconds(), end.lastT, end.host, MaxHostWindowIntervals, iv, limit.Seconds(), HowToStopSamplers)
		}
	}
}

// checkWallSteps reads each trusted host's stream for its wall clock
// against mono_s (CLOCK_BOOTTIME): between two readings the two may not
// differ by more than MaxWallStepMS, and every reading carries mono_s.
func (l *Leg) checkWallSteps(lf LegFiles) {
	for _, hl := range l.Hosts {
		if hl.Leg == nil || !hl.Leg.Trusted() {
			continue
		}
		if msg := wallStep(lf.open(hl.Leg.StreamPath), hl.Leg.StreamPath); msg != "" {
			l.add(CodeWallStep, "host %s: %s", hl.Host, msg)
		}
	}
}

// wallStep is what is wrong with a stream's wall clock against its
// mono_s, or "".
func wallStep(open, name string) string {
	f, err := OpenRegular(open)
	if err != nil {
		return fmt.Sprintf("%s: %v", name, unwrapPath(err))
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	var prevWall time.Time
	var prevMono float64
	prevLine, line := 0, 0
	for sc.Scan() {
		line++
		v, err := strictjson.ParseObject(sc.Bytes())
		if err != nil {
			return fmt.Sprintf("%s:%d: %v", name, line, err) // the fold read it: not reached
		}
		t, tok := v.Fields["t"]
		mono, mok := v.Fields["mono_s"]
		if !mok || mono.Kind != strictjson.Number {
			return fmt.Sprintf("%s:%d: no mono_s (CLOCK_BOOTTIME at the reading), so a step of the wall clock within the window cannot be ruled out; record every host with clockgate sample --leg, which writes it", name, line)
		}
		var wall time.Time
		if tok && t.Kind == strictjson.String {
			wall, err = time.Parse(time.RFC3339Nano, t.Str)
		}
		if !tok || t.Kind != strictjson.String || err != nil {
			return fmt.Sprintf("%s:%d: no readable t", name, line)
		}
		if prevLine > 0 {
			dWall := wall.Sub(prevWall).Seconds()
			dMono := mono.Num - prevMono
			if step := math.Abs(dWall - dMono); step*1000 > MaxWallStepMS {
				return fmt.Sprintf("%s: the wall clock moved %.3f s against CLOCK_BOOTTIME's %.3f s between lines %d and %d (%s to %s): a step of %.3f s > %d ms; something set the clock within the window (an NTP step, an operator, the hypervisor resuming the VM), which voids the alignment of point windows across hosts; let the time daemon slew, never step, during legs (chrony: makestep only at boot) and measure the leg again",
					name, dWall, dMono, prevLine, line, prevWall.UTC().Format(time.RFC3339Nano), wall.UTC().Format(time.RFC3339Nano), step, MaxWallStepMS)
			}
		}
		prevWall, prevMono, prevLine = wall, mono.Num, line
	}
	if err := sc.Err(); err != nil {
		return fmt.Sprintf("%s: %v", name, err)
	}
	return ""
}

// checkGroupSkew holds the busy medians of each group's GPUs across its
// hosts within the offset bound (a step across nodes runs at its slowest
// GPU); groups are never compared with each other, since prefill and
// decode run at their own clocks. A pair of one host is that host's own
// clock.gpu_skew.
func (l *Leg) checkGroupSkew() {
	type gpu struct {
		host string
		g    *GPUFold
		m2   int64
	}
	groups := map[string][]gpu{}
	var order []string
	hosts := map[string]map[string]bool{}
	for _, hl := range l.Hosts {
		if hl.Leg == nil || !hl.Leg.Trusted() {
			continue
		}
		if _, ok := groups[hl.Group]; !ok {
			order = append(order, hl.Group)
			hosts[hl.Group] = map[string]bool{}
		}
		hosts[hl.Group][hl.Host] = true
		for _, g := range hl.Leg.Fold.GPUs {
			free, _ := g.Free()
			h := summarize(free)
			if summarize(g.Hist).n < MinBusySamples || h.n < MinFreeSamples {
				continue
			}
			groups[hl.Group] = append(groups[hl.Group], gpu{hl.Host, g, h.median2})
		}
	}
	for _, name := range order {
		if len(hosts[name]) < 2 {
			continue
		}
		var slow, fast *gpu
		for i := range groups[name] {
			x := &groups[name][i]
			if slow == nil || x.m2 < slow.m2 {
				slow = x
			}
			if fast == nil || x.m2 > fast.m2 {
				fast = x
			}
		}
		if slow == nil || slow.host == fast.host || offsetWithin(fast.m2, slow.m2) {
			continue
		}
		group := "the leg's one group"
		if name != "" {
			group = "group " + name
		}
		l.add(CodeGPUSkew, "%s: GPU busy medians across hosts differ by %.2f%% > %.1f%%: host %s GPU %d at %s MHz (the slowest), host %s GPU %d at %s MHz; a step across nodes runs at its slowest GPU's pace (groups are never compared with each other: prefill and decode run at their own clocks)",
			group, float64(fast.m2-slow.m2)*100/float64(slow.m2), MaxOffsetPct, slow.host, slow.g.Index, fmtMedian(slow.m2), fast.host, fast.g.Index, fmtMedian(fast.m2))
	}
}

// combine makes a leg whose every host is trusted trusted itself: its
// record and fold hold the hosts' GPUs in leg.json's order, its boot id
// names each host's boot, and its point windows count every host's busy
// samples.
func (l *Leg) combine(m *LegManifest) {
	if len(l.Hosts) == 0 {
		return
	}
	for _, hl := range l.Hosts {
		if hl.Leg == nil || !hl.Leg.Trusted() {
			return
		}
	}
	first := l.Hosts[0].Leg
	rec := *first.Record
	rec.GPUs, rec.Host, rec.TimeSync, rec.ComputeProcesses = nil, nil, nil, nil
	fold := &Fold{}
	boots := make([]string, len(l.Hosts))
	for i, hl := range l.Hosts {
		r, f := hl.Leg.Record, hl.Leg.Fold
		boots[i] = hl.Host + "=" + r.BootID
		rec.GPUs = append(rec.GPUs, r.GPUs...)
		fold.GPUs = append(fold.GPUs, f.GPUs...)
		fold.Total += f.Total
		if i > 0 {
			rec.Window.SamplesTotal += r.Window.SamplesTotal
		}
		if r.Window.FirstT < rec.Window.FirstT {
			rec.Window.FirstT = r.Window.FirstT
		}
		if r.Window.LastT > rec.Window.LastT {
			rec.Window.LastT = r.Window.LastT
		}
	}
	rec.BootID = strings.Join(boots, ",")
	rec.Window.IntervalS = m.IntervalS
	fold.FirstT, fold.LastT = rec.Window.FirstT, rec.Window.LastT
	l.Record, l.Fold = &rec, fold
	if first.PointSource != "" {
		l.PointSource = first.PointSource
	}
	l.PointNotes = map[string]string{}
	for _, hl := range l.Hosts {
		for k, v := range hl.Leg.PointNotes {
			if _, ok := l.PointNotes[k]; !ok {
				l.PointNotes[k] = "host " + hl.Host + ": " + v
			}
		}
	}
	if first.Points == nil {
		return
	}
	l.Points = map[string]*LegPoint{}
	for label, p := range first.Points {
		sum := &LegPoint{Source: p.Source, Span: p.Span, WindowCount: WindowCount{Free: map[int]int{}}}
		all := true
		for _, hl := range l.Hosts {
			q := hl.Leg.Points[label]
			if q == nil {
				all = false
				break
			}
			sum.Busy += q.Busy
			sum.PowerManaged += q.PowerManaged
			for v, n := range q.Free {
				sum.Free[v] += n
			}
			sum.FreeSum.AddSum(q.FreeSum)
			sum.Energy = addEnergy(sum.Energy, q.Energy, hl.Host)
		}
		if all {
			l.Points[label] = sum
		}
	}
}

// addEnergy adds host's energy over a point's window to the leg's so
// far, sum (nil before the first host): the leg's energy is its hosts'
// together; a host's energy reason is the leg's, naming the host.
func addEnergy(sum, e *LegEnergy, host string) *LegEnergy {
	if e == nil {
		return sum
	}
	add := func(a, b *float64) *float64 {
		if a == nil || b == nil {
			return nil
		}
		return ptr(*a + *b)
	}
	if sum == nil {
		out := *e
		if out.Problem != "" {
			out.Problem = "host " + host + ": " + out.Problem
		}
		return &out
	}
	if sum.Code == "" && e.Code != "" {
		sum.Code, sum.Problem = e.Code, "host "+host+": "+e.Problem
	}
	if sum.Method != e.Method || sum.Scope != e.Scope {
		sum.Method, sum.Scope = "", ""
	}
	sum.EnergyJ += e.EnergyJ
	sum.CounterJ, sum.IntegralJ = add(sum.CounterJ, e.CounterJ), add(sum.IntegralJ, e.IntegralJ)
	sum.ErrorBoundJ, sum.IdlePowerW = add(sum.ErrorBoundJ, e.ErrorBoundJ), add(sum.IdlePowerW, e.IdlePowerW)
	return sum
}

// GPUHost is the host, and its role, of the leg's GPU at position k: ""
// for a single-host leg.
func (l *Leg) GPUHost(k int) (host, role string) {
	for _, hl := range l.Hosts {
		if hl.Leg == nil || hl.Leg.Fold == nil {
			return "", ""
		}
		if k < len(hl.Leg.Fold.GPUs) {
			return hl.Host, hl.Role
		}
		k -= len(hl.Leg.Fold.GPUs)
	}
	return "", ""
}

// roleNote is ", role R" where a host has a role.
func roleNote(role string) string {
	if role == "" {
		return ""
	}
	return ", role " + role
}
