// Command mutants proves that the tests bite: it applies each mutation of
// the contract's checks, one at a time, to a copy of the repository, runs
// the tests of the packages that judge it, and reports whether they went
// red. Every mutation must be killed.
//
// Each mutation replaces one exact snippet that must occur exactly once in
// its file, so a mutation that no longer applies is reported as an error,
// never as a kill. The working tree is never modified.
//
//	go run ./scripts/mutants            # every mutation
//	go run ./scripts/mutants -run M3    # the ones whose id contains M3
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

type mutation struct {
	id, what string
	file     string
	from, to string
	pkgs     []string
}

var clocksPkg = []string{"./clocks/"}

var historyPkg = []string{"./history/"}

// shortHistoryTests are the history tests of the small-history rule.
// shortHistoryCalibration adds the small-history rule's calibration.
var shortHistoryCalibration = []string{"-run=^(TestShortHistory.*|TestCalibrationShortHistory)$", "./history/"}

var shortHistoryTests = []string{"-run=^(TestShortHistory.*|TestRankSumPExact|TestLegsFrom.*|TestHTMLAxisAtLeastMinChange|TestMigrationToLegs)$", "./history/"}

// foreignPkg holds the import's tests: they convert foreign files and
// judge the legs through clocks/, so they kill the judge's import
// mutations too.
var foreignPkg = []string{"./foreign/"}
var gridPkg = []string{"./grid/"}

// livePkg runs summarize's test of the live heap per leg.
var livePkg = []string{"-run=^TestLiveMemoryPerLeg$", "./summarize/"}

// fcPkgs run the tests that judge SPEC §11.1's recording, by name.
var fcPkgs = []string{"-run=^(TestForeignProcess|TestComputeProcessesValidated|TestPortListeners|TestPortListenersRefused|TestHostRSS|TestMemoryPath|TestMemoryPeaks|" +
	"TestSamplerNVMLMemoryUsed|TestSamplerNVMLBindingsABI|TestAMDSMIMemoryUsed|TestAMDSMIRefusesAtStart|TestAMDRealPartition|TestAMDRealOutputs|TestCSVQueryFieldsOrder|" +
	"TestRecordEngineNamed|TestSampleEnginePIDList|TestEngineRefusedAtStart|TestRecordWritesMemory|TestMarkWaitsForTheStream|TestMarkRefuses|" +
	"TestNoLeg|TestNotAnEvidenceTree|TestSummarizeNoLeg|TestHoldRefused|TestHoldOneSlowProbe|TestIntervalTheSamplerCannotHold|TestRecordVerdictNamesTheSignal|TestGolden|TestPointWarningsNameWhatWasRun)$",
	"./clocks/", "./sampler/", "./summarize/", "./cmd/clockgate/"}

