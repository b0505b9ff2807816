package clocks

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"path/filepath"
	"strings"
)

// Leg is one benchmark leg's clock evidence and its verdict: one server
// start, the whole bench loop, one stop.
type Leg struct {
	// Name is the leg's run label, such as "r1"; Engine and Run, when
	// known, name its arm and run number in its reasons.
	Name   string
	Engine string
	Run    int
	// RecordPath and StreamPath are the evidence's paths as messages name
	// them.
	RecordPath string
	StreamPath string
	// Record is the parsed record; nil when missing or invalid.
	Record *Record
	// Fold is the stream's fold; nil unless the record is trusted, that is,
	// present, valid, and recomputed exactly from a valid stream.
	Fold *Fold
	// Reasons are the leg's clock reasons.
	Reasons []Reason
	// Unreadable holds the error when a named input could not be read at
	// all (not a regular file, no permission); the leg then carries
	// clock.invalid or clock.stream_missing as well.
	Unreadable error

	// Points are the leg's point windows (SPEC §10.2) by point label
	// ("8/inf") and what each saw; nil for an untrusted leg or one
	// without windows. PointSource is WindowMarks or WindowVLLMDate when
	// the leg has a source of windows, "" otherwise; PointNotes say why a
	// point has no window; PointWarnings are the leg's window warnings.
	Points        map[string]*LegPoint
	PointSource   string
	PointNotes    map[string]string
	PointWarnings []string
	// BenchPoints, when not nil, are the labels of the points the leg has
	// a bench file for: a point it has none for is not warned about as
	// having no window (it was not run in this leg).
	BenchPoints map[string]bool
	// Hosts are the hosts of a leg in the directory form (SPEC §12.3),
	// in leg.json's order, each judged on its own streams; nil for a
	// single-host leg.
	Hosts []*HostLeg
	// Import is the leg's import.json when its record says stop_reason
	// imported; nil otherwise.
	Import *Import
	// importPath is import.json beside the record, as messages name it,
	// and importOpen as it is opened; read only for an imported record.
	importPath string
	importOpen string
	// hostOpen is the host stream beside the stream, as it is opened.
	hostOpen   string
	pointsPath string
	noSource   string
	evidence   *PointEvidence
}

// Trusted reports whether the leg's clock numbers can be used: its record
// is the one its stream recomputes to.
func (l *Leg) Trusted() bool { return l.Fold != nil }

// Eligible reports whether the leg carries no clock reason.
func (l *Leg) Eligible() bool { return len(l.Reasons) == 0 }

// Reason is a reason about this leg.
func (l *Leg) Reason(code, format string, args ...any) Reason {
	return Reason{Code: code, Message: fmt.Sprintf(format, args...), Scope: ScopeLeg, Engine: l.Engine, Run: l.Run}
}

func (l *Leg) add(code, format string, args ...any) {
	l.Reasons = append(l.Reasons, l.Reason(code, format, args...))
}

// LegFiles names a leg's clock evidence.
type LegFiles struct {
	// Name, Engine and Run label the leg (Engine and Run may be empty).
	Name   string
	Engine string
	Run    int
	// Root, when not empty, is the directory the paths are relative to.
	// Messages name the paths as given, never Root.
	Root       string
	RecordPath string
	StreamPath string
	// Trace asks for the window reduced to a picture's Trace, in the same
	// pass as the fold.
	Trace bool
	// Points, when not nil, is what the tree holds of the leg's point
	// windows; the fold counts each window's samples in the same pass.
	Points *PointEvidence
}

func (lf LegFiles) open(path string) string {
	if lf.Root == "" {
		return path
	}
	return filepath.Join(lf.Root, filepath.FromSlash(path))
}

// NewLeg returns a leg with no evidence read yet, labelled as lf says.
func NewLeg(lf LegFiles) *Leg {
	l := &Leg{Name: lf.Name, Engine: lf.Engine, Run: lf.Run, RecordPath: lf.RecordPath, StreamPath: lf.StreamPath, evidence: lf.Points}
	if lf.Points != nil {
		l.pointsPath = lf.Points.MarksPath
	}
	return l
}

