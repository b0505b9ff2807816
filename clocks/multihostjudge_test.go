package clocks

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// mhHost is one host of a test leg in the directory form: its name and
// role, its H100 at its own uuid (node1 GPU-…01), its busy clock, and what
// a test changes.
type mhHost struct {
	name, role string
	mhz        int
	// from is the tick its sampler starts at; ticks how many it reads
	// (50 when 0).
	from, ticks int
	uuid        string
	boot        string
	sync        *TimeSyncWindow
	noRecord    bool
	noMono      bool
	// every is the interval, in s (1 when 0).
	every int
	// monoShift moves mono_s by this many seconds from tick 10 on (a
	// step of the wall clock against it).
	monoShift float64
	edit      func(*Record)
}

// chronySync is a host synchronised by chronyd at start and end, its
// bound |offset| + root delay / 2 + root dispersion = boundMS.
func chronySync(boundMS float64) *TimeSyncWindow {
	r := func() *TimeSync {
		return &TimeSync{T: windowStart.Format(time.RFC3339Nano), Kernel: &KernelTime{Synchronised: true, State: 0, Status: 0x2001, MaxErrorUS: 1500, EstErrorUS: 10},
			Chrony: &ChronyTracking{RefID: "50505331", Stratum: 1, OffsetS: boundMS / 1000 / 2, RootDelayS: boundMS / 1000 / 2, RootDispersionS: boundMS / 1000 / 4, LeapStatus: "Normal", UpdateIntervalS: 2}}
	}
	return &TimeSyncWindow{Start: r(), End: r()}
}