var mutations = []mutation{
	{"M1", "the cross-boot refusal removed", "clocks/compare.go",
		"if len(boots) > 1 {", "if false {", clocksPkg},
	{"M2", "within-window spread widened to 1000%", "clocks/contract.go",
		"MaxSpreadBasisPoints = 500", "MaxSpreadBasisPoints = 100000", clocksPkg},
	{"M3", "cross-arm offset widened to 1000%", "clocks/contract.go",
		"MaxOffsetBasisPoints = 100", "MaxOffsetBasisPoints = 100000", clocksPkg},
	{"M4", "throttle mask opened to every bit", "clocks/contract.go",
		"BenignThrottleMask uint64 = 0x1 | 0x2 | 0x100", "BenignThrottleMask uint64 = ^uint64(0)", clocksPkg},
	{"M5", "idle samples counted as busy", "clocks/fold.go",
		"	if r.Idle() {\n		g.Idle++", "	if false {\n		g.Idle++", clocksPkg},
	{"M6", "the straddled-boot fold removed", "clocks/arm.go",
		"if len(a.boots) > 1 {", "if false {", clocksPkg},
	{"M7", "leg clock reasons dropped from the ratio", "clocks/compare.go",
		"if HasClock(l.Reasons) {", "if false {", clocksPkg},
	{"M8", "arm clock reasons dropped from the ratio", "clocks/compare.go",
		"b.Reasons = append(b.Reasons, ours.Reasons...)", "", clocksPkg},
	{"M11", "the missing-record reason removed", "clocks/leg.go",
		`l.add(CodeMissing, "no clock record at %s", lf.RecordPath)`, "", clocksPkg},
	{"M12", "stream/record reconciliation removed", "clocks/leg.go",
		"if bad := reconcile(rec, fold); len(bad) > 0 {", "if bad := reconcile(rec, fold); false {", clocksPkg},
	{"R13", "the busy-sample floor removed", "clocks/leg.go",
		"if h.n < MinBusySamples {\n		l.add(CodeBusySamples", "if false {\n		l.add(CodeBusySamples", clocksPkg},
	{"R14", "the busy-fraction floor removed", "clocks/leg.go",
		"if !busyFractionWithin(int64(h.n), int64(g.Idle)) {", "if false {", clocksPkg},
	{"R15", "the override waives leg state too", "clocks/compare.go",
		"if HasClock(l.Reasons) {", "if HasClock(l.Reasons) && !allowCrossBoot {", clocksPkg},
	{"R15b", "the override waives the staircase", "clocks/arm.go",
		"if g.legs >= 2 && h.n > 0 && !spreadWithin(", "if g.legs >= 2 && h.n > 0 && !allowCrossBoot && !spreadWithin(", clocksPkg},
	{"R16", "the cross-arm STATIC_FIELDS assertion removed", "clocks/compare.go",
		"if len(diff) > 0 {", "if false {", clocksPkg},
	{"R17", "a non-integer idle count accepted", "clocks/record.go",
		`g.IdleSamplesExcluded = o.intMin("idle_samples_excluded", 0)`,
		`g.IdleSamplesExcluded = int(o.num("idle_samples_excluded"))`, clocksPkg},
	{"R18", "the busy-sample floor lowered to 1", "clocks/contract.go",
		"MinBusySamples = 30", "MinBusySamples = 1", clocksPkg},
	{"R19", "the busy-fraction floor lowered to 0", "clocks/contract.go",
		"MinBusyFractionPct = 50", "MinBusyFractionPct = 0", clocksPkg},
	{"R20", "the override waives hardware identity", "clocks/compare.go",
		"if len(diff) > 0 {", "if len(diff) > 0 && !allowCrossBoot {", clocksPkg},
	{"R21", "the merged spread spans the first leg only", "clocks/arm.go",
		"	for _, c := range free {\n", "	for _, c := range free {\n		if g.legs > 0 {\n			break\n		}\n", clocksPkg},
	{"R22", "busy samples not surfaced", "clocks/arm.go",
		"out := ClockStats{BusySamples: busy.n, IdleSamplesExcluded: g.idle}", "out := ClockStats{BusySamples: busy.n * 0, IdleSamplesExcluded: g.idle}", clocksPkg},
	{"R23", "idle samples not surfaced", "clocks/arm.go",
		"out := ClockStats{BusySamples: busy.n, IdleSamplesExcluded: g.idle}", "out := ClockStats{BusySamples: busy.n, IdleSamplesExcluded: 0}", clocksPkg},
	{"X1", "spread evaluated below the busy floor", "clocks/leg.go",
		"if h.n >= MinBusySamples && !spreadWithin(", "if !spreadWithin(", clocksPkg},
	{"X2", "spread boundary made exclusive", "clocks/contract.go",
		"return (max-min)*2*10000 <= MaxSpreadBasisPoints*median2", "return (max-min)*2*10000 < MaxSpreadBasisPoints*median2", clocksPkg},
	{"X3", "offset boundary made exclusive", "clocks/contract.go",
		"return d*10000 <= MaxOffsetBasisPoints*base2", "return d*10000 < MaxOffsetBasisPoints*base2", clocksPkg},
	{"X4", "offset computed in floating point as a quotient", "clocks/contract.go",
		"return d*10000 <= MaxOffsetBasisPoints*base2", "return (float64(ours2)/float64(base2)-1)*100 <= MaxOffsetPct && (float64(base2)/float64(ours2)-1)*100 <= MaxOffsetPct", clocksPkg},
	{"X5", "persistence checked on nothing", "clocks/fold.go",
		`if string(r.Persistence) != "Enabled" && !r.AMD() {`, "if false {", clocksPkg},
	{"X27", "persistence checked on AMD GPUs too", "clocks/fold.go",
		`if string(r.Persistence) != "Enabled" && !r.AMD() {`, `if string(r.Persistence) != "Enabled" {`, clocksPkg},
	{"X28", "an AMD sample's lowest XCD not held to its SM clock", "clocks/parse.go",
		"if sm := int(p.ints[kSMClock]); lowest != sm {", "if sm := int(p.ints[kSMClock]); lowest != sm && false {", clocksPkg},
	{"X6", "within-window drift ignored", "clocks/leg.go",
		"if msgs := g.driftMessages(); len(msgs) > 0 {", "if msgs := g.driftMessages(); false {", clocksPkg},
	{"X7", "the partial window accepted", "clocks/leg.go",
		"	case StopMaxDuration:\n", "	case \"never\":\n", clocksPkg},
	{"X18", "the coverage check removed", "clocks/leg.go",
		"if iv := l.Record.Window.IntervalS; f.MaxGapNS > coverageLimitNS(iv) {", "if iv := l.Record.Window.IntervalS; false && f.MaxGapNS > coverageLimitNS(iv) {", clocksPkg},
	{"X19", "the coverage bound widened to 4 intervals", "clocks/contract.go",
		"MaxGapIntervals = 3", "MaxGapIntervals = 4", clocksPkg},
	{"X20", "a rebuilt record accepted", "clocks/leg.go",
		"	case StopRebuilt:\n", "	case \"never\":\n", clocksPkg},
	{"X21", "a refused window accepted", "clocks/leg.go",
		"	case StopRefused:\n", "	case \"never\":\n", clocksPkg},
	{"X22", "max_gap_s not reconciled", "clocks/record.go",
		"if g := rec.Window.MaxGapS; g != nil && math.Abs(", "if g := rec.Window.MaxGapS; false && g != nil && math.Abs(", clocksPkg},
	{"X8", "a torn final line skipped", "clocks/reader.go",
		"		if torn {\n			perr = fmt.Errorf(", "		if torn {\n			r.done = true\n			return false\n			perr = fmt.Errorf(", clocksPkg},
	{"X9", "n == 0 records accepted", "clocks/record.go",
		`if sm.err == nil && g.SMClockMHz.N == 0 {`, "if false {", clocksPkg},
	{"X10", "empty throttle list accepted", "clocks/record.go",
		"case len(f.Elems) == 0:\n			o.fail(\"throttle_reasons_active\"", "case false:\n			o.fail(\"throttle_reasons_active\"", clocksPkg},
	{"X11", "spread_pct consistency unchecked", "clocks/record.go",
		"if math.Abs(sp-want) > SpreadTolerancePct+1e-9 {", "if false {", clocksPkg},
	{"X12", "min ≤ median ≤ max unchecked", "clocks/record.go",
		"if !(float64(mn) <= md && md <= float64(mx)) {", "if false {", clocksPkg},
	{"X13", "the static mismatch across legs removed", "clocks/arm.go",
		"if vals := g.static[name]; len(vals) > 1 {", "if vals := g.static[name]; false && len(vals) > 1 {", clocksPkg},
	{"X15", "the template fits a line whose literal differs", "clocks/template.go",
		"string(p.b[p.i:p.i+len(sg.lit)]) != string(sg.lit)", "false", clocksPkg},
	{"X16", "the reader takes utilization over 100", "clocks/parse.go",
		"if u := p.ints[kUtilization]; u > 100 {", "if u := p.ints[kUtilization]; u > 1000 {", clocksPkg},
	{"X17", "the reader takes a zero clock", "clocks/parse.go",
		"uint64(ints[kSMClock]-1) >= maxSampleInt", "uint64(ints[kSMClock]) > maxSampleInt", clocksPkg},
	{"X23", "the member cache takes a number a longer one continues", "clocks/parse.go",
		"if c := p.b[end]; c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' {", "if false {", clocksPkg},
	{"X24", "a cached member skips the duplicate check", "clocks/parse.go",
		"string(p.b[p.i:end]) != string(e.text) || p.seen&(1<<e.key) != 0 {", "string(p.b[p.i:end]) != string(e.text) {", clocksPkg},
	{"X25", "a template's hole is not checked for UTF-8", "clocks/template.go",
		"&& !utf8.Valid(p.b[value:p.i])", "&& !utf8.Valid(nil)", clocksPkg},
	{"X26", "a trace keeps one extreme of a bucket", "clocks/trace.go",
		"if k.tBusyHi != k.tBusyLo || k.busyHi != k.busyLo {", "if false {", clocksPkg},
	{"H1", "the baseline arm's reasons dropped from the block", "clocks/compare.go",
		"	b.Reasons = append(b.Reasons, baseline.Reasons...)\n", "", clocksPkg},
	{"H2", "the baseline arm's caveats dropped from the block", "clocks/compare.go",
		"	b.Caveats = append(b.Caveats, baseline.Caveats...)\n", "", clocksPkg},
	{"H3", "the in-tree check without its trailing separator", "summarize/walk.go",
		"strings.HasPrefix(real, w.realRoot+string(filepath.Separator))", "strings.HasPrefix(real, w.realRoot)", []string{"./summarize/"}},
	{"H4", "a new --out DIR made 0700", "cmd/clockgate/outputs.go",
		"	mode := fs.FileMode(0o755)\n", "	mode := fs.FileMode(0o700)\n", []string{"./cmd/clockgate/"}},
	{"H5", "the old outputs removed whole, a foreign file with them", "cmd/clockgate/outputs.go",
		"			cleanupErr = removeOutputs(staging)", "			cleanupErr = os.RemoveAll(staging)", []string{"./cmd/clockgate/"}},
	{"H6", "the exchange's fallback does not restore", "cmd/clockgate/outputs.go",
		"		if rerr := os.Rename(tmp, b); rerr != nil {", "		if rerr := error(nil); rerr != nil {", []string{"./cmd/clockgate/"}},
	{"H7", "a bare name's temporary file made in TMPDIR", "atomicfile/atomicfile.go",
		"	if dir == \"\" {\n		dir = \".\"\n	}\n	f, err := os.CreateTemp(dir,", "	f, err := os.CreateTemp(dir,", []string{"./atomicfile/"}},
	{"H8", "the bench reader takes a backslash for a plain byte", "benchfmt/read.go",
		"			if c == '\"' || c == '\\\\' || c < 0x20 || c >= 0x80 {", "			if c == '\"' || c < 0x20 || c >= 0x80 {", []string{"./benchfmt/"}},
	{"G1", "clock.gpu_skew removed", "clocks/leg.go",
		"	if multi {\n		l.checkSkew()\n	}\n", "", clocksPkg},
	{"G2", "the GPU skew widened by a percent", "clocks/leg.go",
		"|| offsetWithin(fast2, slow2) {", "|| offsetWithin(fast2*99/100, slow2) {", clocksPkg},
	{"G3", "the mean offset never fails", "clocks/arm.go",
		"x.meanOK = meanOffsetWithin(", "x.meanOK = true || meanOffsetWithin(", clocksPkg},
	{"G4", "legs of one arm on other GPUs accepted", "clocks/arm.go",
		"if len(gpuSets) > 1 && (a.multi || len(a.gpus) > 1) {", "if false {", clocksPkg},
	{"G5", "arms of different GPU counts compared", "clocks/compare.go",
		"if len(ours.gpus) != len(baseline.gpus) {", "if false && len(ours.gpus) != len(baseline.gpus) {", clocksPkg},
	{"G6", "the offset of the first GPU position only", "clocks/compare.go",
		"for k := range min(len(ours.gpus), len(baseline.gpus)) {\n		x, ok := compareGPU(", "for k := range min(len(ours.gpus), len(baseline.gpus), 1) {\n		x, ok := compareGPU(", clocksPkg},
	{"G7", "leg checks on the first GPU only", "clocks/leg.go",
		"	for _, g := range f.GPUs {\n		pre := \"\"", "	for _, g := range f.GPUs[:1] {\n		pre := \"\"", clocksPkg},
	{"G8", "the staircase on GPU position 0 only", "clocks/arm.go",
		"		for k, g := range a.gpus {\n			// The box's state across legs", "		for k, g := range a.gpus[:1] {\n			// The box's state across legs", clocksPkg},
	{"G10", "coverage of the stream's rows, not of each GPU's", "clocks/fold.go",
		"		take(g.gap, g.gapLine, g.gapFrom, g.gapTo)\n", "", clocksPkg},
	{"G11", "a GPU unread at the window's end not counted", "clocks/fold.go",
		"nsBetween(g.prevSec, g.prevNsec, f.lastSec, f.lastNsec)", "nsBetween(g.prevSec, g.prevNsec, g.prevSec, g.prevNsec)", clocksPkg},
	{"G12", "interval_s not held to the stream's spacing", "clocks/record.go",
		"		if lhs.Cmp(rhs) <= 0 {", "		if lhs.Cmp(rhs) <= 0 || true {", clocksPkg},
	{"G13", "interval_s allowed ten times the spacing", "clocks/contract.go",
		"MaxIntervalOfMeanGapPct = 110", "MaxIntervalOfMeanGapPct = 1000", clocksPkg},
	{"G9", "the mean offset of a leg's samples read as its median", "clocks/arm.go",
		"meanOffsetWithin(o.freeSum, int64(oh.n), b.freeSum, int64(bh.n))", "offsetWithin(oh.median2, bh.median2)", clocksPkg},
	// Power-managed clocks (SPEC §10.1): each check, and each threshold
	// widened, with the bad input on either side.
	{"P1", "SwPowerCap is power management even with no recorded limit", "clocks/leg.go",
		"	if g.Managed != nil {\n		benign, benignNames = benign|SwPowerCapBit", "	if true {\n		benign, benignNames = benign|SwPowerCapBit", clocksPkg},
	{"P2", "SwPowerCap at a recorded limit stays a throttle", "clocks/leg.go",
		"benign, benignNames = benign|SwPowerCapBit,", "benign, benignNames = benign,", clocksPkg},
	{"P3", "the free-sample floor removed", "clocks/leg.go",
		"	case fh.n < MinFreeSamples:", "	case false:", clocksPkg},
	{"P4", "the free-sample floor lowered to 29", "clocks/contract.go",
		"MinFreeSamples = MinBusySamples", "MinFreeSamples = MinBusySamples - 1", clocksPkg},
	{"P5", "the free spread removed", "clocks/leg.go",
		"	case !spreadWithin(int64(fh.min), int64(fh.max), fh.median2):", "	case false:", clocksPkg},
	{"P6", "the spread of a power-managed window over every busy sample", "clocks/leg.go",
		"	case pm == 0:", "	case true:", clocksPkg},
	{"P7", "a capped sample classified by its bits alone", "clocks/power.go",
		"	if p.bitPM || p.advancedPrev || advancedNext && p.sm < p.max {", "	if p.bitPM {", clocksPkg},
	{"P8", "a reading at the ceiling before a cap counted power-managed", "clocks/power.go",
		"advancedNext && p.sm < p.max {", "advancedNext && p.sm <= p.max {", clocksPkg},
	{"P9", "the free offset taken over every busy sample", "clocks/arm.go",
		"	oh, bh := summarizeMap(o.free), summarizeMap(b.free)", "	oh, bh := summarizeMap(o.hist), summarizeMap(b.hist)", clocksPkg},
	{"P10", "the staircase over every busy sample", "clocks/arm.go",
		"			h := summarizeMap(g.free)", "			h := summarizeMap(g.hist)", clocksPkg},
	{"P11", "the counters' non-benign time ignored", "clocks/power.go",
		"	if len(parts) > 0 {\n		l.add(CodeThrottle", "	if false {\n		l.add(CodeThrottle", clocksPkg},
	{"P12", "a counter going backwards ignored", "clocks/power.go",
		"		if e.BackLine != 0 {", "		if false {", clocksPkg},
	{"P13", "the hidden-limit check removed", "clocks/leg.go",
		"	if pm > 0 {\n		l.checkHiddenLimit(g, pre, pm)", "	if false {\n		l.checkHiddenLimit(g, pre, pm)", clocksPkg},
	{"P14", "the hidden-limit bound widened to 90%", "clocks/contract.go",
		"HiddenLimitPct = 95", "HiddenLimitPct = 90", clocksPkg},
	{"P15", "the thermal-start bound widened to 4 °C", "clocks/contract.go",
		"MaxThermalStartDeltaC = 3", "MaxThermalStartDeltaC = 4", clocksPkg},
	{"P16", "the thermal-start check removed", "clocks/compare.go",
		"		if d <= 2*100*MaxThermalStartDeltaC {", "		if true {", clocksPkg},
	{"P25", "the thermal-start bound taken as strict", "clocks/compare.go",
		"		if d <= 2*100*MaxThermalStartDeltaC {", "		if d < 2*100*MaxThermalStartDeltaC {", clocksPkg},
	{"P17", "the power limits not compared across arms", "clocks/compare.go",
		"				for _, name := range staticNames {", "				for _, name := range StaticFields {", clocksPkg},
	{"P18", "the power limits not compared across an arm's legs", "clocks/arm.go",
		"			for _, name := range staticNames {", "			for _, name := range StaticFields {", clocksPkg},
	{"P19", "a limit changing within the window ignored", "clocks/fold.go",
		"	if (r.HasPowerLimit || r.HasModuleLimit || g.Managed != nil || g.First.ModuleEnforcedPowerLimitW != nil) && !sameLimits(g.First, r) {",
		"	if false {", clocksPkg},
	{"P20", "the record's free clock not reconciled", "clocks/record.go",
		"		bad = append(bad, reconcilePower(pre, rg, g)...)", "", clocksPkg},
	{"P22", "counters that begin after the first row ignored", "clocks/power.go",
		"	if g.Events == nil && r.HasCounters {", "	if false {", clocksPkg},
	{"P23", "a module limit without the GPU's own accepted", "clocks/parse.go",
		"	if p.hasFloat&(1<<kModuleLimit) != 0 && p.hasFloat&(1<<kPowerLimit) == 0 {", "	if false {", clocksPkg},
	{"P24", "the hidden limit compared at or under the bound", "clocks/power.go",
		"	return new(big.Rat).Mul(decimal(w), big.NewRat(100, 1)).Cmp(l) < 0", "	return new(big.Rat).Mul(decimal(w), big.NewRat(100, 1)).Cmp(l) <= 0", clocksPkg},
	{"P21", "the module limit left out of the lowest limit", "clocks/power.go",
		"	if m.ModuleLimitW != nil && *m.ModuleLimitW < w {", "	if false {", clocksPkg},
	{"S1", "a vbios_version change within a window not drift", "clocks/fold.go",
		"	if (r.HasVbios || g.First.VbiosVersion != nil) && !sameVbios(g.First, r) {", "	if false {", clocksPkg},
	{"S2", "vbios_version left out of the static fields", "clocks/record.go",
		"wattsOrAbsent(g.ModuleEnforcedPowerLimitW), quotedOrAbsent(g.VbiosVersion), quotedOrAbsent(g.EnergyScope)}", "wattsOrAbsent(g.ModuleEnforcedPowerLimitW), \"absent\", quotedOrAbsent(g.EnergyScope)}", clocksPkg},
	{"S3", "an empty vbios_version read as a value", "clocks/parse.go",
		"		hasVbios && len(r.Vbios) == 0 ||", "		false ||", clocksPkg},
	{"S4", "the foreign-process check removed", "clocks/tenants.go",
		"			if p.Proc != ProcForeign {\n				continue", "			if true {\n				continue", clocksPkg},
	{"S5", "compute_processes.own not checked against the processes", "clocks/tenants.go",
		"			if !marked[pid] {", "			if false {", clocksPkg},
	{"S6", "a visible pid outside the sampler's tree counted as its own", "sampler/tenants.go",
		"		case visible:\n			p.Proc = clocks.ProcForeign", "		case visible:\n			p.Proc = clocks.ProcOwn", []string{"./sampler/", "./cmd/clockgate/"}},
	{"S7", "descendants of the sampler's roots not its own", "sampler/tenants.go",
		"		if own[p] {\n			own[pid] = true", "		if false {\n			own[pid] = true", []string{"./sampler/"}},
	{"S8", "a 590 driver read with the 13.0 slowdown field ids", "sampler/nvml.go",
		"	if branch >= nvmlCounterIDsBranch {", "	if branch > nvmlCounterIDsBranch {", []string{"./sampler/"}},
	{"S9", "NVML's ns counters recorded as µs unconverted", "sampler/nvml.go",
		"	us := ns / nvmlCounterNSPerUS", "	us := ns", []string{"./sampler/"}},
	{"S10", "counters dropped at open not all five", "sampler/nvml.go",
		"			if _, _, err := n.readFields(n.gpus[i], dev, n.reqs); err != nil {\n				n.counters = false", "			if _, _, err := n.readFields(n.gpus[i], dev, n.reqs); err != nil {\n				n.counters = true", []string{"./sampler/"}},
	{"B1", "a bench file's syntax error ends its reading", "benchfmt/read.go",
		"		case more:\n			continue\n", "		case false:\n			continue\n", []string{"./benchfmt/"}},
	{"B2", "the syntax errors read past raised by one", "benchfmt/read.go",
		"const maxSyntaxErrors = 10", "const maxSyntaxErrors = 11", []string{"./benchfmt/"}},
	{"B3", "a bench file read on past a NUL byte", "benchfmt/read.go",
		"		case c == 0:\n			return false, true\n", "", []string{"./benchfmt/"}},
	{"B4", "the count ceiling raised to 2^41", "benchfmt/vllm.go",
		"const maxCountBits = 40", "const maxCountBits = 41", []string{"./benchfmt/"}},
	{"B5", "the --out DIR not skipped while empty", "summarize/walk.go",
		"		if err == nil && real == w.realOut {\n			return true\n		}\n", "", []string{"./summarize/", "./cmd/clockgate/"}},
	{"B6", "an empty directory on the way to --out a warning", "summarize/walk.go",
		"(len(es) == 0 && !onPath)", "len(es) == 0", []string{"./summarize/", "./cmd/clockgate/"}},
	{"B7", "a request rate in plain decimals at every magnitude", "ratio/point.go",
		"	case r >= plainRateMin && r < plainRateMax:\n", "	case r > 0:\n", []string{"./ratio/"}},
	{"B8", "memory.invalid without what to do", "summarize/memory.go",
		`return nil, fmt.Sprintf("%s: %s; %s", rel, strings.Join(bad, "; "), hintMemValue)`, `return nil, fmt.Sprintf("%s: %s", rel, strings.Join(bad, "; "))`, []string{"./summarize/"}},
	{"B9", "a refused link without what to do", "summarize/walk.go",
		"refused unread; \" +\n	\"put the file or directory itself in its place (copy it into the tree), or remove the link\")", "refused unread\")", []string{"./summarize/"}},
	{"X14", "duplicate keys accepted", "strictjson/strictjson.go",
		"if _, dup := v.Fields[k]; dup {", "if false {", []string{"./strictjson/", "./clocks/"}},
	{"HI1", "the detection's p bound raised tenfold", "history/edivisive.go",
		"const DefaultP = 0.001", "const DefaultP = 0.01", historyPkg},
	{"HI2", "the merge keeps a change at the bound", "history/edivisive.go",
		"if cps[weakest].P < p {", "if cps[weakest].P <= p {", historyPkg},
	{"HI3", "NOT ESTABLISHED values detected on", "history/series.go",
		"		if p.Established {\n			idx = append(idx, i)", "		if p.Established || !p.Established {\n			idx = append(idx, i)", historyPkg},
	{"HI4", "the attribution ignores the direction", "history/series.go",
		"if dt == 0 || dc == 0 || (dt < 0) != (dc < 0) {", "if dt == 0 || dc == 0 {", historyPkg},
	{"HI5", "the attribution's share lowered to a quarter", "history/series.go",
		"const AttributionSharePct = 50", "const AttributionSharePct = 25", historyPkg},
	{"HI6", "the attribution's boundary made exclusive", "history/series.go",
		"return math.Abs(dc)*tpBefore*100 >= AttributionSharePct*math.Abs(dt)*clkBefore", "return math.Abs(dc)*tpBefore*100 > AttributionSharePct*math.Abs(dt)*clkBefore", historyPkg},
	{"HI7", "an arm reason leaves the engine's series established", "history/grid.go",
		"				est = est && !isArm", "				est = est || isArm && false", historyPkg},
	{"HI8", "the transfer fitted below the clock span", "history/series.go",
		"if (hi-lo)*100 < TransferMinSpanPct*lo {", "if false {", historyPkg},
	{"HI9", "a SQLite write that met SQLITE_BUSY not tried again", "history/store.go",
		"		if err == nil || !isBusy(err) || time.Now().After(deadline) {", "		if _ = deadline; true {", historyPkg},
	{"H2-1", "the segmentation's split kept by the normal p of its own statistic", "history/calibrated.go",
		"if !(calibratedP(b-a, z) < d.P) {", "if !(math.Erfc(z/math.Sqrt2) < d.P) {", historyPkg},
	{"H2-2", "the permutation p without its +1", "history/calibrated.go",
		"return float64(1+len(s)-at) / float64(len(s)+1)", "return float64(len(s)-at) / float64(len(s)+1)", historyPkg},
	{"H2-3", "the null drawn from 200 orderings", "history/calibrated.go",
		"const NullDraws = 20000", "const NullDraws = 200", historyPkg},
	{"H2-4", "the prediction interval at 99%", "history/check.go",
		"const PredictionLevel = 0.999", "const PredictionLevel = 0.99", historyPkg},
	{"H2-5", "a confidence interval of the mean instead of a prediction interval", "history/check.go",
		"half := q * sd * math.Sqrt(1+1/n)", "half := q * sd * math.Sqrt(1/n)", historyPkg},
	{"H2-6", "the prediction interval's edges made exclusive", "history/check.go",
		"inside := lo <= j.Newest.Value && j.Newest.Value <= hi", "inside := lo < j.Newest.Value && j.Newest.Value < hi", historyPkg},
	{"H2-7", "a last segment of 7 values given an interval", "history/check.go",
		"const MinSegment = 8", "const MinSegment = 7", historyPkg},
	{"H2-8", "the last segment taken from the first value, past change points", "history/check.go",
		"		from = cs[len(cs)-1].Index", "		from = 0", historyPkg},
	{"H2-9", "MEMORY judged as lower is worse", "history/check.go",
		"case metric == MetricThroughputRatio, metric == MetricPointRatio, metric == MetricThroughput:", "case metric == MetricThroughputRatio, metric == MetricPointRatio, metric == MetricThroughput, strings.HasPrefix(m, \"MEMORY\"):", historyPkg},
	{"H2-10", "ENERGY judged as lower is worse", "history/check.go",
		"case metric == MetricThroughputRatio, metric == MetricPointRatio, metric == MetricThroughput:", "case metric == MetricThroughputRatio, metric == MetricPointRatio, metric == MetricThroughput, strings.HasPrefix(m, \"ENERGY\"):", historyPkg},
	{"H2-11", "the direction ignored: every drop a regression", "history/check.go",
		"if (pct < 0) == (dir == LowerWorse) {", "if pct < 0 {", historyPkg},
	{"H2-12", "an engine's throughput judged as higher is worse", "history/check.go",
		"case metric == MetricThroughputRatio, metric == MetricPointRatio, metric == MetricThroughput:", "case metric == MetricThroughputRatio, metric == MetricPointRatio:\n		return LowerWorse, nil\n	case metric == MetricThroughput:\n		return HigherWorse, nil", historyPkg},
	{"H2-13", "a NOT ESTABLISHED newest grid does not fail the check", "history/check.go",
		"	case VerdictNotEstablished:\n		return !c.AllowUnestablished", "	case VerdictNotEstablished:\n		return false", historyPkg},
	{"H2-14", "a NOT ESTABLISHED newest value judged as a value", "history/check.go",
		"	if !j.Newest.Established {\n		j.Verdict = VerdictNotEstablished", "	if false {\n		j.Verdict = VerdictNotEstablished", historyPkg},
	{"H2-15", "--min-change met at the bound", "history/check.go",
		"func beyond(pct, minChangePct float64) bool { return math.Abs(pct) > minChangePct }", "func beyond(pct, minChangePct float64) bool { return math.Abs(pct) >= minChangePct }", historyPkg},
	{"H2-16", "an improvement fails the check", "history/check.go",
		"	case VerdictRegression:\n		return true", "	case VerdictRegression, VerdictImprovement:\n		return true", historyPkg},
	{"H2-17", "the box never moved at the newest grid", "history/check.go",
		"BoxMoved: boxMoved(tpBefore, newest.Value, before, now)}", "BoxMoved: false}", historyPkg},
	{"H2-18", "a change point at the newest grid ignored", "history/check.go",
		"		if ch.Index != last {", "		if true {", historyPkg},
	{"H2-19", "the calibration dropped: every p the normal p of the chosen split's own statistic", "history/calibrated.go",
		"func calibratedP(n int, z float64) float64 {\n", "func calibratedP(n int, z float64) float64 {\n\tif n >= 2 {\n\t\treturn math.Erfc(z / math.Sqrt2)\n\t}\n", historyPkg},
	// The history check's small-history rule (SPEC §12.1.1).
	{"HS1", "the small-history rule's level widened to 0.03", "history/check.go",
		"const LegAlpha = 0.02", "const LegAlpha = 0.03", shortHistoryTests},
	{"HS2", "the small-history rule's level narrowed to 0.01 (4 legs a side never reach it)", "history/check.go",
		"const LegAlpha = 0.02", "const LegAlpha = 0.01", shortHistoryTests},
	{"HS3", "3 legs a side enough for the small-history rule", "history/check.go",
		"const MinLegsPerSide = 4", "const MinLegsPerSide = 3", shortHistoryTests},
	{"HS4", "the small-history rule without its rank test", "history/check.go",
		"	case worse < LegAlpha && moved == VerdictRegression && beyond(j.MagnitudePct, minChangePct):", "	case moved == VerdictRegression && beyond(j.MagnitudePct, minChangePct):", shortHistoryTests},
	{"HS5", "the small-history rule without --min-change on the medians", "history/check.go",
		"	case worse < LegAlpha && moved == VerdictRegression && beyond(j.MagnitudePct, minChangePct):", "	case worse < LegAlpha && moved == VerdictRegression:", shortHistoryTests},
	{"HS6", "an insufficient series does not fail the check", "history/check.go",
		"		return !c.AllowShortHistory", "		return false", shortHistoryTests},
	{"HS7", "any legs at all judged by the small-history rule", "history/check.go",
		"	if len(newest) < MinLegsPerSide || len(before) < MinLegsPerSide {", "	if len(newest) == 0 || len(before) == 0 {", shortHistoryTests},
	{"HS8", "a short history called stable, its legs not tested", "history/check.go",
		"		return s.judgeLegs(j, dir, j.Newest.Legs, before, len(seg), minChangePct)",
		"		j.Verdict = VerdictStable\n		return j", shortHistoryTests},
	{"HS9", "a series' first grid not new", "history/check.go",
		"	if last == 0 {\n		j.Verdict = VerdictNew", "	if false {\n		j.Verdict = VerdictNew", shortHistoryTests},
	{"HS10", "no established grid before the newest called stable", "history/check.go",
		"		j.Verdict = VerdictInsufficient\n		j.How = fmt.Sprintf(\"no established grid", "		j.Verdict = VerdictStable\n		j.How = fmt.Sprintf(\"no established grid", shortHistoryTests},
	{"HS11", "a point ratio's legs not divided by the baseline's median", "history/legs.go",
		"		out = append(out, v/bm)", "		out = append(out, v)", shortHistoryTests},
	{"HS12", "a THROUGHPUT ratio leg the product of its points' ratios, not their geometric mean", "history/legs.go",
		"		out = append(out, math.Exp(logSum/float64(len(common))))", "		out = append(out, math.Exp(logSum))", shortHistoryTests},
	{"HS13", "MEMORY's and ENERGY's worse direction ignored by the small-history rule", "history/check.go",
		"	if dir == HigherWorse {\n		worse, better = greater, less", "	if false {\n		worse, better = greater, less", shortHistoryTests},
	{"HS14", "history.html's axis not widened to --min-change", "history/output.go",
		"	lo, hi = math.Min(lo, m-half), math.Max(hi, m+half)", "	_, _ = m, half", shortHistoryTests},
	{"HS15", "a value's legs not kept in the history", "history/store.go",
		"		for i, l := range v.Legs {", "		for i, l := range v.Legs[:0] {", shortHistoryTests},
	{"HS16", "a kept bench point's request_rate \"inf\" not read: no legs at unbounded rates", "history/legs.go",
		"	case rr.Kind == strictjson.String && (rr.Str == \"inf\" || rr.Str == \"Infinity\"):", "	case false:", shortHistoryTests},
	{"HS17", "the small-history rule's lower side tests any move, not one beyond --min-change", "history/check.go",
		"	less, _ := rankSumP(newest, shifted(before, 1-minChangePct/100))", "	less, _ := rankSumP(newest, before)", shortHistoryCalibration},
	{"HS18", "the small-history rule's upper side tests any move, not one beyond --min-change", "history/check.go",
		"	_, greater := rankSumP(newest, shifted(before, 1+minChangePct/100))", "	_, greater := rankSumP(newest, before)", shortHistoryCalibration},
	{"W1", "the point's free median offset not held", "clocks/points.go",
		"medianOK := offsetWithin(oh.median2, bh.median2)", "medianOK := true", clocksPkg},
	{"W2", "the point's free mean offset not held", "clocks/points.go",
		"meanOK := meanOffsetWithin(sides[0].freeSum, int64(oh.n), sides[1].freeSum, int64(bh.n))", "meanOK := true", clocksPkg},
	{"W3", "a point judged on fewer than 30 free samples", "clocks/points.go",
		"if oh.n < MinFreeSamples || bh.n < MinFreeSamples {", "if false {", clocksPkg},
	{"W4", "a window's start made exclusive", "clocks/points.go",
		"return t >= s.From && t <= s.To", "return t > s.From && t <= s.To", clocksPkg},
	{"W5", "a date window's end at the date itself", "clocks/points.go",
		"return Span{From: at + dateSlackNS - durNS, To: at - dateSlackNS}, \"\"", "return Span{From: at + dateSlackNS - durNS, To: at}, \"\"", clocksPkg},
	{"W6", "a date window of exactly 2 s kept", "clocks/points.go",
		"if durNS <= MinPointDurationNS {", "if durNS < MinPointDurationNS {", clocksPkg},
	{"W7", "dates that fit both zones read in the host's", "clocks/points.go",
		"		if len(fit) != 1 {", "		if len(fit) == 0 {", clocksPkg},
	{"W8", "UTC not a candidate zone", "clocks/points.go",
		"	return []candidate{hc, uc}", "	return []candidate{hc}", clocksPkg},
	{"W9", "the host's named zone ignored (its offset at the first sample for every date)", "clocks/points.go",
		"if loc, err := time.LoadLocation(w.TimeZone); err == nil {", "if loc, err := time.LoadLocation(w.TimeZone); false && err == nil {", clocksPkg},
	{"W10", "clock.point_offset leaves THROUGHPUT binding", "ratio/ratio.go",
		"len(output) == 0 && len(pointClock) == 0 &&", "len(output) == 0 &&", []string{"./summarize/"}},
	{"W11", "overlapping date windows trusted", "clocks/points.go",
		"			if i < j && use.spans[i].overlaps(use.spans[j]) {", "			if false {", clocksPkg},
	{"I1", "an unknown nvidia-smi column read as ignored", "foreign/smicsv.go",
		`return nil, refuse(path, line, col, "unknown column %q: not a --query-gpu field clockgate knows", name)`, "return &field{name: name, col: col}, nil", foreignPkg},
	{"I2", "a header unit contradicting nvidia-smi's accepted", "foreign/smicsv.go",
		`if unit != "" && unit != want {`, "if false {", foreignPkg},
	{"I3", "values mixing printed and bare units accepted", "foreign/columns.go",
		"if f.form != 0 && f.form != form {", "if false {", foreignPkg},
	{"I4", "local times without --tz read as UTC", "foreign/columns.go",
		"if o.TZ == nil {", "if o.TZ == nil {\n\t\to.TZ = time.UTC\n\t}\n\tif false {", foreignPkg},
	{"I5", "time going backwards per GPU accepted", "foreign/foreign.go",
		"case r.t.Before(p.t):", "case false:", foreignPkg},
	{"I6", "several GPUs without index or UUID read as one", "foreign/foreign.go",
		`case k == "" && r.t.Equal(p.t):`, "case false:", foreignPkg},
	{"I7", "N/A sentinels where a value is required read as absent", "foreign/columns.go",
		"		if f.required() {", "		if false {", foreignPkg},
	{"I8", "a header changing mid-file accepted", "foreign/smicsv.go",
		"if !sameCells(cells, header) {", "if false {", foreignPkg},
	{"I9", "no time column accepted without --start/--interval", "foreign/smicsv.go",
		"if seen[roleTime] == nil && o.Interval == 0 {", "if false {", foreignPkg},
	{"I10", "no utilization accepted without --busy-above-mhz", "foreign/smicsv.go",
		"if seen[roleUtil] == nil && o.BusyAboveMHz == 0 {", "if false {", foreignPkg},
	{"I11", "DCGM blank sentinels read as values", "foreign/prom.go",
		"if dcgmBlank(x) {", "if false {", foreignPkg},
	{"I12", "a contradicting unit in a value read past", "foreign/columns.go",
		"if _, num := parseNumber(v[:i]); num {", "if false {", foreignPkg},
	{"I13", "--busy-above-mhz counts a sample at N busy", "foreign/foreign.go",
		"return r.sm > o.BusyAboveMHz", "return r.sm >= o.BusyAboveMHz", foreignPkg},
	{"I14", "clock.unproven_throttle never raised", "foreign/foreign.go",
		"if !c.masked {", "if false {", foreignPkg},
	{"I15", "dmon's header change accepted", "foreign/dmon.go",
		`case fs != nil && (equalWords(words, names) || equalWords(words, unitWords(fs, names))):`, "case fs != nil:", foreignPkg},
	{"I16", "boot proof: a counter going back accepted", "clocks/imported.go",
		"case first < last:", "case false:", foreignPkg},
	{"I17", "boot proof: a counter at exactly the gap's worth accepted", "clocks/imported.go",
		"case !(last > bound):", "case !(last >= bound):", foreignPkg},
	{"I18", "boot proof: energy bounded by the first leg's power only", "clocks/imported.go",
		"if p != nil && (math.IsNaN(power) || *p > power) {", "if p != nil && math.IsNaN(power) {", foreignPkg},
	{"I19", "clock.unproven_boot never raised", "clocks/compare.go",
		`if msg := unprovenBoot(ours, baseline); msg != "" {`, `if msg := unprovenBoot(ours, baseline); false && msg != "" {`, foreignPkg},
	{"I20", "an imported leg's unproven reasons not raised", "clocks/leg.go",
		"	case StopImported:\n		l.checkImported()", "	case StopImported:", foreignPkg},
	{"I21", "persistence never judged on an imported leg", "clocks/leg.go",
		"if g.persistBad > 0 && !l.unproven(CodeUnprovenPersistence) {", "if g.persistBad > 0 && l.Import == nil {", foreignPkg},
	{"I22", "boot proof: overlapping windows accepted", "clocks/imported.go",
		"	if gap < 0 {", "	if false {", foreignPkg},
	{"I24", "an event counter column covers no bit", "foreign/smicsv.go",
		"			c.covered |= bit\n", "			_ = bit\n", foreignPkg},
	{"I25", "a per-reason column covers no bit", "foreign/smicsv.go",
		"			c.covered |= f.bit\n", "", foreignPkg},
	{"I23", "a node_boot_time_seconds that changed within the window taken as the boot", "foreign/prom.go",
		"if old, seen := bootTimes[host]; seen && old != x {", "if old, seen := bootTimes[host]; false && seen && old != x {", foreignPkg},
	{"G2-1", "a device selector in an engine's env accepted", "grid/plan.go",
		"				if k == sel {", "				if false && k == sel {", gridPkg},
	{"G2-2", "abba with odd repeats accepted", "grid/plan.go",
		"		if p.Repeats%2 != 0 {", "		if false {", gridPkg},
	{"G2-3", "repeats at the floor refused", "grid/plan.go",
		"if p.Repeats < MinRepeats && !p.AllowUnderpowered {", "if p.Repeats <= MinRepeats && !p.AllowUnderpowered {", gridPkg},
	{"G2-4", "repeats under the floor accepted without allow_underpowered", "grid/plan.go",
		"if p.Repeats < MinRepeats && !p.AllowUnderpowered {", "if false {", gridPkg},
	{"G2-5", "an unknown placeholder accepted", "grid/plan.go",
		"			if !known {", "			if false {", gridPkg},
	{"G2-6", "a point's placeholder accepted in serve", "grid/plan.go",
		"			if !bench && pointPlaceholders[name] {", "			if false {", gridPkg},
	{"G2-7", "a zero max_wait accepted", "grid/plan.go",
		"	if err != nil || d <= 0 {\n		l, c := at(\"cooldown\", \"max_wait\")", "	if err != nil {\n		l, c := at(\"cooldown\", \"max_wait\")", gridPkg},
	{"G2-8", "a missing max_wait accepted (unbounded)", "grid/plan.go",
		"	if cd.MaxWait == nil {", "	if cd.MaxWait == nil {\n		cd.MaxWait = new(string)\n		*cd.MaxWait = \"87600h\"\n	}\n	if cd.MaxWait == nil {", gridPkg},
	{"G2-9", "strict mode off: an arm may carry keys the others lack", "grid/plan.go",
		".DisallowUnknownFields()", "", gridPkg},
	{"G2-10", "the idle gate's temperature bound removed", "grid/gate.go",
		"		if !within(last.c[i], target) {", "		if false {", gridPkg},
	{"G2-11", "the idle gate's target raised a tenth of a degree", "grid/gate.go",
		"		target := g.idle[i] + g.p.Cooldown.AboveIdleC\n", "		target := g.idle[i] + g.p.Cooldown.AboveIdleC + 0.1\n", gridPkg},
	{"G2-12", "the idle gate's slope bound removed", "grid/gate.go",
		"		if !within(abs(slopes[i]), g.p.Cooldown.MaxSlopeCPerMin) {", "		if false {", gridPkg},
	{"G2-13", "a GPU still cooling fast let start", "grid/gate.go",
		"		if !within(abs(slopes[i]), g.p.Cooldown.MaxSlopeCPerMin) {", "		if !within(slopes[i], g.p.Cooldown.MaxSlopeCPerMin) {", gridPkg},
	{"G2-14", "a slope of less than the window trusted", "grid/gate.go",
		"	if !covered && len(why) == 0 {", "	if !covered && len(why) < 0 {", gridPkg},
	{"G2-15", "the cooldown wait unbounded", "grid/gate.go",
		"		if !g.now().Before(deadline) {\n			return tc, sl, wait, stopped(", "		if false && !g.now().Before(deadline) {\n			return tc, sl, wait, stopped(", []string{"-run=TestGridCooldownTimeout", "-timeout=120s", "./grid/cmdtest/"}},
	{"G2-16", "points never reversed on even blocks", "grid/order.go",
		"		if b%2 == 0 {\n			slices.Reverse(points)", "		if false {\n			slices.Reverse(points)", gridPkg},
	{"G2-17", "abba run as ABAB", "grid/order.go",
		"rows = [][]int{{0, 1}, {1, 0}}", "rows = [][]int{{0, 1}, {0, 1}}", gridPkg},
	{"G2-18", "a Williams design of odd size without its mirror rows", "grid/order.go",
		"	if n%2 == 1 {\n		for r := 0; r < n; r++ {", "	if false {\n		for r := 0; r < n; r++ {", gridPkg},
	{"G2-19", "the seed ignored", "grid/order.go",
		"rand.NewPCG(uint64(seed), ", "rand.NewPCG(0, ", gridPkg},
	{"G2-20", "a changed plan resumed (a tree that keeps no plan)", "grid/grid.go",
		"	} else if start.PlanSHA256 != g.p.SHA256 {", "	} else if false {", gridPkg},
	{"G2-21", "a changed boot resumed", "grid/grid.go",
		"	if start.BootID != g.bootID {", "	if false {", gridPkg},
	{"G2-22", "a changed GPU set resumed", "grid/grid.go",
		"	if strings.Join(start.GPUUUIDs, \",\") != strings.Join(g.uuids, \",\") {", "	if false {", gridPkg},
	{"G2-23", "a changed driver resumed", "grid/grid.go",
		"	if start.Driver != g.driver {", "	if false {", gridPkg},
	{"G2-24", "legs of another run accepted in a tree without a journal", "grid/grid.go",
		"		if err != nil || len(ents) > 0 {", "		if err != nil || len(ents) < 0 {", gridPkg},
	{"G2-25", "ready at the first 200", "grid/grid.go",
		"	ReadyStreak = 2", "	ReadyStreak = 1", gridPkg},
	{"G2-26", "a result of another concurrency accepted", "grid/leg.go",
		"	if got := points[0].ID.MaxConcurrency; got != pt.MaxConcurrency {", "	if got := points[0].ID.MaxConcurrency; false && got != pt.MaxConcurrency {", gridPkg},
	{"G2-27", "an unreadable result accepted", "grid/leg.go",
		"	if len(invalid) > 0 {\n		return fmt.Errorf(\"the result is not a readable bench point", "	if false {\n		return fmt.Errorf(\"the result is not a readable bench point", gridPkg},
	{"G2-28", "a failed leg not tried again", "grid/grid.go",
		"	MaxAttempts = 2", "	MaxAttempts = 1", []string{"-run=TestGridFailingBench", "-timeout=300s", "./grid/cmdtest/"}},
	{"G2-29", "the leg's processes not killed one by one (the escaped worker left)", "grid/leg.go",
		"				if g.procs.Kill(p, syscall.SIGKILL) == nil {", "				if false {", []string{"-run=TestGridFailingBench", "-timeout=300s", "./grid/cmdtest/"}},
	{"G2-30", "no child subreaper", "grid/procs_linux.go",
		"unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)", "unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0)", []string{"-run=TestGridAA", "-timeout=400s", "./grid/cmdtest/"}},
	{"G2-31", "the journal not read for the grid block", "summarize/summarize.go",
		"	grid, gw := readGrid(w.root, s.Legs)", "	grid, gw := (*GridBlock)(nil), []string(nil)\n	_ = readGrid", []string{"-run=Grid", "./summarize/"}},
	{"G2-32", "a failed leg the tree holds not warned about", "summarize/grid.go",
		"		if committed[k] || warned[k] {", "		if true {", []string{"-run=Grid", "./summarize/"}},
	{"G2-33", "TREE/grid/ read as stray files", "summarize/walk.go",
		"		case e.name == GridDir && e.dir && !e.refused:", "		case false:", []string{"-run=Grid", "./summarize/"}},
	// SPEC §12.1: the grid reaps what it kills, proves readiness on its
	// own server's listener, looks again before the server starts, and
	// resumes by the plan as parsed.
	{"GR34-1", "the leg's dead processes not waited for (zombies left)", "grid/leg.go",
		"	if left := g.reapLeg(srv, time.Now().Add(g.t.stopWait)); len(left) > 0 {", "	if left := []string(nil); len(left) > 0 {", []string{"-run=^TestGridFailingBench$", "-timeout=300s", "./grid/cmdtest/"}},
	{"GR34-2", "readiness from another process's listener accepted", "grid/leg.go",
		"			} else if who != \"\" {", "			} else if false && who != \"\" {", gridPkg},
	{"GR34-3", "the pre-check not repeated right before the server starts", "grid/leg.go",
		"	if what, err := g.busy(ctx); err != nil || what != \"\" {", "	if what, err := g.busy(ctx); false && (err != nil || what != \"\") {", []string{"-run=^TestGridPrecheckAgain$", "-timeout=300s", "./grid/cmdtest/"}},
	{"GR34-4", "a changed plan value resumed", "grid/grid.go",
		"		if d := PlanChanges(kept, g.p); len(d) > 0 {", "		if d := PlanChanges(kept, g.p); false && len(d) > 0 {", gridPkg},
	{"GR34-5", "the plan compared by its bytes on resume (a changed comment refused)", "grid/grid.go",
		"	if kept != nil {\n		// The plan as parsed", "	if false {\n		// The plan as parsed", gridPkg},
	// SPEC §11.4: amd-smi-csv's own checks.
	{"I3-1", "amd-smi-csv: the XCDs read may change mid-file", "foreign/amdcsv.go",
		"if g != nil && !sameInts(ids, g.xcds) {", "if false && g != nil && !sameInts(ids, g.xcds) {", foreignPkg},
	{"I3-2", "amd-smi-csv: an accumulator going back accepted", "foreign/amdcsv.go",
		"case seen && a.v < prev:", "case false && seen && a.v < prev:", foreignPkg},
	{"I3-3", "amd-smi-csv: the not-supported counter read as a count", "foreign/amdcsv.go",
		"if n == amdNotSupported {", "if false && n == amdNotSupported {", foreignPkg},
	{"I3-4", "amd-smi-csv: the SM clock not the lowest XCD's", "foreign/amdcsv.go",
		"r.sm = min(r.sm, x.mhz)", "r.sm = max(r.sm, x.mhz)", foreignPkg},
	{"I3-5", "amd-smi-csv: an advancing accumulator sets no bit", "foreign/amdcsv.go",
		"r.reasons |= a.a.bit", "r.reasons |= 0", foreignPkg},
	{"I3-6", "amd-smi-csv: an accumulator column covers no bit", "foreign/amdcsv.go",
		"c.covered |= a.bit", "c.covered |= 0", foreignPkg},
	{"I3-7", "amd-smi-csv: gfx_0_clk N/A accepted", "foreign/amdcsv.go",
		"if a.xcd == 0 {", "if false && a.xcd == 0 {", foreignPkg},
	{"I3-8", "amd-smi-csv: throttle coverage judged against NVIDIA's bits", "foreign/foreign.go",
		"bits, advice = amdBits,", "bits, advice = nonBenign,", foreignPkg},
	{"I3-9", "amd-smi-csv: a violation percentage above 0 sets no bit", "foreign/amdcsv.go",
		"if x > 0 {\n\t\t\t\t\tr.reasons |= a.bit", "if x > 100 {\n\t\t\t\t\tr.reasons |= a.bit", foreignPkg},
	{"I3-10", "amd-smi-csv: a violation percentage above 100 accepted", "foreign/amdcsv.go",
		"x < 0 || x > 100 {", "x < 0 || x > 1000 {", foreignPkg},
	{"I3-11", "amd-smi-csv: an unknown column ignored", "foreign/amdcsv.go",
		"	return nil, refuse(path, line, col, \"unknown column %q: not an amd-smi", "	return &amdCol{f: &field{role: roleIgnored, name: name, col: col}}, nil\n	return nil, refuse(path, line, col, \"unknown column %q: not an amd-smi", foreignPkg},
	// report.md: tables a reader can take in, the boot marker whole.
	{"MD1", "the legs' clock table of several models and GPUs wider than maxColumns", "report/markdown.go",
		"if !withModel || len(legClockHeader(true, multi)) <= maxColumns {", "if true {", []string{"./report/"}},
	{"MD2", "the boot marker [unproven] cut to 8 characters", "report/markdown.go",
		"	if id == clocks.Unproven {\n		return id\n	}", "	if false {\n		return id\n	}", []string{"./report/"}},
	// A GPU of the source that did no work, and --gpu's selection.
	{"I26", "a GPU with no busy reading imported (its record summarizes nothing)", "foreign/foreign.go",
		"		if g.busy > 0 {\n			busy = append(busy, name)", "		if true {\n			busy = append(busy, name)", foreignPkg},
	{"I27", "a --gpu naming no GPU of the source accepted", "foreign/foreign.go",
		"		if !c.matched[s] {", "		if false {", foreignPkg},
	{"I28", "--gpu keeps every GPU", "foreign/smicsv.go",
		"	if !c.selected(o, r.indexName(), r.uuid) {", "	if !c.selected(o, r.indexName(), r.uuid) && false {", foreignPkg},
	// SPEC §11.1: the engine named as the leg's own, the memory record,
	// amd-smi's partition key, mark waiting for its stream. The tests are
	// named, so that no timing test elsewhere decides a kill.
	{"F1", "the named engine not the leg's own", "sampler/tenants.go",
		"	for _, e := range s.engines {\n		roots = append(roots, e.PID)\n	}\n	return roots\n}\n\n// listTenants",
		"	for _, e := range s.engines[:0] {\n		roots = append(roots, e.PID)\n	}\n	return roots\n}\n\n// listTenants", fcPkgs},
	{"F2", "an --engine-pid not running accepted", "sampler/engine.go",
		"		if err := engineRunning(root, pid); err != nil {", "		if err := engineRunning(root, pid); false && err != nil {", fcPkgs},
	{"F3", "a port nobody listens on not refused as such", "sampler/engine.go",
		"	if len(inodes) == 0 {", "	if false {", fcPkgs},
	{"F4", "a socket not in LISTEN taken for the listener", "sampler/engine.go",
		"f[3] == tcpListen &&", "true &&", fcPkgs},
	{"F5", "every holder of the socket named, not the topmost", "sampler/engine.go",
		"		if !containsInt(holders, parent[pid]) {", "		if !containsInt(holders[:0], parent[pid]) {", fcPkgs},
	{"F6", "a container's port forwarder taken for the engine", "sampler/engine.go",
		"portForwarders[name] {", "false && portForwarders[name] {", fcPkgs},
	{"F7", "clock.foreign_process no longer says how to name the engine", "clocks/tenants.go",
		`hint = "; " + EngineHint`, `hint = ""`, fcPkgs},
	{"F8", "the engine hint given for a process that came during the leg", "clocks/tenants.go",
		"atFirst = atFirst || s.first", "atFirst = true", fcPkgs},
	{"F9", "a record's engine port not checked", "clocks/tenants.go",
		"	return port <= 65535", "	return true", fcPkgs},
	{"F10", "the GPU memory peak summed over readings", "sampler/memory.go",
		"	m.gpu = math.Max(m.gpu, sum)", "	m.gpu += sum", fcPkgs},
	{"F11", "a reading without a GPU's memory accepted", "sampler/memory.go",
		`	case m.missing != "":`, "	case false:", fcPkgs},
	{"F12", "a peak of 0 MiB accepted", "sampler/memory.go",
		"	case !(m.gpu > 0):", "	case false:", fcPkgs},
	{"F13", "a memory record replaced", "sampler/memory.go",
		"	return atomicfile.WriteNew(path, rec.JSON(), 0o644)", "	os.Remove(path)\n	return atomicfile.WriteNew(path, rec.JSON(), 0o644)", fcPkgs},
	{"F14", "a reparented worker's RSS dropped", "sampler/memory.go",
		"		if start[pid] == st {", "		if start[pid] == st && false {", fcPkgs},
	{"F15", "a reused pid's RSS counted", "sampler/memory.go",
		"		if start[pid] == st {", "		if start[pid] == st || true {", fcPkgs},
	{"F16", "the memory path for a prefix outside the layout", "sampler/memory.go",
		"!legRE.MatchString(run) || ", "", fcPkgs},
	{"F17", "an existing memory record not refused at start", "sampler/sampler.go",
		"	for _, p := range append(s.paths[:], s.memPath) {", "	for _, p := range s.paths[:] {", fcPkgs},
	{"F18", "NVML's memory used over its total accepted", "sampler/nvml.go",
		"		case used > total:", "		case false:", fcPkgs},
	{"F19", "NVML's bytes written as MiB", "sampler/nvml.go",
		"		mib := float64(used) / (1 << 20)", "		mib := float64(used)", fcPkgs},
	{"F20", "amd-smi's used VRAM gone mid-run not refused", "sampler/amdsmi.go",
		"			if m.usedErr != nil {\n				return nil", "			if false {\n				return nil", fcPkgs},
	{"F21", "amd-smi's accelerator_partition not read", "sampler/amdjson.go",
		"			return amdAcceleratorPartition", "			return amdComputePartition", fcPkgs},
	{"F22", "nvidia-smi's memory.used not asked for", "sampler/csv.go",
		"CounterFields[:]...), FieldVbiosVersion, FieldMemoryUsed)", "CounterFields[:]...), FieldVbiosVersion)", fcPkgs},
	{"F23", "mark refuses at once where the stream is not there yet", "cmd/clockgate/mark.go",
		"	if exists || opts.streamWait <= 0 {", "	if true {", fcPkgs},
	{"F24", "the host RSS of the leg's own processes not read", "sampler/sampler.go",
		"	roots := []int{s.cfg.PID, s.commandPID}", "	roots := []int{}", fcPkgs},
	{"F25", "a tree with no leg summarized as 0 of 0", "summarize/walk.go",
		"	if found && len(w.legs) == 0 {", "	if false {", fcPkgs},
	{"F26", "a bench directory one level too deep not named as a model id with a /", "summarize/walk.go",
		"				if !w.tooDeep(subtreeBench, r) {", "				if true {", fcPkgs},
	{"F27", "a memory or clocks directory one level too deep not named", "summarize/walk.go",
		"			if suffix == \"\" && w.tooDeep(subtree, f) {", "			if false {", fcPkgs},
	{"F28", "an interval the sampler cannot hold accepted", "sampler/sampler.go",
		"	if lat <= 0 || s.cfg.Interval >= HoldFactor*lat {", "	if true {", fcPkgs},
	{"F29", "the interval held to 1 × the probe's reading", "sampler/sampler.go",
		"const HoldFactor = 3", "const HoldFactor = 1", fcPkgs},
	{"F34", "one slow probe reading taken for what the sampler can hold", "sampler/sampler.go",
		"	for measured && n < HoldReadings && s.cfg.Interval < HoldFactor*lat {", "	for false {", fcPkgs},
	{"F35", "the slowest of the timed readings taken, not the fastest", "sampler/sampler.go",
		"		lat, n = min(lat, time.Since(began)), n+1", "		lat, n = max(lat, time.Since(began)), n+1", fcPkgs},
	{"F30", "record's verdict silent on a command killed by a signal", "cmd/clockgate/record.go",
		"ok && ws.Signaled() {\n			note =", "ok && ws.Signaled() && false {\n			note =", fcPkgs},
	{"F31", "a point's power-managed share shown where no limit was recorded", "clocks/points.go",
		"		if busy > 0 && limit {", "		if busy > 0 {", fcPkgs},
	{"F32", "a point a leg did not run warned about as having no window", "ratio/ratio.go",
		"			if m.NoBench {", "			if false {", fcPkgs},
	{"F33", "a mark whose point no bench file has not named", "summarize/summarize.go",
		"			if !l.Clock.BenchPoints[m.Point] && !named[m.Point] {", "			if false {", fcPkgs},
	{"SG1", "the scale guard's ratio to cat never fails", "scripts/scale/main.go",
		`r.what == "--json" && r.layout && walled && ratio > b.MaxRatio`, `r.what == "--json" && r.layout && walled && false`, scalePkg},
	{"SG2", "the scale guard's ratio bound widened to 8× cat", "scripts/scale/main.go",
		"bounds{MaxRatio: 4, MaxRSSMiB: 80,", "bounds{MaxRatio: 8, MaxRSSMiB: 80,", scalePkg},
	{"SG3", "the scale guard's peak RSS never fails", "scripts/scale/main.go",
		"b.MaxRSSMiB > 0 && rss > b.MaxRSSMiB", "b.MaxRSSMiB > 0 && false", scalePkg},
	{"SG4", "the scale guard's RSS bound widened to 112 MiB", "scripts/scale/main.go",
		"bounds{MaxRatio: 4, MaxRSSMiB: 80,", "bounds{MaxRatio: 4, MaxRSSMiB: 112,", scalePkg},
	{"SG5", "a ratio at exactly the bound fails", "scripts/scale/main.go",
		"r.layout && walled && ratio > b.MaxRatio", "r.layout && walled && ratio >= b.MaxRatio", scalePkg},
	{"SG14", "the scale guard's wall bound laid on every layout, the sampler's own not singled out", "scripts/scale/main.go",
		"walled := b.MaxLayoutRatio == 0 || r.tree == layouts[0].name", "walled := true", scalePkg},
	{"SG6", "the any-order scanner never used (every changed key order read member by member)", "clocks/parse.go",
		"	if p.anyOrder() {", "	if false && p.anyOrder() {", clocksPkg},
	{"SG7", "a line with a key the reader does not type (memory_used_mib) left to the general reading", "clocks/anyorder.go",
		"		n, ok := p.otherMember(i)\n		if !ok {", "		n, ok := p.otherMember(i)\n		if true || !ok {", clocksPkg},
	{"SG8", "the summary keeps its legs once the report is built (ReleaseLegs a no-op)", "summarize/summarize.go",
		"	s.released += len(s.Legs)\n	s.Legs = nil\n", "	s.released += len(s.Legs)\n", livePkg},
	{"SG9", "every leg's trace points kept in memory (the spool never used)", "summarize/summarize.go",
		"	if spool == nil || l.Clock.Fold == nil {", "	if true {", livePkg},
	{"SG10", "a judged fold keeps its reading-time state", "clocks/leg.go",
		"	l.check()\n	fold.dropScratch()\n", "	l.check()\n", []string{"-run=^TestJudgedFoldLetsGoOfItsReadingState$", "./clocks/"}},
	{"SG11", "a leg's first sample kept once its arm is compared", "clocks/fold.go",
		"g.Hist, g.Power, g.Throttle, g.First = nil, nil, nil, nil", "g.Hist, g.Power, g.Throttle = nil, nil, nil",
		[]string{"-run=^TestSummaryShedsMergedCounts$", "./summarize/"}},
	{"E1", "an energy window under 20 s priced (floor lowered to 10 s)", "clocks/energy.go",
		"MinEnergyWindowNS = 20 * int64(time.Second)", "MinEnergyWindowNS = 10 * int64(time.Second)", clocksPkg},
	{"E2", "the samples around a window's end allowed 5 intervals apart", "clocks/energy.go",
		"MaxEndGapIntervals = MaxGapIntervals", "MaxEndGapIntervals = 5", clocksPkg},
	{"E3", "an end gap of exactly 3 intervals refused", "clocks/energy.go",
		"if end.g.gapNS > int64(math.Round(limit*1e9)) {", "if end.g.gapNS >= int64(math.Round(limit*1e9)) {", clocksPkg},
	{"E4", "a window end with no sample on one side priced", "clocks/energy.go",
		"			if !end.g.have {", "			if false {", clocksPkg},
	{"E5", "a counter standing still for 5 s under load trusted (6 s needed)", "clocks/energy.go",
		"StallNS = 5 * int64(time.Second)", "StallNS = 6 * int64(time.Second)", clocksPkg},
	{"E6", "a counter standing still at exactly 100 W taken for a stall", "clocks/energy.go",
		"StallPowerW = 100.0", "StallPowerW = 99.0", clocksPkg},
	{"E7", "a counter that went down read as energy", "clocks/energy.go",
		"		if d < 0 {\n			if e.Reset == \"\" {", "		if false {\n			if e.Reset == \"\" {", clocksPkg},
	{"E8", "counter and power allowed 6% apart", "clocks/energy.go",
		"MaxEnergyDisagreePct = 5.0", "MaxEnergyDisagreePct = 6.0", clocksPkg},
	{"E9", "the counter's window ends not interpolated (whole steps counted)", "clocks/energy.go",
		"e.CounterJ += float64(d) / 1e3 * float64(hi-lo) / span", "e.CounterJ += float64(d) / 1e3", clocksPkg},
	{"E10", "the power's window ends not interpolated (the samples' own power)", "clocks/energy.go",
		"p0, p1 := at(a.powerW, b.powerW, lo), at(a.powerW, b.powerW, hi)", "p0, p1 := at(a.powerW, a.powerW, lo), at(b.powerW, b.powerW, hi)", clocksPkg},
	{"E11", "a counter that stops answering mid-window priced by power", "clocks/energy.go",
		"			if e := gpus[k]; e.CounterRows > 0 && e.CounterRows < e.Rows {", "			if e := gpus[k]; false {", clocksPkg},
	{"E12", "energy.method_mismatch removed", "ratio/energy.go",
		"	if len(groups) > 1 {", "	if false {", []string{"./summarize/"}},
	{"E13", "energy.no_window removed", "ratio/energy.go",
		"	if len(noWindow) > 0 {", "	if false {", []string{"./summarize/"}},
	{"E14", "an ENERGY point binding whatever its reasons", "ratio/energy.go",
		"ep.BindingEligible = len(ep.Reasons) == 0 && len(block.Reasons) == 0 &&", "ep.BindingEligible = len(block.Reasons) == 0 &&", []string{"./summarize/"}},
	{"E15", "energy_scope compared where one arm records none (a counter against nvidia-smi a hardware mismatch)", "clocks/compare.go",
		"					if name == energyScopeName && (len(ov) == 0 || len(bv) == 0) {", "					if false {", []string{"./summarize/"}},
	{"E16", "energy_mj out of range read as a value", "clocks/parse.go",
		"		p.intBits&(1<<kEnergy) != 0 && uint64(ints[kEnergy]) > maxEnergyMJ ||", "		false ||", clocksPkg},
	{"E17", "an energy_scope change within a window not drift", "clocks/fold.go",
		"	if (r.HasEnergyScope || g.First.EnergyScope != nil) && !sameScope(g.First, r) {", "	if false {", clocksPkg},
	{"E18", "NVML's energy counter left out of the counters' field-values call", "sampler/nvml.go",
		"		n.reqs = append(n.reqs, nvmlFieldReq{ID: nvmlFieldTotalEnergy, Scope: n.energyScope})", "", []string{"./sampler/"}},
	{"E19", "an NVML energy counter that stops answering mid-window not refused", "sampler/nvml.go",
		"		case ret != nvmlSuccess:\n			return nil, n.failf(gpu, FieldEnergy,", "		case false:\n			return nil, n.failf(gpu, FieldEnergy,", []string{"./sampler/"}},
	{"E20", "amd-smi's energy in J not turned into mJ", "sampler/amdjson.go",
		"	mj := math.Round(j * 1000)", "	mj := math.Round(j)", []string{"./sampler/"}},
	{"IV1", "an inferred interval not held to the mean spacing (build and import write a record check refuses)", "clocks/interval.go",
		"	if over || g <= 0 {", "	if over && false || g <= 0 {", []string{"./clocks/"}},
	{"IV2", "an inferred interval held to the mean spacing itself, not 110% of it", "clocks/interval.go",
		"big.NewInt(MaxIntervalOfMeanGapPct))) > 0", "big.NewInt(100))) > 0", []string{"./clocks/"}},
	{"IV3", "a GPU spanning no time taken as a spacing of nothing", "clocks/interval.go",
		"		if span := ts[len(ts)-1].Sub(ts[0]); span > 0 {", "		if span := ts[len(ts)-1].Sub(ts[0]); true {", []string{"./clocks/"}},
	{"SG12", "a failed write of all-runs.json's leg rows ignored", "summarize/summarize.go",
		"				if _, err := io.WriteString(rows, sep); err != nil {\n					firstErr = rowsErr(err)\n				} else if _, err := rows.Write(row); err != nil {\n					firstErr = rowsErr(err)\n				}",
		"				io.WriteString(rows, sep)\n				rows.Write(row)", []string{"-run=^TestTemporaryFilesFailLoudly$", "./summarize/"}},
	{"SG13", "a failed write of the pictures' traces ignored", "summarize/summarize.go",
		"			return fmt.Errorf(\"the clock pictures' traces: %w\", unwrapPath(err))", "			return nil", []string{"-run=^TestTemporaryFilesFailLoudly$", "./summarize/"}},
	{"IV4", "an import's interval inferred from the log's digits, not the stream's millisecond", "foreign/foreign.go",
		"		series[i] = append(series[i], r.t.Truncate(time.Millisecond))", "		series[i] = append(series[i], r.t)", []string{"./foreign/"}},
	{"I29", "the window applied before --gpu (a --gpu outside it refused as naming no GPU)", "foreign/smicsv.go",
		"	if !c.selected(o, r.indexName(), r.uuid) {\n		c.drop(path, line, \"a GPU --gpu does not select\")\n		return false\n	}\n	if !inWindow(r.t, o) {\n		c.drop(path, line, \"outside --from/--to\")\n		return false\n	}",
		"	if !inWindow(r.t, o) {\n		c.drop(path, line, \"outside --from/--to\")\n		return false\n	}\n	if !c.selected(o, r.indexName(), r.uuid) {\n		c.drop(path, line, \"a GPU --gpu does not select\")\n		return false\n	}", []string{"./foreign/"}},
	{"I30", "a CSV whose rows --gpu all drops refused as having no data rows", "foreign/smicsv.go",
		"		c.take(in.Path, ln, r, o, ticks)\n		rows++\n	}\n	if fs == nil || rows == 0 {",
		"		n := len(c.readings)\n		c.take(in.Path, ln, r, o, ticks)\n		rows += len(c.readings) - n\n	}\n	if fs == nil || rows == 0 {", []string{"./foreign/"}},
	// Bench clients (SPEC §12.5): AIPerf, GuideLLM, InferenceX, and the
	// format mismatch between arms.
	{"BF1", "AIPerf's JSONL timestamps taken without the epoch check", "benchfmt/aiperf.go",
		"		if f.kind != 'n' || err != nil || !inEpoch(time.Unix(0, x).UTC()) {", "		if f.kind != 'n' || err != nil {", []string{"-run=^TestAIPerfRefusals$", "./benchfmt/"}},
	{"BF2", "AIPerf's warmup records kept in the window", "benchfmt/aiperf.go",
		"	if phase.kind == 's' && string(phase.raw) != \"profiling\" {", "	if false {", []string{"-run=^TestAIPerfWindowOrder$", "./benchfmt/"}},
	{"BF3", "AIPerf's throughput not held to total_osl / benchmark_duration", "benchfmt/aiperf.go",
		"math.Abs(tput-want) > maxTotalsDisagreement*want", "math.Abs(tput-want) > 1e3*want", []string{"-run=^TestAIPerfRefusals$", "./benchfmt/"}},
	{"BF4", "AIPerf's zoneless start_time read as UTC without --bench-tz", "benchfmt/aiperf.go",
		"	if opt.BenchTZ == nil {\n", "	if opt.BenchTZ == nil {\n		opt.BenchTZ = time.UTC\n	}\n	if opt.BenchTZ == nil {\n", []string{"-run=^TestAIPerfWindowOrder$", "./benchfmt/"}},
	{"BF5", "GuideLLM's request total not held to its parts", "benchfmt/guidellm.go",
		"ok && n != p.NumPrompts {", "ok && false {", []string{"-run=^TestGuideLLMRefusals$", "./benchfmt/"}},
	{"BF6", "GuideLLM's window taken from any number", "benchfmt/guidellm.go",
		"math.IsInf(f.Num, 0) || !inEpoch(secTime(f.Num)) {", "math.IsInf(f.Num, 0) {", []string{"-run=^TestGuideLLMRefusals$", "./benchfmt/"}},
	{"BF7", "GuideLLM's throughput from the report's mean of per-request rates", "benchfmt/guidellm.go",
		"		p.OutputThroughput = float64(osl) / dur\n", "		p.OutputThroughput = float64(osl) / dur\n		if f := at(b, \"metrics.output_tokens_per_second.successful.mean\"); f != nil {\n			p.OutputThroughput = f.Num\n		}\n", []string{"-run=^(TestGuideLLMLayouts|TestRealGuideLLM)$", "./benchfmt/"}},
	{"BF8", "InferenceX's agg_*.json read as a result", "benchfmt/file.go",
		"	if name := path.Base(rel); strings.HasPrefix(name, inferenceXAggPrefix) && strings.HasSuffix(name, \".json\") {", "	if name := path.Base(rel); false && strings.HasPrefix(name, inferenceXAggPrefix) {", []string{"-run=^TestInferenceXWindow$", "./benchfmt/"}},
	{"BF9", "bench.format_mismatch not given", "ratio/ratio.go",
		"	if len(order) < 2 {\n		return nil\n	}", "	if true {\n		return nil\n	}", []string{"-run=^TestScenarioVerdicts$", "./summarize/"}},
	{"BF10", "a result's exact window not used for its point", "summarize/summarize.go",
		"		case p.HasWindow():\n", "		case false:\n", []string{"-run=^TestGolden$", "./summarize/"}},
	{"BF11", "the grid's point result not held to the plan's [bench] format", "grid/benchformat.go",
		"	if p.Format != format {", "	if false {", []string{"-run=^TestCheckPointResult$", "./grid/"}},
	{"BF12", "AIPerf's sweep aggregates read as points", "benchfmt/aiperf.go",
		"	return name == AIPerfSweepDir || strings.HasPrefix(name, aiperfAggregatePrefix)", "	return false", []string{"-run=^TestAIPerfAggregatesAndYAML$", "./summarize/"}},
	// SPEC §12.1, first contact (fifth round): record, sample and import.
	{"NU1", "a prefix inside clocks/ not laid out as <model>/<engine>/r<N> accepted at start", "sampler/sampler.go",
		"	return CheckTreePrefix(cfg.Prefix)\n}", "	return nil\n}", nuPkgs},
	{"NU2", "an import's memory record the first GPU's memory, not the sum over the leg's GPUs", "foreign/foreign.go",
		"		peaks.Add(reading, nil)", "		peaks.Add(reading[:1], nil)", nuPkgs},
	{"NU3", "an import's memory record written where a reading has no memory used", "foreign/foreign.go",
		"			if r.memUsed == nil {\n				return nil, fmt.Sprintf(", "			if false {\n				return nil, fmt.Sprintf(", nuPkgs},
	{"NU4", "a memory record whose host RSS is null (not recorded) refused as memory.invalid", "summarize/memory.go",
		`ok && f.Kind != strictjson.Null && (f.Kind != strictjson.Number`, `ok && (f.Kind != strictjson.Number`, nuPkgs},
	{"NU5", "an imported leg's memory.missing not saying what to log", "summarize/summarize.go",
		"		if im := l.Clock.Import; im != nil {", "		if im := l.Clock.Import; false && im != nil {", nuPkgs},
	{"NU6", "import writes no memory record", "cmd/clockgate/import.go",
		"		case p == \"\" || res.Memory == nil:", "		case true:", nuPkgs},
	{"NU7", "a last line with fewer or more values than the header refused, not dropped", "foreign/torn.go",
		"	case last && n != want:", "	case false && last && n != want:", nuPkgs},
	{"NU8", "a last line with a ^C in it not dropped", "foreign/torn.go",
		"	case last && cut:", "	case false && last && cut:", nuPkgs},
	{"NU9", "a ^C on a line that is not the last let through", "foreign/torn.go",
		"	case cut:\n", "	case false:\n", nuPkgs},
	{"NU10", "a torn last line of an nvidia-smi CSV refused", "foreign/smicsv.go",
		"torn(in.Path, ln, i == last, text, len(cells), len(fs))", "torn(in.Path, ln, i == last && false, text, len(cells), len(fs))", nuPkgs},
	{"NU11", "a torn last line of a dmon log refused", "foreign/dmon.go",
		"torn(in.Path, ln, i == last, text, len(words), len(fs))", "torn(in.Path, ln, i == last && false, text, len(words), len(fs))", nuPkgs},
	{"NU12", "a torn last line of an amd-smi CSV refused", "foreign/amdcsv.go",
		"torn(in.Path, ln, i == last, text, len(cells), len(cols))", "torn(in.Path, ln, i == last && false, text, len(cells), len(cols))", nuPkgs},
	{"NU13", "a GPU at 0% power-managed listed under Power-managed legs", "report/report.go",
		" || *g.PowerManagedSamples == 0 {", " {", nuPkgs},
	{"NU14", "a reading a stop signal cut short refuses the leg", "sampler/sampler.go",
		"			if errors.Is(err, errCallSignaled) && s.stopFollows(runCtx, lastT, bound) {", "			if false && errors.Is(err, errCallSignaled) && s.stopFollows(runCtx, lastT, bound) {", nuPkgs},
	// The host the leg ran on (SPEC §12.2).
	{"HO1", "host.contention's bound widened to 1000%", "clocks/contract.go",
		"HostContentionBasisPoints = 500", "HostContentionBasisPoints = 100000", hostPkg},
	{"HO2", "host.contention's check removed", "clocks/hostjudge.go",
		"if bp := basisPoints(*h.OwnWaitShare); bp > HostContentionBasisPoints {", "if bp := basisPoints(*h.OwnWaitShare); false {", hostPkg},
	{"HO3", "host.contention judged under 1 CPU-second of own time", "clocks/hostjudge.go",
		"h.OwnWaitShare != nil && h.OwnCPUS >= HostMinOwnCPUSeconds", "h.OwnWaitShare != nil", hostPkg},
	{"HO4", "host.steal's bound widened to 1000%", "clocks/contract.go",
		"HostStealBasisPoints = 200", "HostStealBasisPoints = 100000", hostPkg},
	{"HO5", "host.steal at its bound", "clocks/hostjudge.go",
		"bp > HostStealBasisPoints {", "bp >= HostStealBasisPoints {", hostPkg},
	{"HO6", "host.swap's check removed", "clocks/hostjudge.go",
		"if h.SwapPages > 0 {", "if false {", hostPkg},
	{"HO7", "host.mismatch's identity fields not compared", "clocks/hostjudge.go",
		"		if strings.Join(ov, \" \") != strings.Join(bv, \" \") {", "		if false {", hostPkg},
	{"HO8", "host.mismatch's memory bound widened to 1000%", "clocks/contract.go",
		"HostMemoryBasisPoints = 100", "HostMemoryBasisPoints = 100000", hostPkg},
	{"HO9", "host.cpu_offset's bound widened to 1000%", "clocks/contract.go",
		"HostCPUOffsetBasisPoints = 500", "HostCPUOffsetBasisPoints = 100000", hostPkg},
	{"HO10", "a host block not recomputed from its stream", "clocks/hostjudge.go",
		"if bad := diffHost(rec.Host, want); len(bad) > 0 {", "if bad := diffHost(rec.Host, want); false {", hostPkg},
	{"HO11", "a host block without its stream trusted", "clocks/leg.go",
		"if rec.Host != nil && !l.judgeHostStream(rec, fold) {", "if false {", hostPkg},
	{"HO13", "the host's ratio checks not in the ratio", "ratio/ratio.go",
		"	own = append(own, clocks.HostReasons(ours.Engine, oursArm.Legs, baseline.Engine, baseArm.Legs)...)\n", "", hostTreePkg},
	{"HO14", "the report's host line per arm says not recorded", "report/markdown.go",
		"text(side.Host.Text(side.Engine))", "text(clocks.HostSide{}.Text(side.Engine))", hostTreePkg},
	{"HO15", "the sampler's host reading per tick skipped", "sampler/sampler.go",
		"		s.host.read(rows[0].T, busy, s.cfg.Logf)\n", "", []string{"-run=^TestHostQuiet", "./sampler/"}},
	{"HO16", "every host reading folded as busy by the sampler", "sampler/sampler.go",
		"			busy = busy && back.UtilizationGPUPct != 0\n", "			busy = true\n", []string{"-run=^TestSamplerWritesStreamAndRecord$", "./sampler/"}},
	{"HO12", "swap outside the busy window counted", "clocks/host.go",
		"		f.lastPSI = *l.PSI\n	}\n	if !busy {", "		f.lastPSI = *l.PSI\n	}\n	f.swap += l.Swap.In + l.Swap.Out\n	if !busy {", hostPkg},
}