// LoadLeg reads a leg's record and the stream beside it and judges them.
func LoadLeg(lf LegFiles) *Leg {
	l := NewLeg(lf)
	data, err := ReadJSONFile(lf.open(lf.RecordPath))
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			l.add(CodeMissing, "no clock record at %s", lf.RecordPath)
			return l
		}
		if !errors.Is(err, ErrTooLarge) {
			l.Unreadable = err
		}
		l.add(CodeInvalid, "clock record %s: %v", lf.RecordPath, unwrapPath(err))
		return l
	}
	l.importPath = ImportPath(lf.RecordPath)
	l.importOpen = lf.open(l.importPath)
	l.hostOpen = lf.open(HostStreamPath(lf.StreamPath))
	f, err := OpenRegular(lf.open(lf.StreamPath))
	if err != nil {
		l.judge(data, nil, err, lf.Trace)
		return l
	}
	defer f.Close()
	l.judge(data, f, nil, lf.Trace)
	return l
}

// unwrapPath is err without the path an *fs.PathError puts before it:
// messages name the path as the caller gave it.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// JudgeLeg judges a leg from a record's bytes and a stream reader; streamErr
// says why the stream could not be opened, when it could not.
func JudgeLeg(name string, record []byte, stream io.Reader, streamErr error) *Leg {
	l := &Leg{Name: name}
	l.judge(record, stream, streamErr, false)
	return l
}

// JudgeRecord judges a leg whose record is given and whose stream cannot
// be read (streamWhy says why): clock.stream_missing, or clock.invalid
// when the record itself is not valid.
func (l *Leg) JudgeRecord(record []byte, streamWhy string) {
	rec, err := ParseRecord(record)
	if err != nil {
		l.add(CodeInvalid, "clock record %s: %v", l.RecordPath, err)
		return
	}
	l.Record = rec
	l.add(CodeStreamMissing, "no readable clock stream beside the record: %s", streamWhy)
}

func (l *Leg) judge(record []byte, stream io.Reader, streamErr error, trace bool) {
	// import.json's paths serve the judging alone: a leg kept for the
	// outputs of a large tree does not hold them.
	defer func() { l.importPath, l.importOpen, l.hostOpen = "", "", "" }()
	if streamErr != nil {
		if !errors.Is(streamErr, fs.ErrNotExist) {
			l.Unreadable = streamErr
		}
		why := streamErr.Error()
		if l.StreamPath != "" {
			why = fmt.Sprintf("%s: %v", l.StreamPath, unwrapPath(streamErr))
		}
		l.JudgeRecord(record, why)
		return
	}
	rec, err := ParseRecord(record)
	if err != nil {
		l.add(CodeInvalid, "clock record %s: %v", l.RecordPath, err)
		return
	}
	l.Record = rec
	if rec.Window.StopReason == StopImported {
		var data []byte
		err := errors.New("no path: the leg was judged from bytes")
		if l.importOpen != "" {
			data, err = ReadJSONFile(l.importOpen)
		}
		if err != nil {
			l.add(CodeInvalid, "clock record %s: stop_reason %s needs its import.json: %s: %v", l.RecordPath, StopImported, l.importPath, unwrapPath(err))
			return
		}
		im, err := ParseImport(data)
		if err != nil {
			l.add(CodeInvalid, "clock record %s: stop_reason %s: %s: %v", l.RecordPath, StopImported, l.importPath, err)
			return
		}
		l.Import = im
	}
	fold := NewFold()
	if trace {
		fold = NewTracingFold()
	}
	cands := l.pointCandidates(l.evidence, rec)
	times, marks, marksPath := l.evidence.timed()
	l.evidence = nil // read: a large tree keeps nothing of it per leg
	fold.Windows = foldWindows(cands)
	if rec.Host != nil {
		fold.Ticks = newBusyTicks()
	}
	if err := fold.FoldStream(stream, l.StreamPath); err != nil {
		l.add(CodeStreamInvalid, "clock stream %s", ErrorAt(l.StreamPath, err))
		return
	}
	if fold.Total == 0 {
		l.add(CodeStreamInvalid, "clock stream %s: no samples", l.StreamPath)
		return
	}
	if bad := reconcile(rec, fold); len(bad) > 0 {
		l.add(CodeStreamMismatch, "the record is not what its stream recomputes to: %s", strings.Join(bad, "; "))
		return
	}
	if rec.Host != nil && !l.judgeHostStream(rec, fold) {
		return
	}
	fold.Ticks.release()
	fold.Ticks = nil
	l.Fold = fold
	l.settlePoints(cands, fold)
	l.check()
	fold.dropScratch()
	l.checkPointTimes(times, marks, marksPath, fold)
}