// writeMHLeg writes a leg of hosts in the directory form under dir, as
// clockgate leg init and sample --leg do, and returns leg.json.
func writeMHLeg(t *testing.T, dir string, hosts []mhHost, edit func(*LegManifest)) *LegManifest {
	t.Helper()
	m := &LegManifest{Schema: LegSchema, IntervalS: 1, SkewBoundMS: 100, Client: hosts[0].name}
	for _, h := range hosts {
		m.Hosts = append(m.Hosts, LegHost{Host: h.name, Role: h.role, Group: h.role})
	}
	if edit != nil {
		edit(m)
	}
	os.MkdirAll(filepath.Join(dir, "hosts"), 0o755)
	if err := os.WriteFile(filepath.Join(dir, "leg.json"), m.JSON(), 0o644); err != nil {
		t.Fatal(err)
	}
	for i, h := range hosts {
		ticks := h.ticks
		if ticks == 0 {
			ticks = 50
		}
		uuid := h.uuid
		if uuid == "" {
			uuid = fmt.Sprintf("GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5%02d", i+1)
		}
		boot := h.boot
		if boot == "" {
			boot = fmt.Sprintf("%s-%d", boot13[:30], i+1)
		}
		every := max(h.every, 1)
		var ss []*Sample
		for k := h.from; k < h.from+ticks; k += every {
			s := h100(k, boot, h.mhz, 97)
			s.GPUUUID = uuid
			if !h.noMono {
				mono := 1000 + float64(k)
				if k >= 10 {
					mono += h.monoShift
				}
				s.MonoS = &mono
			}
			ss = append(ss, s)
		}
		prefix := filepath.Join(dir, "hosts", h.name)
		if err := os.WriteFile(prefix+".samples.jsonl", streamOf(ss), 0o644); err != nil {
			t.Fatal(err)
		}
		if h.noRecord {
			continue
		}
		rec := recordOf(t, ss, StopSignal)
		rec.Window.IntervalS = float64(every)
		rec.TimeSync = h.sync
		if h.sync == nil {
			rec.TimeSync = chronySync(0.5)
		}
		if h.edit != nil {
			h.edit(rec)
		}
		if err := os.WriteFile(prefix+".summary.json", recordJSON(t, rec), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return m
}

// threeHosts is prefill on node1 and decode on node2 and node3, every GPU
// at 1980 MHz; fix changes them.
func threeHosts(fix func(h []mhHost)) []mhHost {
	h := []mhHost{{name: "node1", role: "prefill", mhz: 1980}, {name: "node2", role: "decode", mhz: 1980}, {name: "node3", role: "decode", mhz: 1980}}
	if fix != nil {
		fix(h)
	}
	return h
}

// mhLeg writes and judges a three-host leg.
func mhLeg(t *testing.T, fix func(h []mhHost), edit func(*LegManifest)) *Leg {
	t.Helper()
	dir := t.TempDir()
	writeMHLeg(t, dir, threeHosts(fix), edit)
	return LoadMultiHostLeg(LegFiles{Name: "r1", Engine: "dynamo", Run: 1, Root: dir}, ".")
}

// TestMultiHostLegClean: three synchronised hosts, each a clean window at
// leg.json's interval, is eligible and trusted; its GPUs are the hosts'
// in leg.json's order and its boot names each host's.
func TestMultiHostLegClean(t *testing.T) {
	l := mhLeg(t, nil, nil)
	wantCodes(t, l.Reasons)
	if !l.Trusted() || len(l.Fold.GPUs) != 3 || len(l.Record.GPUs) != 3 || len(l.Hosts) != 3 {
		t.Fatalf("trusted %v, hosts %d", l.Trusted(), len(l.Hosts))
	}
	for k, g := range l.Record.GPUs {
		if want := fmt.Sprintf("GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5%02d", k+1); g.UUID != want {
			t.Fatalf("position %d: %s, want %s", k, g.UUID, want)
		}
	}
	if !strings.HasPrefix(l.Record.BootID, "node1=") || strings.Count(l.Record.BootID, "node") != 3 {
		t.Fatalf("boot id %q", l.Record.BootID)
	}
}

// TestMultiHostLegPerHostChecks: each host's own leg checks run on its
// streams, named by host: a spread on node3 is node3's clock.spread.
func TestMultiHostLegPerHostChecks(t *testing.T) {
	dir := t.TempDir()
	writeMHLeg(t, dir, threeHosts(nil), nil)
	// node3's stream with a clock drop: its record recomputed from it.
	var ss []*Sample
	for k := range 50 {
		mhz := 1980
		if k%2 == 0 {
			mhz = 1800
		}
		s := h100(k, boot13[:30]+"-3", mhz, 97)
		s.GPUUUID = "GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c503"
		mono := 1000 + float64(k)
		s.MonoS = &mono
		ss = append(ss, s)
	}
	os.WriteFile(filepath.Join(dir, "hosts", "node3.samples.jsonl"), streamOf(ss), 0o644)
	rec := recordOf(t, ss, StopSignal)
	rec.TimeSync = chronySync(0.5)
	os.WriteFile(filepath.Join(dir, "hosts", "node3.summary.json"), recordJSON(t, rec), 0o644)
	l := LoadMultiHostLeg(LegFiles{Name: "r1", Root: dir}, ".")
	wantReason(t, l.Reasons, CodeSpread, "host node3: spread ", "min 1800, median 1890, max 1980 MHz")
}

// TestMultiHostMissing: a host of leg.json without a record is
// clock.host_missing, its message saying how to stop samplers; the leg is
// not trusted.
func TestMultiHostMissing(t *testing.T) {
	l := mhLeg(t, func(h []mhHost) { h[1].noRecord = true }, nil)
	wantReason(t, l.Reasons, CodeHostMissing, "host node2 (rank 2 of 3 in leg.json) has no record at ", "hosts/node2.summary.json", HowToStopSamplers,
		"SIGINT to `srun --disable-status`", "`scancel --signal=INT JOBID.STEPID`, never SIGTERM to srun")
	if l.Trusted() {
		t.Fatal("a leg without a host's record is trusted")
	}
}

// TestMultiHostUnexpected: a file under hosts/ of a host leg.json does not
// list is clock.host_unexpected.
func TestMultiHostUnexpected(t *testing.T) {
	dir := t.TempDir()
	writeMHLeg(t, dir, threeHosts(nil), nil)
	os.WriteFile(filepath.Join(dir, "hosts", "node9.samples.jsonl"), []byte("{}\n"), 0o644)
	l := LoadMultiHostLeg(LegFiles{Name: "r1", Root: dir}, ".")
	wantCodes(t, l.Reasons, CodeHostUnexpected)
	wantReason(t, l.Reasons, CodeHostUnexpected, "hosts/node9.samples.jsonl: a file of host node9, which leg.json does not list (hosts: node1, node2, node3)")
}

// TestMultiHostDuplicate: two hosts claiming one GPU uuid is
// clock.host_duplicate.
func TestMultiHostDuplicate(t *testing.T) {
	l := mhLeg(t, func(h []mhHost) { h[2].uuid = "GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c502" }, nil)
	wantCodes(t, l.Reasons, CodeHostDuplicate)
	wantReason(t, l.Reasons, CodeHostDuplicate, "GPU GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c502 is claimed by hosts node2 and node3")
}

// TestMultiHostInterval: a host whose record's interval is not leg.json's
// is clock.host_interval.
func TestMultiHostInterval(t *testing.T) {
	l := mhLeg(t, func(h []mhHost) {
		for i := range h {
			h[i].ticks = 70
		}
		h[2].every = 2
	}, nil)
	wantCodes(t, l.Reasons, CodeHostInterval)
	wantReason(t, l.Reasons, CodeHostInterval, "host node3: interval_s 2 s, leg.json's 1 s")
}

// TestMultiHostWindow: a host starting exactly MaxHostWindowIntervals
// intervals late passes; one more is clock.host_window; so is one ending
// that much early.
func TestMultiHostWindow(t *testing.T) {
	ok := mhLeg(t, func(h []mhHost) { h[1].from, h[1].ticks = MaxHostWindowIntervals, 50-MaxHostWindowIntervals }, nil)
	wantCodes(t, ok.Reasons)
	late := mhLeg(t, func(h []mhHost) { h[1].from, h[1].ticks = MaxHostWindowIntervals+1, 49-MaxHostWindowIntervals }, nil)
	wantCodes(t, late.Reasons, CodeHostWindow)
	wantReason(t, late.Reasons, CodeHostWindow, "host node2: its window starts at 2026-08-12T10:15:07.123Z, 4.000 s after the common window's start (2026-08-12T10:15:03.123Z, host node1) > 3 × interval_s 1 s = 3.000 s")
	early := mhLeg(t, func(h []mhHost) { h[2].ticks = 49 - MaxHostWindowIntervals }, nil)
	wantCodes(t, early.Reasons, CodeHostWindow)
	wantReason(t, early.Reasons, CodeHostWindow, "host node3: its window ends at 2026-08-12T10:15:48.123Z, 4.000 s before the common window's end", "> 3 × interval_s 1 s = 3.000 s", HowToStopSamplers)
}

// TestMultiHostSkew: the sum of two hosts' chrony bounds at skew_bound_ms
// passes, over it is clock.host_skew; so is a kernel not synchronised, a
// host without time_sync, or one without chronyc unless a bound is
// declared; and a host's reason keeps point windows off the hosts'
// samples.
func TestMultiHostSkew(t *testing.T) {
	ok := mhLeg(t, func(h []mhHost) { h[0].sync, h[1].sync = chronySync(60), chronySync(40) }, nil)
	wantCodes(t, ok.Reasons)
	over := mhLeg(t, func(h []mhHost) { h[0].sync, h[1].sync = chronySync(60), chronySync(40.5) }, nil)
	wantCodes(t, over.Reasons, CodeHostSkew)
	wantReason(t, over.Reasons, CodeHostSkew, "hosts node1 and node2: their clocks may disagree by 100.500 ms (60.000 + 40.500, each |offset| + root delay / 2 + root dispersion from chronyc tracking) > skew_bound_ms 100")

	unsync := chronySync(0.5)
	unsync.End.Kernel.Synchronised, unsync.End.Kernel.State, unsync.End.Kernel.Status = false, 5, 0x40
	l := mhLeg(t, func(h []mhHost) { h[2].sync = unsync }, nil)
	wantCodes(t, l.Reasons, CodeHostSkew)
	wantReason(t, l.Reasons, CodeHostSkew, "host node3: the kernel's clock is not synchronised at the window's end (adjtimex state 5, status 0x40, maxerror 1500 µs): run chronyd")

	none := mhLeg(t, func(h []mhHost) { h[1].edit = func(r *Record) { r.TimeSync = nil } }, nil)
	wantReason(t, none.Reasons, CodeHostSkew, "host node2: its record has no time_sync")

	noChrony := chronySync(0.5)
	noChrony.Start.Chrony, noChrony.End.Chrony = nil, nil
	l = mhLeg(t, func(h []mhHost) { h[1].sync = noChrony }, nil)
	wantCodes(t, l.Reasons, CodeHostSkew)
	wantReason(t, l.Reasons, CodeHostSkew, "host node2: no chronyc tracking in the record's time_sync, so the clock's bound is unknown", "--skew-bound-declared D")
	d := 20.0
	l = mhLeg(t, func(h []mhHost) { h[1].sync = noChrony }, func(m *LegManifest) { m.SkewBoundDeclaredMS = &d })
	wantCodes(t, l.Reasons)
	if len(l.PointWarnings) != 1 || !strings.Contains(l.PointWarnings[0], "CAVEAT: host node2: no chronyc tracking; the hosts' clocks are taken to agree within the declared skew_bound_declared_ms 20 (≤ skew_bound_ms 100)") {
		t.Fatalf("warnings %q", l.PointWarnings)
	}
	d = 101
	l = mhLeg(t, func(h []mhHost) { h[1].sync = noChrony }, func(m *LegManifest) { m.SkewBoundDeclaredMS = &d })
	wantReason(t, l.Reasons, CodeHostSkew, "skew_bound_declared_ms 101, is over skew_bound_ms 100")
}

// TestMultiHostOneHostNeedsNoSync: a leg whose one host is its client
// needs no time sync, as a single-host leg.
func TestMultiHostOneHostNeedsNoSync(t *testing.T) {
	dir := t.TempDir()
	writeMHLeg(t, dir, []mhHost{{name: "node1", mhz: 1980, edit: func(r *Record) { r.TimeSync = nil }}}, nil)
	wantCodes(t, LoadMultiHostLeg(LegFiles{Name: "r1"}, dir).Reasons)
	dir = t.TempDir()
	writeMHLeg(t, dir, []mhHost{{name: "node1", mhz: 1980, edit: func(r *Record) { r.TimeSync = nil }}}, func(m *LegManifest) { m.Client = "login1" })
	wantCodes(t, LoadMultiHostLeg(LegFiles{Name: "r1"}, dir).Reasons, CodeHostSkew)
}

// TestMultiHostWallStep: the wall clock moving MaxWallStepMS against
// mono_s between two readings passes, a millisecond more is
// clock.wall_step; so is a stream without mono_s.
func TestMultiHostWallStep(t *testing.T) {
	ok := mhLeg(t, func(h []mhHost) { h[1].monoShift = -0.049 }, nil)
	wantCodes(t, ok.Reasons)
	l := mhLeg(t, func(h []mhHost) { h[1].monoShift = -0.051 }, nil)
	wantCodes(t, l.Reasons, CodeWallStep)
	wantReason(t, l.Reasons, CodeWallStep, "host node2: hosts/node2.samples.jsonl: the wall clock moved 1.000 s against CLOCK_BOOTTIME's 0.949 s between lines 10 and 11", "a step of 0.051 s > 50 ms")
	l = mhLeg(t, func(h []mhHost) { h[2].noMono = true }, nil)
	wantReason(t, l.Reasons, CodeWallStep, "host node3: hosts/node3.samples.jsonl:1: no mono_s")
}

// TestMultiHostGroupSkew: a slower GPU in the decode group is
// clock.gpu_skew naming both hosts; a prefill role at another clock than
// decode is not (roles are never compared).
func TestMultiHostGroupSkew(t *testing.T) {
	roles := mhLeg(t, func(h []mhHost) { h[0].mhz = 1700 }, nil)
	wantCodes(t, roles.Reasons)
	edge := mhLeg(t, func(h []mhHost) { h[2].mhz = 1961 }, nil) // 19/1961 < 1%
	wantCodes(t, edge.Reasons)
	l := mhLeg(t, func(h []mhHost) { h[2].mhz = 1960 }, nil)
	wantCodes(t, l.Reasons, CodeGPUSkew)
	wantReason(t, l.Reasons, CodeGPUSkew, "group decode: GPU busy medians across hosts differ by 1.02% > 1.0%: host node3 GPU 0 at 1960 MHz (the slowest), host node2 GPU 0 at 1980 MHz")
	one := mhLeg(t, func(h []mhHost) { h[0].mhz = 1700; h[2].mhz = 1960 }, func(m *LegManifest) {
		for i := range m.Hosts {
			m.Hosts[i].Role, m.Hosts[i].Group = "", ""
		}
	})
	wantReason(t, one.Reasons, CodeGPUSkew, "the leg's one group: GPU busy medians across hosts differ by 16.47% > 1.0%: host node1 GPU 0 at 1700 MHz (the slowest)")
}

// TestMultiHostAcrossArms: positions are (host rank, GPU order), so the
// cross-arm checks run per position: a node rebooted between arms is
// clock.cross_boot, a different clock in the prefill role clock.offset at
// position 0, each with the bad arm on either side; two clean arms are
// established.
func TestMultiHostAcrossArms(t *testing.T) {
	arm := func(engine string, fix func(h []mhHost)) *Arm {
		return Merge(engine, []*Leg{mhLeg(t, fix, nil)}, false)
	}
	if b := Compare(arm("a", nil), arm("b", nil), false); !b.Established {
		t.Fatalf("A/A of three hosts: %+v", b.Reasons)
	}
	reboot := func(h []mhHost) { h[1].boot = "0d5e7c1a-2b3c-4d5e-8f90-a1b2c3d4e5f6" }
	prefill := func(h []mhHost) { h[0].mhz = 1940 }
	for _, side := range []string{"ours", "baseline"} {
		for _, tc := range []struct {
			fix  func(h []mhHost)
			code string
			msg  string
		}{
			{reboot, CodeCrossBoot, "node2=0d5e7c1a-2b3c-4d5e-8f90-a1b2c3d4e5f6"},
			{prefill, CodeOffset, "GPU position 0 (host node1, role prefill, GPU 0): median offset 2.0"},
		} {
			o, b := arm("a", tc.fix), arm("b", nil)
			if side == "baseline" {
				o, b = arm("a", nil), arm("b", tc.fix)
			}
			blk := Compare(o, b, false)
			if blk.Established {
				t.Fatalf("%s bad on %s: established", tc.code, side)
			}
			wantReason(t, blk.Reasons, tc.code, tc.msg)
		}
	}
	two := Merge("b", []*Leg{mhLeg(t, nil, func(m *LegManifest) {})}, false)
	dir := t.TempDir()
	writeMHLeg(t, dir, threeHosts(nil)[:2], nil)
	fewer := Merge("a", []*Leg{LoadMultiHostLeg(LegFiles{Name: "r1"}, dir)}, false)
	wantReason(t, Compare(fewer, two, false).Reasons, CodeHardwareMismatch, "a samples 2 GPUs per leg, b 3")
	wantReason(t, Compare(two, fewer, false).Reasons, CodeHardwareMismatch, "b samples 3 GPUs per leg, a 2")
}

// TestMultiHostPointsOnlyWhenSynchronised: the client's marks price every
// host's samples, so a point counts all three hosts' busy samples; where
// clock.host_skew stands, no point is judged on the hosts' samples.
func TestMultiHostPointsOnlyWhenSynchronised(t *testing.T) {
	ev := func() *PointEvidence {
		return &PointEvidence{MarksPath: "points.jsonl", Marks: []Mark{{Point: "1/inf",
			Span: Span{From: windowStart.Add(10 * time.Second).UnixNano(), To: windowStart.Add(29*time.Second + 500*time.Millisecond).UnixNano()}}}}
	}
	for _, tc := range []struct {
		sync *TimeSyncWindow
		busy int
	}{{nil, 60}, {chronySync(150), 0}} {
		dir := t.TempDir()
		writeMHLeg(t, dir, threeHosts(func(h []mhHost) { h[2].sync = tc.sync }), nil)
		l := LoadMultiHostLeg(LegFiles{Name: "r1", Root: dir, Points: ev()}, ".")
		p := l.Points["1/inf"]
		switch {
		case tc.busy == 0 && p != nil:
			t.Fatalf("clock.host_skew stands (%v), yet point 1/inf was judged on the hosts' samples: %+v", Codes(l.Reasons), p)
		case tc.busy > 0 && (p == nil || p.Busy != tc.busy):
			t.Fatalf("point 1/inf %+v, want %d busy samples (20 on each of 3 hosts); reasons %v", p, tc.busy, l.Reasons)
		}
	}
}