// owPkg runs the tests that tie bench results to their clock window
// (SPEC §12.1.1), by name.
var owPkg = []string{"-run=^(TestOutsideWindow.*|TestUnprovenWindow|TestStampZone|TestScenarioVerdicts|TestImportZoneTiesDates|TestStrictFailsResultsMonthsApart|TestRealLogRealResultMonthsApart)$",
	"./clocks/", "./summarize/", "./cmd/clockgate/"}

func init() {
	mutations = append(mutations,
		mutation{"OW1", "a dated result outside every zone's window let through", "clocks/outside.go",
			"		if !inside {", "		if !inside && false {", owPkg},
		mutation{"OW2", "a result's exact window outside the clock window let through", "clocks/outside.go",
			"			if !p.Exact.overlaps(win) {", "			if false {", owPkg},
		mutation{"OW3", "an exact window touching the clock window's end taken as outside", "clocks/outside.go",
			"			if !p.Exact.overlaps(win) {", "			if !(p.Exact.From < win.To && win.From < p.Exact.To) {", owPkg},
		mutation{"OW4", "a date's run widened a second past its stamp", "clocks/outside.go",
			"	return Span{From: at - dur - dateSlackNS, To: at + dateSlackNS}", "	return Span{From: at - dur - dateSlackNS, To: at + 2*dateSlackNS}", owPkg},
		mutation{"OW5", "UTC not admitted beside the host's zone", "clocks/outside.go",
			"			inside = hs.overlaps(win) || us.overlaps(win)", "			inside = hs.overlaps(win)", owPkg},
		mutation{"OW6", "a record without a zone admitting offsets beyond ±18 h", "clocks/outside.go",
			"			sp := Span{From: u.From - anyZoneNS, To: u.To + anyZoneNS}", "			sp := Span{From: u.From - 2*anyZoneNS, To: u.To + 2*anyZoneNS}", owPkg},
		mutation{"OW7", "clock.unproven_window removed", "clocks/outside.go",
			"len(times) > 0 && known == 0 && !marked {", "len(times) > 0 && known == 0 && false {", owPkg},
		mutation{"OW8", "a failed mark taken as tying the results to the log", "clocks/outside.go",
			"			if m.NoWindow == \"\" {", "			if m.NoWindow != \"x\" {", owPkg},
		mutation{"OW9", "summarize passing no result's time to the check", "summarize/summarize.go",
			"		ev.Times = append(ev.Times, pointTime(p))", "		_ = pointTime(p)", owPkg},
		mutation{"OW10", "import --tz not recorded in the record", "cmd/clockgate/import.go",
			"		res.Record.Window.StampZone(o.TZ, name)", "		_ = name", owPkg},
	)
}