// check runs every leg assertion of the contract on a trusted leg and
// reports every failure: each GPU's checks, naming the GPU when the leg
// has several, then the GPUs against each other, then the window's.
func (l *Leg) check() {
	f := l.Fold
	multi := len(f.GPUs) > 1
	for _, g := range f.GPUs {
		pre := ""
		if multi {
			pre = fmt.Sprintf("GPU %d: ", g.Index)
		}
		l.checkGPU(g, pre)
		l.checkPCIe(g)
	}
	if multi {
		l.checkSkew()
	}
	switch l.Record.Window.StopReason {
	case StopMaxDuration:
		l.add(CodePartialWindow, "stop_reason %s: the sampler was cut off at --max-duration before its leg ended; want pid-exit, command-exit or signal",
			StopMaxDuration)
	case StopRebuilt:
		l.add(CodePartialWindow, "stop_reason %s: the record was recomputed from its stream by clockgate build, so where the window ended is unknown; want pid-exit, command-exit or signal",
			StopRebuilt)
	case StopRefused:
		l.add(CodeRefused, "stop_reason %s: the sampler refused mid-window: %s", StopRefused, l.Record.Refusal)
	case StopImported:
		l.checkImported()
	}
	if iv := l.Record.Window.IntervalS; f.MaxGapNS > coverageLimitNS(iv) {
		pre := ""
		if multi {
			pre = fmt.Sprintf("GPU %d: ", f.GapGPU)
		}
		l.add(CodeCoverage, "%slargest gap between samples %.3f s > %d × interval_s %v s = %.3f s: from %s to %s (line %d); the sampler did not read the GPU for that long",
			pre, gapSeconds(f.MaxGapNS), MaxGapIntervals, iv, float64(coverageLimitNS(iv))/1e9, f.GapFrom, f.GapTo, f.GapLine)
	}
	l.checkTenants()
	l.checkExpect()
	l.checkHost()
}

// checkGPU runs the leg assertions on one GPU's samples; pre names the GPU.
func (l *Leg) checkGPU(g *GPUFold, pre string) {
	h := summarize(g.Hist)
	if h.n < MinBusySamples {
		l.add(CodeBusySamples, "%sbusy samples %d < %d: %d idle samples excluded of %d in the window",
			pre, h.n, MinBusySamples, g.Idle, g.Total)
	}
	if !busyFractionWithin(int64(h.n), int64(g.Idle)) {
		l.add(CodeBusyFraction, "%sbusy fraction %d/%d = %.2f%% < %d%%: %d idle samples excluded",
			pre, h.n, g.Total, float64(h.n)*100/float64(g.Total), MinBusyFractionPct, g.Idle)
	}
	pm := g.PowerManaged()
	switch fh := summarize(g.Managed.freeHist()); {
	case pm == 0:
		if h.n >= MinBusySamples && !spreadWithin(int64(h.min), int64(h.max), h.median2) {
			l.add(CodeSpread, "%sspread %.2f%% > %.1f%%: min %d, median %s, max %d MHz, n=%d",
				pre, spreadPct(int64(h.min), int64(h.max), h.median2), MaxSpreadPct, h.min, fmtMedian(h.median2), h.max, h.n)
		}
	case fh.n < MinFreeSamples:
		l.add(CodeFreeSamples, "%sfree busy samples %d < %d: %d of %d busy samples were power-managed (at %s), so the box's unconstrained clock was not observed often enough to judge; sample faster (--interval 250ms) or over a longer window",
			pre, fh.n, MinFreeSamples, pm, h.n, g.Managed.limits())
	case !spreadWithin(int64(fh.min), int64(fh.max), fh.median2):
		msg := fmt.Sprintf("%sspread over free samples %.2f%% > %.1f%%: min %d, median %s, max %d MHz, n=%d free of %d busy (%d power-managed, at %s, excluded)",
			pre, spreadPct(int64(fh.min), int64(fh.max), fh.median2), MaxSpreadPct, fh.min, fmtMedian(fh.median2), fh.max, fh.n, h.n, pm, g.Managed.limits())
		if g.Events == nil && !g.First.AMD() {
			// (AMD's bits come from accumulators read between readings.)
			msg += "; the stream has no event counters, so a power-managed dip between two readings looks free: record clocks_event_reasons_counters (nvidia-smi from driver 590, or NVML) to tell them apart"
		}
		l.add(CodeSpread, "%s", msg)
	}
	var seen uint64
	for b := range g.Throttle {
		seen |= b
	}
	benign, benignNames := BenignThrottleMask, "GpuIdle, ApplicationsClocksSetting, DisplayClockSetting"
	if g.Managed != nil {
		benign, benignNames = benign|SwPowerCapBit, benignNames+"; SwPowerCap is power management at the recorded limit"
	}
	if bad := seen &^ benign; bad != 0 && g.First.AMD() {
		// AMD has no benign bits: every bit is one clockgate derived from
		// an amd-smi violation accumulator that advanced (power-cap time
		// at a recorded limit is power management).
		l.add(CodeThrottle, "%sviolation bits in busy samples: %s (seen %s; derived from amd-smi's violation accumulators advancing between readings: %s)",
			pre, nameAMDBits(bad), strings.Join(g.throttleList(), ", "), nameAMDBits(AMDThrottleBits))
	} else if bad != 0 {
		l.add(CodeThrottle, "%snon-benign throttle bits in busy samples: %s (seen %s; benign mask %s: %s)",
			pre, nameBits(bad), strings.Join(g.throttleList(), ", "), FormatThrottle(benign), benignNames)
	}
	l.checkEvents(g, pre, seen)
	if pm > 0 {
		l.checkHiddenLimit(g, pre, pm)
	}
	if g.persistBad > 0 && !l.unproven(CodeUnprovenPersistence) {
		l.add(CodePersistence, "%spersistence_mode %q in %d of %d samples (first at line %d); want \"Enabled\" in every sample",
			pre, g.persistFirstVal, g.persistBad, g.Total, g.persistFirst)
	}
	if msgs := g.driftMessages(); len(msgs) > 0 {
		l.add(CodeStaticDrift, "%snot constant within the window: %s", pre, strings.Join(msgs, "; "))
	}
}