// nuPkgs run the tests of SPEC §12.1's record, sample and import items.
var nuPkgs = []string{"-run=^(TestCheckTreePrefix|TestNewRefusesTreePrefix|TestRecordSampleRefuseTreePrefix|TestRealMemoryRecord|TestMemoryRecordEveryFormat|" +
	"TestParseMemory|TestImportedLegMemory|TestImportCreatesDirectoriesAndMemory|TestTornLastLine|TestPowerManagedListNotAtZero|TestGolden|TestStopSignalReachesTheCall)$", "./sampler/", "./cmd/clockgate/", "./foreign/", "./summarize/", "./report/"}

// hostPkg runs the host's judging tests (SPEC §12.2).
var hostPkg = []string{"-run=^TestHost", "./clocks/"}

// hostTreePkg runs summarize's tests of trees with host streams.
var hostTreePkg = []string{"-run=^TestHostTree", "./summarize/"}

var scalePkg = []string{"./scripts/scale/"}

func main() {
	run := flag.String("run", "", "only mutations whose id contains this")
	timeout := flag.Duration("timeout", 3*time.Minute, "limit for one mutation's tests")
	applies := flag.Bool("applies", false, "only check that each mutation's snippet is found once, without running tests (seconds, after a refactoring)")
	flag.Parse()
	root, err := os.Getwd()
	if err != nil {
		fatal(err)
	}
	work, err := os.MkdirTemp("", "clockgate-mutants-*")
	if err != nil {
		fatal(err)
	}
	defer os.RemoveAll(work)
	if err := copyTracked(root, work); err != nil {
		fatal(err)
	}
	// The unmutated suite must pass, or no kill means anything.
	if *applies {
		// Snippets only.
	} else if out, ok := goTest(work, allPkgs(*run), *timeout); !ok {
		fatal(fmt.Errorf("the unmutated tests fail:\n%s", out))
	}
	fmt.Printf("| id | mutation | file | result | first failing test |\n|---|---|---|---|---|\n")
	survived, broken := 0, 0
	for _, m := range mutations {
		if *run != "" && !strings.Contains(m.id, *run) {
			continue
		}
		path := filepath.Join(work, m.file)
		orig, err := os.ReadFile(path)
		if err != nil {
			fatal(err)
		}
		if n := bytes.Count(orig, []byte(m.from)); n != 1 {
			fmt.Printf("| %s | %s | %s | NOT APPLIED (snippet found %d times) | |\n", m.id, m.what, m.file, n)
			broken++
			continue
		}
		if *applies {
			continue
		}
		mutated := bytes.Replace(orig, []byte(m.from), []byte(m.to), 1)
		if err := os.WriteFile(path, mutated, 0o644); err != nil {
			fatal(err)
		}
		out, ok := goTest(work, m.pkgs, *timeout)
		if err := os.WriteFile(path, orig, 0o644); err != nil {
			fatal(err)
		}
		result := "KILLED"
		switch {
		case ok:
			result, survived = "SURVIVED", survived+1
		case strings.Contains(out, "[build failed]") || strings.Contains(out, "[setup failed]"):
			result, broken = "NOT APPLIED (build failed)", broken+1
		}
		fmt.Printf("| %s | %s | %s | %s | %s |\n", m.id, m.what, m.file, result, firstFailure(out))
	}
	if *applies && broken == 0 {
		fmt.Println("\nevery mutation applies")
		return
	}
	if survived+broken > 0 {
		fmt.Printf("\n%d survived, %d not applied\n", survived, broken)
		os.Exit(1)
	}
	fmt.Println("\nevery mutation killed")
}

// firstFailure names the first test that failed in go test output.
func firstFailure(out string) string {
	for _, line := range strings.Split(out, "\n") {
		if f, ok := strings.CutPrefix(strings.TrimSpace(line), "--- FAIL: "); ok {
			return strings.Fields(f)[0]
		}
	}
	return ""
}

// allPkgs are the packages the mutations whose id contains run are
// judged by ("" for every mutation).
func allPkgs(run string) []string {
	seen := map[string]bool{}
	var out []string
	for _, m := range mutations {
		if !strings.Contains(m.id, run) {
			continue
		}
		for _, p := range m.pkgs {
			if !seen[p] {
				seen[p] = true
				out = append(out, p)
			}
		}
	}
	return out
}

func goTest(dir string, pkgs []string, timeout time.Duration) (string, bool) {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, "go", append([]string{"test", "-count=1", "-failfast"}, pkgs...)...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	return string(out), err == nil
}

// copyTracked copies the files git tracks, and the untracked ones it does
// not ignore, into dst.
func copyTracked(src, dst string) error {
	out, err := exec.Command("git", "-C", src, "ls-files", "-z", "--cached", "--others", "--exclude-standard").Output()
	if err != nil {
		return fmt.Errorf("git ls-files: %w", err)
	}
	for _, name := range strings.Split(strings.TrimRight(string(out), "\x00"), "\x00") {
		if name == "" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return err
		}
		target := filepath.Join(dst, name)
		if err := os.MkdirAll(filepath.Dir(target), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(target, data, 0o644); err != nil {
			return err
		}
	}
	return nil
}