// checkSkew holds the busy medians of a leg's GPUs within the offset
// bound of each other: a tensor-parallel step runs at the pace of its
// slowest GPU. GPUs under the busy floor have no median worth comparing.
func (l *Leg) checkSkew() {
	var slow, fast *GPUFold
	var slow2, fast2 int64
	for _, g := range l.Fold.GPUs {
		// A GPU's own free clock: its power controller's caps are the
		// engine's draw, not the box's state.
		free, _ := g.Free()
		h := summarize(free)
		if summarize(g.Hist).n < MinBusySamples || h.n < MinFreeSamples {
			continue
		}
		if slow == nil || h.median2 < slow2 {
			slow, slow2 = g, h.median2
		}
		if fast == nil || h.median2 > fast2 {
			fast, fast2 = g, h.median2
		}
	}
	if slow == nil || slow == fast || offsetWithin(fast2, slow2) {
		return
	}
	l.add(CodeGPUSkew, "GPU busy medians differ by %.2f%% > %.1f%%: GPU %d at %s MHz (the slowest), GPU %d at %s MHz; a tensor-parallel step runs at its slowest GPU's pace",
		float64(fast2-slow2)*100/float64(slow2), MaxOffsetPct, slow.Index, fmtMedian(slow2), fast.Index, fmtMedian(fast2))
}

// coverageLimitNS is the largest gap a window sampled every intervalS
// seconds may have, in nanoseconds.
func coverageLimitNS(intervalS float64) int64 {
	return MaxGapIntervals * int64(math.Round(intervalS*1e9))
}

func fmtMedian(median2 int64) string {
	if median2%2 == 0 {
		return fmt.Sprint(median2 / 2)
	}
	return fmt.Sprintf("%d.5", median2/2)
}

// nameBits names every set bit: "0x0000000000000004 SwPowerCap, …".
// nameAMDBits names the bits of set as clockgate derives them for AMD GPUs.
func nameAMDBits(set uint64) string {
	var parts []string
	for set != 0 {
		b := set & -set
		set &^= b
		name, ok := amdBitNames[b]
		if !ok {
			name = "unknown"
		}
		parts = append(parts, fmt.Sprintf("%s %s", FormatThrottle(b), name))
	}
	return strings.Join(parts, ", ")
}

func nameBits(set uint64) string {
	var parts []string
	for set != 0 {
		b := set & -set
		set &^= b
		parts = append(parts, fmt.Sprintf("%s %s", FormatThrottle(b), ThrottleBitName(b)))
	}
	return strings.Join(parts, ", ")
}