func fatal(err error) {
	fmt.Fprintln(os.Stderr, "mutants:", err)
	os.Exit(2)
}

// pciePkg runs the tests of the PCIe link and declared state.
var pciePkg = []string{"-run=PCIe|Expect", "./clocks/", "./ratio/", "./sampler/", "./cmd/clockgate/"}

// The box's PCIe link and declared state (SPEC §12.2).
func init() {
	mutations = append(mutations,
		mutation{"PL1", "host.pcie_link never given", "clocks/pcie.go",
			"	if p.below == 0 {\n		return\n	}", "	if true {\n		return\n	}", pciePkg},
		mutation{"PL2", "a link one generation under its maximum let pass", "clocks/pcie.go",
			"	if r.PCIe[PCIeGen] >= r.PCIe[PCIeGenMax] && ", "	if r.PCIe[PCIeGen]+1 >= r.PCIe[PCIeGenMax] && ", pciePkg},
		mutation{"PL3", "a link under its maximum width let pass", "clocks/pcie.go",
			" && r.PCIe[PCIeWidth] >= r.PCIe[PCIeWidthMax] {", " {", pciePkg},
		mutation{"PL4", "a record's PCIe maximum not reconciled with its stream", "clocks/record.go",
			"		bad = append(bad, reconcilePCIe(pre, rg, g)...)\n", "", pciePkg},
		mutation{"PL5", "host.mismatch's PCIe part never given", "clocks/pcie.go",
			"	if len(diff) == 0 {\n		return nil\n	}\n	return []Reason{ratioReason(CodeHostMismatch,", "	if true {\n		return nil\n	}\n	return []Reason{ratioReason(CodeHostMismatch,", pciePkg},
		mutation{"PL6", "a PCIe maximum that changes within the window not drift", "clocks/fold.go",
			"		g.samePCIeMax(r, line)\n", "", pciePkg},
		mutation{"PL7", "a declared state never checked", "clocks/leg.go",
			"	l.checkExpect()\n", "", pciePkg},
		mutation{"PL8", "a declared lock's bound widened to 2%", "clocks/contract.go",
			"MaxExpectClockBasisPoints = 100", "MaxExpectClockBasisPoints = 200", pciePkg},
		mutation{"PL9", "a declared power limit never compared", "clocks/expect.go",
			"			case m.LimitW != want:", "			case false:", pciePkg},
		mutation{"PL10", "a declared power limit the stream cannot show let pass", "clocks/expect.go",
			"			case m == nil:\n", "			case m == nil && false:\n", pciePkg},
		mutation{"PL11", "host.mismatch's PCIe part left out of the ratio", "ratio/ratio.go",
			"	bench = append(bench, clocks.HostPCIeMismatch(oursArm, baseArm)...)\n", "", pciePkg},
		mutation{"PL12", "a declared cpu_governor other CPUs did not run let pass", "clocks/expect.go",
			"	case len(g) != 1 || g[0] != want:", "	case false:", []string{"-run=^TestExpect", "./clocks/"}},
		mutation{"PL13", "a declared cpu_governor with no host stream let pass", "clocks/expect.go",
			"	case h == nil:\n", "	case h == nil && false:\n", []string{"-run=^TestExpect", "./clocks/"}},
	)
}

// rvMarkPkg runs the tests that tie a leg's clockgate marks and
// unreadable dates to its clock window (SPEC §12.1.1), by name.
var rvMarkPkg = []string{"-run=^(TestOutsideWindowMarks?|TestUnprovenWindow|TestUnprovenWindowUnreadDate)$", "./clocks/", "./summarize/"}

func init() {
	mutations = append(mutations,
		mutation{"RV1", "a mark outside the clock window let through", "clocks/outside.go",
			"		if m.Span.overlaps(win) {", "		if true {", rvMarkPkg},
		mutation{"RV2", "a mark outside the clock window taken as tying the results to the log", "clocks/outside.go",
			"	marked := false\n	for _, m := range marks {", "	marked := len(marks) > 0\n	for _, m := range marks {", rvMarkPkg},
		mutation{"RV3", "a mark touching the clock window's end taken as outside", "clocks/outside.go",
			"		if m.Span.overlaps(win) {", "		if m.Span.From < win.To && win.From < m.Span.To {", rvMarkPkg},
		mutation{"RV4", "an unreadable date named as no date", "clocks/outside.go",
			"			if p.DateUnread {", "			if false {", rvMarkPkg},
		mutation{"RV5", "summarize not saying a result's date is unreadable", "summarize/marks.go",
			"	t.Date, t.DateUnread = p.Date, true", "	t.Date, t.DateUnread = p.Date, false", rvMarkPkg},
	)
}

func init() {
	mutations = append(mutations,
		mutation{"RV6", "an edited kept plan trusted on resume", "grid/plandiff.go",
			"	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != startSHA256 {", "	if sum := sha256.Sum256(data); false && hex.EncodeToString(sum[:]) != startSHA256 {", []string{"-run=^TestResume", "./grid/"}},
	)
}

func init() {
	mutations = append(mutations,
		mutation{"RV7", "a stop that leaves a live process of the leg not waiting for those that died", "grid/leg.go",
			"			for _, r := range g.reapLeg(srv, time.Now()) {", "			for _, r := range []string(nil) {", []string{"-run=^(TestStopServerReapsWhenOneIsLeft|TestReapLegByPID)$", "./grid/"}},
	)
}

func init() {
	mutations = append(mutations,
		mutation{"RV8", "a series that keeps no legs asked for legs", "history/check.go",
			"	if len(newest) == 0 {\n		// Nothing the user records", "	if len(newest) == -1 {\n		// Nothing the user records", []string{"-run=^TestShortHistory", "./history/"}},
		mutation{"RV9", "a series that keeps no legs let through as stable", "history/check.go",
			"		j.Verdict = VerdictInsufficient\n		j.MagnitudePct = math.NaN()\n		j.How = fmt.Sprintf(\"%s; the series keeps no legs", "		j.Verdict = VerdictStable\n		j.MagnitudePct = math.NaN()\n		j.How = fmt.Sprintf(\"%s; the series keeps no legs", []string{"-run=^TestShortHistory", "./history/"}},
	)
}

func init() {
	mutations = append(mutations,
		mutation{"RV10", "import --tz Local taken as a zone", "cmd/clockgate/import.go",
			`strings.TrimSpace(opts.TZ) == "" || strings.EqualFold(opts.TZ, "Local")`, `strings.TrimSpace(opts.TZ) == ""`, []string{"-run=^TestImportZone", "./cmd/clockgate/"}},
	)
}

// The bench clients' gaps (SPEC §12.5): GuideLLM's strategy in a point's
// identity; a file no reader accepts refused; grid --bench-tz.
func init() {
	mutations = append(mutations,
		mutation{"BF13", "GuideLLM's constant and Poisson points at one rate read as one point", "benchfmt/guidellm.go",
			"			p.ID.RequestRate, p.ID.Strategy = r.Num, typ.Str", "			p.ID.RequestRate = r.Num", []string{"-run=^(TestGuideLLMLayouts|TestGuideLLMConstantAndPoisson)$", "./benchfmt/", "./summarize/"}},
		mutation{"BF14", "a point's strategy left out of its label", "ratio/point.go",
			"		return p.concurrency() + \"/\" + p.rate() + \":\" + p.Strategy", "		return p.concurrency() + \"/\" + p.rate()", []string{"-run=^TestPointStrategy$", "./ratio/"}},
		mutation{"BF15", "a file stating a result's keys that no reader accepts kept as a warning", "benchfmt/vllm.go",
			"			if line, keys := claimed(items); len(keys) > 0 {", "			if line, keys := claimed(items); false && len(keys) > 0 {", []string{"-run=^(TestNoReaderAccepts|TestNoReaderAcceptsVoidsTheLeg|TestScenarioVerdicts)$", "./benchfmt/", "./summarize/"}},
		mutation{"BF16", "AIPerf's export out of its directory read as a vLLM result", "benchfmt/vllm.go",
			"	if !broken && len(items) == 1 && isAIPerfExport(items[0].v) {", "	if false {", []string{"-run=^(TestNoReaderAccepts|TestNoReaderAcceptsVoidsTheLeg)$", "./benchfmt/", "./summarize/"}},
		mutation{"BF17", "the grid's AIPerf point check reading no zone for start_time and end_time", "grid/benchformat.go",
			"		f = benchfmt.ReadAIPerf(open, rel, opt)", "		f = benchfmt.ReadAIPerf(open, rel, benchfmt.Options{})", []string{"-run=^TestCheckPointResultBenchTZ$", "./grid/"}},
		mutation{"BF18", "grid --bench-tz taken unchecked", "cmd/clockgate/grid.go",
			"			if c.Flags().Changed(\"bench-tz\") {", "			if false {", []string{"-run=^TestGridBenchTZ$", "./cmd/clockgate/"}},
	)
}

// legPkg runs the tests of the multi-host leg's recording half.
var legPkg = []string{"-run=TestLeg|MultiHost|ExpandHosts|TestRoles|Manifest|TestClose", "./multileg/", "./summarize/", "./cmd/clockgate/"}

// A leg across several hosts, recorded (SPEC §12.3).
func init() {
	mutations = append(mutations,
		mutation{"MH1", "a multi-host leg's directory skipped by summarize", "summarize/walk.go",
			"ok && subtree == subtreeClocks && f.dir && clocks.IsMultiHostLeg(", "ok && false && subtree == subtreeClocks && f.dir && clocks.IsMultiHostLeg(", legPkg},
		mutation{"MH2", "a multi-host leg's directory not refused by check", "cmd/clockgate/legs.go",
			"		if clocks.IsMultiHostLeg(r) {", "		if false && clocks.IsMultiHostLeg(r) {", legPkg},
		mutation{"MH3", "leg close passes a host without its record", "multileg/close.go",
			"	if len(missing) > 0 {\n		return nil, \"\", fmt.Errorf(\"%w", "	if false {\n		return nil, \"\", fmt.Errorf(\"%w", legPkg},
		mutation{"MH4", "sample --leg samples a host leg.json does not list", "cmd/clockgate/sample.go",
			"	if _, ok := m.Host(host); !ok {", "	if _, ok := m.Host(host); false && !ok {", legPkg},
		mutation{"MH5", "sample --leg samples over a host's existing files", "cmd/clockgate/sample.go",
			"; len(found) > 0 {", "; false && len(found) > 0 {", legPkg},
		mutation{"MH6", "leg wait counts a stream without a whole reading", "cmd/clockgate/leg.go",
			"		if n > 0 && strings.IndexByte(string(buf[:n]), '\\n') >= 0 {", "		if n > 0 {", legPkg},
		mutation{"MH7", "the leg's peak RSS summed over the hosts that have one", "multileg/close.go",
			"			allRSS = false\n", "", legPkg},
		mutation{"MH8", "mark --leg runs off the client", "cmd/clockgate/mark.go",
			"	if host != m.Client {", "	if false && host != m.Client {", legPkg},
		mutation{"MH9", "a leg's samples without mono_s", "sampler/sampler.go",
			"				smp.MonoS = &mono\n", "				smp.MonoS, _ = nil, mono\n", legPkg},
		mutation{"MH10", "a leg's record without time_sync", "sampler/sampler.go",
			"		rec.TimeSync = &clocks.TimeSyncWindow{", "		_ = &clocks.TimeSyncWindow{", legPkg},
		mutation{"MH11", "sample not stopped by SIGINT as by SIGTERM", "cmd/clockgate/sample.go",
			"	signal.Notify(sigc, syscall.SIGINT, syscall.SIGTERM)", "	signal.Notify(sigc, syscall.SIGTERM)", legPkg},
	)
}

// mjPkg runs the tests of the multi-host leg's judge.
var mjPkg = []string{"-run=MultiHost", "./clocks/"}

// A leg across several hosts, judged (SPEC §12.3).
func init() {
	const f = "clocks/multihostjudge.go"
	mutations = append(mutations,
		mutation{"MJ1", "a host without its record passed", f,
			"		if errors.Is(err, fs.ErrNotExist) {\n			l.add(CodeHostMissing", "		if errors.Is(err, fs.ErrNotExist) && false {\n			l.add(CodeHostMissing", mjPkg},
		mutation{"MJ2", "a file of a host leg.json does not list taken unchecked", f,
			"		if _, ok := m.Host(host); ok || seen[host] {", "		if true {", mjPkg},
		mutation{"MJ3", "two hosts claiming one GPU passed", f,
			"		if hs := claims[u]; len(hs) > 1 {", "		if hs := claims[u]; len(hs) > 2 {", mjPkg},
		mutation{"MJ4", "a host's interval taken unchecked", f,
			"		if rec.Window.IntervalS != iv {", "		if false {", mjPkg},
		mutation{"MJ5", "the host window bound widened by an interval", f,
			"	limit := time.Duration(MaxHostWindowIntervals * iv", "	limit := time.Duration((MaxHostWindowIntervals + 1) * iv", mjPkg},
		mutation{"MJ6", "two hosts' skew bound taken as the larger one's, not the sum", f,
			"known[0].ms+known[1].ms > m.SkewBoundMS", "known[0].ms > m.SkewBoundMS", mjPkg},
		mutation{"MJ7", "an unsynchronised kernel passed", f,
			"			case !k.Synchronised:", "			case false:", mjPkg},
		mutation{"MJ8", "a host without chronyc passed with no bound", f,
			"			undeclared = append(undeclared, h.Host)\n", "", mjPkg},
		mutation{"MJ9", "the wall-step bound doubled", f,
			"step*1000 > MaxWallStepMS", "step*1000 > 2*MaxWallStepMS", mjPkg},
		mutation{"MJ10", "a reading without mono_s passed", f,
			"		if !mok || mono.Kind != strictjson.Number {\n			return fmt.Sprintf(", "		if !mok || mono.Kind != strictjson.Number {\n			continue\n			return fmt.Sprintf(", mjPkg},
		mutation{"MJ11", "clock.gpu_skew across hosts of a group not judged", f,
			"		if slow == nil || slow.host == fast.host || offsetWithin(fast.m2, slow.m2) {", "		if true {", mjPkg},
		mutation{"MJ12", "clock.gpu_skew judged across roles", f,
			"		if _, ok := groups[hl.Group]; !ok {", "		hl = &HostLeg{Host: hl.Host, Leg: hl.Leg}\n		if _, ok := groups[hl.Group]; !ok {", mjPkg},
		mutation{"MJ13", "a host's boot not part of the leg's boot", f,
			"		boots[i] = hl.Host + \"=\" + r.BootID", "		boots[i] = hl.Host", mjPkg},
		mutation{"MJ14", "a one-host leg run from another client needs no time sync", f,
			"	if len(m.Hosts) == 1 && m.Hosts[0].Host == m.Client {", "	if len(m.Hosts) == 1 {", mjPkg},
		mutation{"MJ15", "the multi-host judge not reached from summarize", "summarize/summarize.go",
			"		return clocks.LoadMultiHostLeg(files, lf.multiHost)", "		return clocks.NewLeg(files)", legPkg},
		mutation{"MJ16", "point windows judged on the hosts' samples while clock.host_skew stands", f,
			"		if lf.Points != nil && skewHolds {", "		if lf.Points != nil {", mjPkg},
		mutation{"MJ17", "a point's busy samples not added over the hosts", f,
			"			sum.Busy += q.Busy\n", "", mjPkg},
		mutation{"MJ18", "report.html's picture names a multi-host leg's GPUs without host and role", "report/svg.go",
			"		case g.Host != \"\" && g.Role != \"\":", "		case false:", []string{"-run=TestMultiHostReportNamesHosts", "./report/"}},
		mutation{"MJ19", "report.md names a multi-host leg's GPUs without host and role", "report/markdown.go",
			"	case host == \"\":\n		return strconv.Itoa(index)", "	case true:\n		return strconv.Itoa(index)", []string{"-run=TestMultiHostReportNamesHosts", "./report/"}},
	)
}

// The host line's template and the fold's top processes (SPEC §12.2's
// speed): each must read what the strict reader reads.
func init() {
	mutations = append(mutations,
		mutation{"HP1", "a host template's swap.in hole read into swap.out", "clocks/hosttemplate.go",
			"			ok = p.int(&l.Swap.In)", "			ok = p.int(&l.Swap.Out)", []string{"-run=^TestHostTemplateAgrees$", "./clocks/"}},
		mutation{"HP2", "a host line longer than its template read by it", "clocks/hosttemplate.go",
			"	if t == nil || p.i != len(b) {", "	if t == nil {", []string{"-run=^TestHostTemplateAgrees$", "./clocks/"}},
		mutation{"HP3", "a host template's holes not kept while the layout stays", "clocks/hosttemplate.go",
			"		if same && !tm.holes[i] {", "		if same {", []string{"-run=^TestHostTemplateAgrees$", "./clocks/"}},
		mutation{"HP4", "a process summed into the one at its place in the line before", "clocks/host.go",
			"		if i < len(f.lastTop) && f.lastTop[i].pid == p.PID {", "		if i < len(f.lastTop) {", []string{"-run=^TestHostTopSumsByPID$", "./clocks/"}},
		mutation{"HP5", "a process named by its first comm", "clocks/host.go",
			"		if e.comm != p.Comm {", "		if e.comm == \"\" {", []string{"-run=^TestHostTopSumsByPID$", "./clocks/"}},
	)
}

// The rest of the bench clients (SPEC §12.5): history's series key with
// GuideLLM's strategy.
func init() {
	mutations = append(mutations,
		mutation{"BF19", "history's series key without a rate point's strategy", "history/grid.go",
			"		id += \":\" + m.v.Str", "		_ = m", []string{"-run=^(TestGuideLLMStrategySeries|TestStrategyKeyOldStore)$", "./history/"}},
		mutation{"BF20", "a strategy that is not a name taken into the series key", "history/grid.go",
			"		if m.v.Kind != strictjson.String || m.v.Str == \"\" {", "		if false {", []string{"-run=^TestParseFailsClosed$", "./history/"}},
		mutation{"BF21", "a GuideLLM report before 0.4 counted by run_stats.requests_made (the whole run's)", "benchfmt/guidellm.go",
			"		totals, tfrom = b.Fields[\"request_totals\"], \"request_totals\"", "		totals, tfrom = at(b, \"run_stats.requests_made\"), \"run_stats.requests_made\"", []string{"-run=^(TestRealGuideLLM|TestGuideLLMLayouts)$", "./benchfmt/"}},
		mutation{"BF22", "a GuideLLM report before 0.4 read without its model", "benchfmt/guidellm.go",
			"		if f := at(b, \"worker.backend_model\"); model == \"\" && f != nil && f.Kind == strictjson.String {", "		if f := at(b, \"worker.backend_model\"); false && f != nil {", []string{"-run=^TestRealGuideLLM$", "./benchfmt/"}},
		mutation{"BF23", "the JSONL skim vouching for a record with a duplicate key", "benchfmt/skim.go",
			"			if bytes.Equal(o, k) {", "			if bytes.Equal(o, k) && false {", []string{"-run=^TestSkimLeavesToStrictJSON$", "./benchfmt/"}},
		mutation{"BF24", "the JSONL skim vouching for a number not finite in float64", "benchfmt/skim.go",
			"	if exp || n > 308 {", "	if (exp || n > 308) && false {", []string{"-run=^TestSkimLeavesToStrictJSON$", "./benchfmt/"}},
		mutation{"BF25", "a kept point's number written otherwise than encoding/json writes it", "benchfmt/kept.go",
			"	if a := math.Abs(x); a != 0 && (a < 1e-6 || a >= 1e21) {", "	if a := math.Abs(x); a != 0 && (a < 1e-7 || a >= 1e21) {", []string{"-run=^TestKeptIsCanonical$", "./benchfmt/"}},
	)
}

// The grid on a Slurm allocation (SPEC §12.4): the plan's [slurm] and
// roles, the allocation, the stop of a step, the resume, the gate's
// naming of a node. SL6–SL8 need the cluster (CLOCKGATE_TEST_SLURM).
func init() {
	slurmGrid := func(run string) []string {
		return []string{"-run=" + run, "-timeout=600s", "./grid/cmdtest/"}
	}
	mutations = append(mutations,
		mutation{"SL1", "a [slurm] plan run outside an allocation", "grid/slurm.go",
			"	if job == \"\" {", "	if false && job == \"\" {", []string{"-run", "^TestFindAllocation$", "./grid/"}},
		mutation{"SL2", "an allocation with fewer nodes than [slurm] nodes accepted", "grid/slurm.go",
			"	if len(nodes) < p.Slurm.Nodes {", "	if false && len(nodes) < p.Slurm.Nodes {", []string{"-run", "^TestFindAllocation$", "./grid/"}},
		mutation{"SL3", "roles needing more nodes than [slurm] nodes accepted", "grid/plan.go",
			"		if slurm && nodes > p.Slurm.Nodes {", "		if false && slurm && nodes > p.Slurm.Nodes {", []string{"-run", "^TestSlurmPlanRefusals$", "./grid/"}},
		mutation{"SL4", "{node} accepted in the bench, which runs on no role's node", "grid/plan.go",
			"			if bench && taskPlaceholders[name] {", "			if false && bench && taskPlaceholders[name] {", []string{"-run", "^TestSlurmPlanRefusals$", "./grid/"}},
		mutation{"SL5", "a Slurm placeholder accepted without [slurm]", "grid/plan.go",
			"			if !slurm && slurmPlaceholders[name] {", "			if false && !slurm && slurmPlaceholders[name] {", []string{"-run", "^TestSlurmPlanRefusals$", "./grid/"}},
		mutation{"SL6", "a server step that ignores SIGINT never killed", "grid/slurm.go",
			"				s.scancel(id, \"KILL\")\n				killed = append(", "				killed = append(", slurmGrid("^TestGridSlurmIgnoresSIGINT$")},
		mutation{"SL7", "a resume on other nodes accepted", "grid/grid.go",
			"		if strings.Join(start.Nodes, \",\") != strings.Join(g.slurmNodes(), \",\") {", "		if false {", slurmGrid("^TestGridSlurmInterruptResume$")},
		mutation{"SL8", "the idle gate names no node", "grid/slurm.go",
			"	if g.labels != nil {", "	if false && g.labels != nil {", slurmGrid("^TestGridSlurmHotNode$")},
		mutation{"SL9", "a node's sampler not told the leg's own processes (they read as foreign)", "grid/task.go",
			"	if pids := SystemProcs().Marked(*marker, nil); len(pids) > 0 {", "	if pids := SystemProcs().Marked(*marker, nil); false && len(pids) > 0 {", slurmGrid("^TestGridSlurmAA$")},
	)
}

// reportScalePkg runs report's tests of the pictures and tables at scale.
var reportScalePkg = []string{"-run=^(TestArmPastAggregateLegsIsAggregated|TestSpreadPastAggregateLegsIsADistribution|TestReportPastScaleLegs|TestReportOfManyComparisonsIsBounded)$", "./report/"}

// The report at scale: pictures aggregated past AggregateLegs legs an arm,
// tables and pictures bounded past ScaleLegs legs a report.
func init() {
	mutations = append(mutations,
		mutation{"RS1", "an arm of AggregateLegs legs drawn aggregated", "report/aggregate.go",
			"	return o > AggregateLegs || b > AggregateLegs", "	return o >= AggregateLegs || b >= AggregateLegs", reportScalePkg},
		mutation{"RS2", "the clock picture of an arm of many legs drawn leg by leg", "report/html.go",
			"	if cmp.aggregated() {\n		return d.figuresAggregated(w, i, ours, base)", "	if false {\n		return d.figuresAggregated(w, i, ours, base)", reportScalePkg},
		mutation{"RS3", "the spread of an arm of more than AggregateLegs legs drawn leg by leg", "report/spread.go",
			"			if len(arm.legs) > AggregateLegs {", "			if false {", reportScalePkg},
		mutation{"RS4", "an arm's extremes not kept as dots", "report/aggregate.go",
			"	keep := map[int]bool{lo: true, hi: true}", "	keep := map[int]bool{}", reportScalePkg},
		mutation{"RS5", "every leg with reasons drawn as a dot", "report/aggregate.go",
			"flagged[:min(len(flagged), OutlierDots)]", "flagged", reportScalePkg},
		mutation{"RS6", "the legs with clock reasons not marked on an aggregated picture", "report/aggregate.go",
			"		if clocks.HasClock(l.Reasons) {\n			mark(&reasonCols, x0)", "		if false {\n			mark(&reasonCols, x0)", reportScalePkg},
		mutation{"RS7", "a report of ScaleLegs legs written at scale", "report/scale.go",
			"	if total <= ScaleLegs {", "	if total < ScaleLegs {", reportScalePkg},
		mutation{"RS8", "a report at scale lists every leg with reasons", "report/scale.go",
			"		p.listed[k] = min(n, left)", "		p.listed[k] = n", reportScalePkg},
		mutation{"RS9", "every comparison of a report at scale written in full, with pictures", "report/scale.go",
			"return !d.atScale() || ci < DetailedComparisons", "return true", reportScalePkg},
		mutation{"RS10", "a ratio's leg.ineligible reasons listed one by one at scale", "report/scale.go",
			"		if !d.atScale() || r.Code != clocks.CodeLegIneligible || r.Run == 0 {", "		if true {", reportScalePkg},
		mutation{"RS11", "the scale guard's report.html size bound removed", "scripts/scale/report.go",
			"b.MaxMB > 0 && mb > b.MaxMB", "b.MaxMB > 0 && false", reportGuardPkg},
		mutation{"RS12", "the scale guard's render time bound removed", "scripts/scale/report.go",
			"r.browser != \"\" && net > b.MaxRenderS", "r.browser != \"\" && false", reportGuardPkg},
		mutation{"RS13", "the scale guard passes a picture of every leg", "scripts/scale/report.go",
			"b.MaxLegsDraw > 0 && r.widestLegs > b.MaxLegsDraw", "b.MaxLegsDraw > 0 && false", reportGuardPkg},
		mutation{"RS14", "the scale guard counts no clock picture's legs", "scripts/scale/report.go",
			"		if class == \"clock\" {\n			if n := strings.Count(body, legGroup); n > legs {", "		if class == \"clock\" {\n			if n := strings.Count(body, legGroup); false {", reportGuardPkg},
	)
}

// reportGuardPkg runs the scale guard's report part's tests.
var reportGuardPkg = []string{"-run=^TestReportGuard", "./scripts/scale/"}

// The scale guard's memory shapes: many arms of 20 legs and two arms of
// many legs, peak RSS of --out and its growth per leg
// (scripts/scale/shapes.go).
func init() {
	mutations = append(mutations,
		mutation{"MS1", "the shapes' growth per leg never fails the guard", "scripts/scale/shapes.go",
			"maxGrowth > 0 && per > maxGrowth {", "maxGrowth > 0 && false {", scalePkg},
		mutation{"MS2", "the two-arms shape's growth bound widened to 96 KiB a leg", "scripts/scale/shapes.go",
			"MaxGrowthKiB: 48,", "MaxGrowthKiB: 96,", scalePkg},
		mutation{"MS3", "a growth at exactly the bound fails", "scripts/scale/shapes.go",
			"maxGrowth > 0 && per > maxGrowth {", "maxGrowth > 0 && per >= maxGrowth {", scalePkg},
		mutation{"MS4", "the shapes' peak RSS never fails the guard", "scripts/scale/shapes.go",
			"maxRSS > 0 && rss > maxRSS {", "maxRSS > 0 && false {", scalePkg},
		mutation{"MS5", "the many-arms shape held to the two-arms shape's bounds", "scripts/scale/shapes.go",
			"		if g.shape == manyArms.name {", "		if false {", scalePkg},
	)
}

// What summarize keeps of each leg until the arms are compared
// (summarize's TestLiveMemoryPerLeg).
func init() {
	mutations = append(mutations,
		mutation{"MS6", "a leg's bench points as read kept once its all-runs.json row is written", "summarize/json.go",
			"		l.Memory.Raw = nil\n	}\n	l.bench = nil\n", "		l.Memory.Raw = nil\n	}\n", livePkg},
		mutation{"MS7", "the walk's file names of every leg held until the last leg is read", "summarize/summarize.go",
			"				files[i] = nil\n", "", livePkg},
	)
}

// The host stream read without a copy per line and on reused storage
// (summarize on host streams within cat × 3): each must still read what
// the strict reader reads, stream after stream.
func init() {
	reuse := []string{"-run=^TestFoldHostStreamReusesNothing$", "./clocks/"}
	tmpl := []string{"-run=^TestHostTemplateAgrees$", "./clocks/"}
	asStr := []string{"-run=^TestHostTemplateTimeAsStr$", "./clocks/"}
	mutations = append(mutations,
		mutation{"HP6", "a reused host fold keeps the stream before's processes", "clocks/host.go",
			"	clear(f.top)\n", "\n", reuse},
		mutation{"HP7", "a learned host template's values not put in the line it reads into", "clocks/hosttemplate.go",
			"	tm.ok = true\n	tm.restore()\n", "	tm.ok = true\n", tmpl},
		mutation{"HP8", "a process's comm hole not read when it changes", "clocks/hosttemplate.go",
			"			} else if pr := &l.Top[s.top]; pr.Comm != string(v) {", "			} else if pr := &l.Top[s.top]; false && pr.Comm != string(v) {", tmpl},
		mutation{"HP9", "a host t read without str's bytes in its seconds", "clocks/hosttemplate.go",
			" && plain(b[p.i+17:j]) {", " {", asStr},
		mutation{"HP10", "a host t read without str's bytes in its minute", "clocks/hosttemplate.go",
			"				string(b[p.i:p.i+17]) == string(tm.minute[:]) && plain(", "				plain(", asStr},
		mutation{"HP11", "two host reading times subtracted past int64", "clocks/host.go",
			"	if a > -lim && a < lim && b > -lim && b < lim {", "	if true {", []string{"-run=^TestSinceNS$", "./clocks/"}},
		mutation{"HP12", "reused busy ticks keep the leg before's", "clocks/host.go",
			"		return &BusyTicks{ticks: (*p)[:0]}", "		return &BusyTicks{ticks: *p}", []string{"-run=^TestBusyTicksReused$", "./clocks/"}},
		mutation{"HP13", "a host median of an even count the upper middle value", "clocks/host.go",
			"			m = slices.Max(xs[:n/2])/2 + m/2", "			m = m/2 + m/2", []string{"-run=^TestQuantileAsSorted$", "./clocks/"}},
		mutation{"HP14", "a host quantile's selection keeping the wrong side of its pivot", "clocks/host.go",
			"		case k >= gt:", "		case k > gt:", []string{"-run=^TestQuantileAsSorted$", "./clocks/"}},
		mutation{"HP16", "the scale guard's host-stream bound never fails", "scripts/scale/host.go",
			"r.what == \"--json\" && ratio > maxRatio {", "r.what == \"--json\" && false {", []string{"-run=^TestHostGuard$", "./scripts/scale/"}},
		mutation{"HP17", "the scale guard's host-stream bound widened to 7× cat", "scripts/scale/host.go",
			"var hostBounds = struct{ MaxRatio float64 }{MaxRatio: 6}", "var hostBounds = struct{ MaxRatio float64 }{MaxRatio: 7}", []string{"-run=^TestHostGuard$", "./scripts/scale/"}},
		mutation{"HP18", "build rebuilds the GPU record alone beside a host stream", "cmd/clockgate/build.go",
			"	if rec.Host, err = buildHost(opts.Stream, fold.Ticks); err != nil {", "	if _, err = buildHost(opts.Stream, fold.Ticks); err != nil {", []string{"-run=^TestBuildHostBlock$", "./cmd/clockgate/"}},
		mutation{"HP19", "build writes a record beside a host stream that does not fold", "cmd/clockgate/build.go",
			"	if rec.Host, err = buildHost(opts.Stream, fold.Ticks); err != nil {", "	if rec.Host, err = buildHost(opts.Stream, fold.Ticks); false && err != nil {", []string{"-run=^TestBuildHostBlock$", "./cmd/clockgate/"}},
		mutation{"HP15", "a host number of 16 digits read in one pass", "clocks/host.go",
			"	if whole == 0 || digits > 15 ||", "	if whole == 0 || digits > 16 ||", []string{"-run=^TestHostNumAsChecked$", "./clocks/"}},
	)
}

// anyOrderTests run the any-order scanner's tests, its memo's included.
var anyOrderTests = []string{"-run=^TestAnyOrder", "./clocks/"}

// The any-order scanner's memo of members and its bounds.
func init() {
	mutations = append(mutations,
		mutation{"KO1", "a line of more members than a learned layout keeps read by the any-order scanner", "clocks/anyorder.go",
			"		if b[i] != '\"' || j == maxMembers {", "		if b[i] != '\"' {", anyOrderTests},
		mutation{"KO2", "the memo's StaticID kept when an identity member changes", "clocks/anyorder.go",
			"		p.memoID = 0 // the identity", "		// the identity", anyOrderTests},
		mutation{"KO3", "a member that repeats the memo's only up to a digit read from the memo", "clocks/anyorder.go",
			"	if d == 0 && end < len(b) && endsMember[b[end]] {", "	if d == 0 && end < len(b) {", anyOrderTests},
		mutation{"KO4", "a row given the memo's StaticID though one of its identity members was read anew", "clocks/anyorder.go",
			"	if hits&baseIdentityKeys == baseIdentityKeys {", "	if hits&(1<<kBootID) != 0 {", anyOrderTests},
		mutation{"KO5", "a member whose first bytes find the memo's entry of a sample key read as that key whatever its name", "clocks/anyorder.go",
			"	if x0&m[0]|x1&m[1]|x2&m[2]|x3&m[3]|x4&m[4]|x5&m[5]|x6&m[6]|x7&m[7] == 0 && i+e.value < len(b) {", "	if i+e.value < len(b) {", anyOrderTests},
		mutation{"KO10", "a member at the end of its buffer compared with a window of zeros (the memo never used there)", "clocks/anyorder.go",
			"		var buf [memoText]byte\n		copy(buf[:], b[i:])\n", "		var buf [memoText]byte\n		copy(buf[:], b[i:i])\n", anyOrderTests},
		mutation{"KO6", "the scale guard's CPU bound of a layout against the sampler's own layout never checked", "scripts/scale/main.go",
			"		if b.MaxLayoutRatio > 0 && r.what == \"--json\" && r.layout && own != nil {", "		if false {", scalePkg},
		mutation{"KO7", "the scale guard's CPU bound of a layout against the sampler's own widened to 2.5×", "scripts/scale/main.go",
			"MaxOutRatio: 2, MaxLayoutRatio: 2}", "MaxOutRatio: 2, MaxLayoutRatio: 2.5}", scalePkg},
		mutation{"KO8", "the scale guard's bound of --out against --json never checked", "scripts/scale/main.go",
			"			if ratio := r.cpu.Seconds() / results[j].cpu.Seconds(); ratio > b.MaxOutRatio {", "			if ratio := r.cpu.Seconds() / results[j].cpu.Seconds(); false {", scalePkg},
		mutation{"KO9", "the scale guard's bound of --out against --json widened", "scripts/scale/main.go",
			"MaxOutRatio: 2, MaxLayoutRatio: 2}", "MaxOutRatio: 3, MaxLayoutRatio: 2}", scalePkg},
	)
}

// mhCheckTests run check's tests of a multi-host leg.
var mhCheckTests = []string{"-run=^TestMultiHostCheck", "./cmd/clockgate/"}

// mhReportTests run the report's tests of multi-host legs.
var mhReportTests = []string{"-run=^TestMultiHostReport", "./report/"}

// check reads a multi-host leg's client marks as summarize does.
func init() {
	mutations = append(mutations,
		mutation{"MR1", "check DIR not reading a multi-host leg's points.jsonl", "cmd/clockgate/legs.go",
			"				lf.Points = &clocks.PointEvidence{}\n				summarize.ReadMarks(lf.Points, marks, marks)\n", "				_ = summarize.ReadMarks\n", mhCheckTests},
		mutation{"MR2", "report.md without the per-host table of a multi-host leg", "report/markdown.go",
			"		if len(l.Hosts) > 0 {\n			multi = append(multi, l)", "		if len(l.Hosts) < 0 {\n			multi = append(multi, l)", mhReportTests},
		mutation{"MR3", "a GPU claimed by two hosts not a reason of either host", "report/report.go",
			"		return slices.Contains(strings.Split(list, \" and \"), h)", "		return slices.Contains(strings.Split(list, \" and \"), \"\"+h[:0])", mhReportTests},
		mutation{"MR4", "a host's reasons not gathered for its row", "report/report.go",
			"			if namesHost(r.Message, hl.Host) {", "			if false && namesHost(r.Message, hl.Host) {", mhReportTests},
		mutation{"MR5", "report.html without a clock picture per host", "report/html.go",
			"	if len(hosts) == 0 {\n		return nil\n	}", "	if len(hosts) >= 0 {\n		return nil\n	}", mhReportTests},
		mutation{"MR6", "a host's picture drawing every host's GPUs", "report/html.go",
			"	l.GPUs = l.GPUs[h.First : h.First+len(h.GPUs)]\n", "	l.GPUs = l.GPUs[h.First-h.First:]\n", mhReportTests},
	)
}
