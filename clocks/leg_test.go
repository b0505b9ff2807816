package clocks

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestCleanLegIsEligible(t *testing.T) {
	l := legOf(t, "r1", cleanWindow(bootF6), nil)
	wantCodes(t, l.Reasons)
	if !l.Trusted() || !l.Eligible() {
		t.Fatal("the clean capture is not eligible")
	}
}

func TestStreamReconciliation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(r *Record)
		want string
	}{
		{"boot id", func(r *Record) { r.BootID = boot2F }, "boot_id: record " + boot2F + ", stream " + bootF6},
		{"n", func(r *Record) { r.GPUs[0].SMClockMHz.N = 60; r.GPUs[0].IdleSamplesExcluded = 4 }, "sm_clock_mhz.n: record 60, stream 61"},
		{"min", func(r *Record) { r.GPUs[0].SMClockMHz.Min = ptr(2400); r.GPUs[0].SMClockMHz.SpreadPct = ptr(3.6) }, "sm_clock_mhz.min: record 2400, stream 2398"},
		{"median", func(r *Record) { r.GPUs[0].SMClockMHz.Median = ptr(2471.0) }, "sm_clock_mhz.median: record 2471, stream 2470"},
		{"max", func(r *Record) { r.GPUs[0].SMClockMHz.Max = ptr(2480); r.GPUs[0].SMClockMHz.SpreadPct = ptr(3.32) }, "sm_clock_mhz.max: record 2480, stream 2489"},
		{"spread edited to look clean", func(r *Record) {
			r.GPUs[0].SMClockMHz.Min, r.GPUs[0].SMClockMHz.Max, r.GPUs[0].SMClockMHz.SpreadPct = ptr(2470), ptr(2470), ptr(0.0)
		}, "sm_clock_mhz.min: record 2470, stream 2398"},
		{"gpu name", func(r *Record) { r.GPUs[0].Name = "NVIDIA H100 80GB HBM3" }, `gpu_name: record "NVIDIA H100 80GB HBM3", stream "NVIDIA GB10"`},
		{"gpu uuid", func(r *Record) { r.GPUs[0].UUID = "GPU-other" }, `gpu_uuid: record "GPU-other"`},
		{"driver", func(r *Record) { r.GPUs[0].DriverVersion = "590.44.01" }, `driver_version: record "590.44.01", stream "580.159.03"`},
		{"max clock", func(r *Record) { r.GPUs[0].ClocksMaxSMMHz = 1980 }, "clocks_max_sm_mhz: record 1980, stream 3003"},
		{"applications clock", func(r *Record) { r.GPUs[0].ClocksApplicationsGraphicsMHz = nil }, "clocks_applications_graphics_mhz: record null, stream 2418"},
		{"persistence", func(r *Record) { r.GPUs[0].PersistenceMode = "Disabled" }, `persistence_mode: record "Disabled", stream "Enabled"`},
		{"throttle cleaned", func(r *Record) { r.GPUs[0].ThrottleReasonsActive = []string{"0x0000000000000001"} }, "throttle_reasons_active: record [0x0000000000000001], stream [0x0000000000000000]"},
		{"idle count", func(r *Record) { r.GPUs[0].IdleSamplesExcluded = 0; r.Window.SamplesTotal = 61 }, "idle_samples_excluded: record 0, stream 3"},
		{"first_t", func(r *Record) { r.Window.FirstT = "2026-08-12T10:00:00.000Z" }, "window.first_t: record 2026-08-12T10:00:00.000Z, stream 2026-08-12T10:15:03.123Z"},
		{"last_t", func(r *Record) { r.Window.LastT = "2026-08-12T11:00:00.000Z" }, "window.last_t: record 2026-08-12T11:00:00.000Z"},
		{"samples total", func(r *Record) { r.Window.SamplesTotal = 65; r.GPUs[0].IdleSamplesExcluded = 4 }, "window.samples_total: record 65, stream 64"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			l := legOf(t, "r1", cleanWindow(bootF6), tc.edit)
			wantCodes(t, l.Reasons, CodeStreamMismatch)
			wantReason(t, l.Reasons, CodeStreamMismatch, "the record is not what its stream recomputes to", tc.want)
			if l.Trusted() {
				t.Fatal("a mismatched leg is trusted")
			}
		})
	}
}

func TestThrottleListReconcilesAsASet(t *testing.T) {
	ss := cleanWindow(bootF6)
	ss[5].ThrottleReasonsActive = "0x0000000000000100"
	l := legOf(t, "r1", ss, func(r *Record) {
		r.GPUs[0].ThrottleReasonsActive = []string{"0x100", "0x0000000000000000"} // other order, other spelling
	})
	wantCodes(t, l.Reasons)
}

func TestRoundedSpreadReconciles(t *testing.T) {
	// 2470/2398/2489: 3.6842… recorded as 3.68.
	l := legOf(t, "r1", cleanWindow(bootF6), func(r *Record) { r.GPUs[0].SMClockMHz.SpreadPct = ptr(3.68) })
	wantCodes(t, l.Reasons)
}

func TestStreamDefectsCarryTheirReasonAlone(t *testing.T) {
	ss := window(bootF6, flat(2190, 1), 300) // would fail every floor if judged
	rec := recordJSON(t, recordOf(t, ss, StopMaxDuration))
	stream := streamOf(ss)

	l := JudgeLeg("r1", rec, nil, fs.ErrNotExist)
	wantCodes(t, l.Reasons, CodeStreamMissing)

	torn := stream[:len(stream)-40]
	l = JudgeLeg("r1", rec, bytes.NewReader(torn), nil)
	wantCodes(t, l.Reasons, CodeStreamInvalid)
	wantReason(t, l.Reasons, CodeStreamInvalid, "line 301:365: torn final line (no newline): unexpected end of input in an object")

	bad := bytes.Replace(stream, []byte(`"sm_clock_mhz":1100`), []byte(`"sm_clock_mhz":"1100"`), 1)
	l = JudgeLeg("r1", rec, bytes.NewReader(bad), nil)
	wantCodes(t, l.Reasons, CodeStreamInvalid)
	wantReason(t, l.Reasons, CodeStreamInvalid, `line 2: sm_clock_mhz: want an integer, found string "1100"`)

	l = JudgeLeg("r1", rec, bytes.NewReader(nil), nil)
	wantCodes(t, l.Reasons, CodeStreamInvalid)
	wantReason(t, l.Reasons, CodeStreamInvalid, "no samples")
}

func TestLoadLegFiles(t *testing.T) {
	dir := t.TempDir()
	ss := cleanWindow(bootF6)
	rec, stream := filepath.Join(dir, "r1.summary.json"), filepath.Join(dir, "r1.samples.jsonl")
	files := LegFiles{Name: "r1", RecordPath: rec, StreamPath: stream}

	l := LoadLeg(files)
	wantCodes(t, l.Reasons, CodeMissing)
	wantReason(t, l.Reasons, CodeMissing, "no clock record at "+rec)

	must(t, os.WriteFile(rec, recordJSON(t, recordOf(t, ss, StopPIDExit)), 0o644))
	l = LoadLeg(files)
	wantCodes(t, l.Reasons, CodeStreamMissing)

	must(t, os.WriteFile(stream, streamOf(ss), 0o644))
	l = LoadLeg(files)
	wantCodes(t, l.Reasons)

	// A directory where the stream belongs is refused, not read.
	must(t, os.Remove(stream))
	must(t, os.Mkdir(stream, 0o755))
	l = LoadLeg(files)
	wantCodes(t, l.Reasons, CodeStreamMissing)
	wantReason(t, l.Reasons, CodeStreamMissing, "no readable clock stream beside the record: "+stream+": not a regular file (a directory)")
	if !errors.Is(l.Unreadable, ErrNotRegular) {
		t.Fatalf("Unreadable = %v", l.Unreadable)
	}

	// Under a root, messages name the paths as given, never the root.
	must(t, os.Remove(stream))
	rel := LoadLeg(LegFiles{Name: "r1", Engine: "vllm", Run: 1, Root: dir, RecordPath: "r1.summary.json", StreamPath: "r1.samples.jsonl"})
	wantCodes(t, rel.Reasons, CodeStreamMissing)
	wantReason(t, rel.Reasons, CodeStreamMissing, "no readable clock stream beside the record: r1.samples.jsonl: no such file or directory")
	if r := rel.Reasons[0]; r.Scope != ScopeLeg || r.Engine != "vllm" || r.Run != 1 || strings.Contains(r.Message, dir) {
		t.Fatalf("reason %+v", r)
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestBusySampleFloor(t *testing.T) {
	for _, tc := range []struct {
		n    int
		fail bool
	}{{MinBusySamples - 1, true}, {MinBusySamples, false}, {MinBusySamples + 1, false}} {
		t.Run(fmt.Sprint(tc.n), func(t *testing.T) {
			l := legOf(t, "r1", window(bootF6, flat(2190, tc.n), 0), nil)
			if !tc.fail {
				wantCodes(t, l.Reasons)
				return
			}
			wantCodes(t, l.Reasons, CodeBusySamples)
			wantReason(t, l.Reasons, CodeBusySamples, fmt.Sprintf("busy samples %d < 30: 0 idle samples excluded of %d", tc.n, tc.n))
		})
	}
}

// One busy sample among 301: its spread is 0.00%, the best score there is,
// so the floor must refuse it on the count, never let the spread speak.
func TestOneBusySampleOf301RefusedOnTheCount(t *testing.T) {
	l := legOf(t, "r1", window(bootF6, []int{2470}, 300), nil)
	wantCodes(t, l.Reasons, CodeBusySamples, CodeBusyFraction)
	wantReason(t, l.Reasons, CodeBusySamples, "busy samples 1 < 30: 300 idle samples excluded of 301")
	wantReason(t, l.Reasons, CodeBusyFraction, "busy fraction 1/301 = 0.33% < 50%")
	wantNoCode(t, l.Reasons, CodeSpread)
}

// Under the floor a wide spread is not evaluated either.
func TestSpreadNotEvaluatedBelowTheFloor(t *testing.T) {
	l := legOf(t, "r1", window(bootF6, []int{1781, 2398, 2470}, 0), nil)
	wantCodes(t, l.Reasons, CodeBusySamples)
}

// A diluted window clears the count and fails the fraction.
func TestDilutedWindowFailsTheFraction(t *testing.T) {
	l := legOf(t, "r1", window(bootF6, flat(2190, 30), 3000), nil)
	wantCodes(t, l.Reasons, CodeBusyFraction)
	wantReason(t, l.Reasons, CodeBusyFraction, "busy fraction 30/3030 = 0.99% < 50%: 3000 idle samples excluded")
}

func TestBusyFractionFloor(t *testing.T) {
	for _, tc := range []struct {
		busy, idle int
		fail       bool
	}{{40, 40, false}, {40, 41, true}, {41, 40, false}, {30, 31, true}} {
		t.Run(fmt.Sprintf("%d/%d", tc.busy, tc.busy+tc.idle), func(t *testing.T) {
			l := legOf(t, "r1", window(bootF6, flat(2190, tc.busy), tc.idle), nil)
			if !tc.fail {
				wantCodes(t, l.Reasons)
				return
			}
			wantCodes(t, l.Reasons, CodeBusyFraction)
			wantReason(t, l.Reasons, CodeBusyFraction, fmt.Sprintf("busy fraction %d/%d", tc.busy, tc.busy+tc.idle), "< 50%")
		})
	}
}

func TestSpreadThreshold(t *testing.T) {
	// median 2000: 5.0% is a 100 MHz span exactly.
	for _, tc := range []struct {
		name     string
		min, max int
		fail     string
	}{
		{"just under", 1901, 2000, ""},
		{"at 5.0%", 1900, 2000, ""},
		{"at 5.0% above the median", 2000, 2100, ""},
		{"just over", 1899, 2000, "spread 5.05% > 5.0%: min 1899, median 2000, max 2000 MHz, n=61"},
		{"the 26% within-boot disagreement", 1781, 2398, "spread"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			busy := append(flat(2000, 59), tc.min, tc.max)
			if tc.min == 1781 {
				busy = append(flat(2398, 31), flat(1781, 30)...)
			}
			l := legOf(t, "r1", window(bootF6, busy, 0), nil)
			if tc.fail == "" {
				wantCodes(t, l.Reasons)
				return
			}
			wantCodes(t, l.Reasons, CodeSpread)
			wantReason(t, l.Reasons, CodeSpread, tc.fail)
		})
	}
}

func TestSpreadAtBoundaryWithHalfMedian(t *testing.T) {
	// median (2000+2001)/2 = 2000.5; 5.0% of it is 100.025, so a 100 MHz span
	// passes and 101 fails.
	pass := append(append(flat(2000, 30), flat(2001, 30)...), 1901)
	l := legOf(t, "r1", window(bootF6, append(pass, 2001), 0), nil)
	wantCodes(t, l.Reasons)
	fail := append(append(flat(2000, 30), flat(2001, 30)...), 1900, 2001)
	l = legOf(t, "r1", window(bootF6, fail, 0), nil)
	wantReason(t, l.Reasons, CodeSpread, "spread 5.05% > 5.0%: min 1900, median 2000.5, max 2001 MHz, n=62")
}

func TestThrottleBits(t *testing.T) {
	for bit := uint64(1); bit <= 1<<15; bit <<= 1 {
		name := fmt.Sprintf("%s %s", FormatThrottle(bit), ThrottleBitName(bit))
		t.Run(name, func(t *testing.T) {
			ss := cleanWindow(bootF6)
			ss[10].ThrottleReasonsActive = FormatThrottle(bit)
			l := legOf(t, "r1", ss, nil)
			if bit&BenignThrottleMask != 0 {
				wantCodes(t, l.Reasons)
				return
			}
			wantCodes(t, l.Reasons, CodeThrottle)
			wantReason(t, l.Reasons, CodeThrottle, "non-benign throttle bits in busy samples: "+name, "benign mask 0x0000000000000103")
		})
	}
}

func TestThrottleNamesEveryBit(t *testing.T) {
	ss := cleanWindow(bootF6)
	ss[3].ThrottleReasonsActive = "0x0000000000000044" // SwPowerCap | HwThermal
	ss[4].ThrottleReasonsActive = "0x0000000000000101" // benign
	l := legOf(t, "r1", ss, nil)
	wantReason(t, l.Reasons, CodeThrottle, "0x0000000000000004 SwPowerCap, 0x0000000000000040 HwThermal (seen 0x0000000000000000, 0x0000000000000044, 0x0000000000000101")
}

func TestThrottleOnIdleSampleIgnored(t *testing.T) {
	ss := cleanWindow(bootF6)
	ss[len(ss)-1].ThrottleReasonsActive = "0x0000000000000008"
	wantCodes(t, legOf(t, "r1", ss, nil).Reasons)
}

func TestPersistenceEverySample(t *testing.T) {
	ss := cleanWindow(bootF6)
	ss[62].PersistenceMode = "Disabled" // an idle sample: persistence counts in every sample
	l := legOf(t, "r1", ss, nil)
	wantCodes(t, l.Reasons, CodePersistence)
	wantReason(t, l.Reasons, CodePersistence, `persistence_mode "Disabled" in 1 of 64 samples (first at line 63); want "Enabled"`)
}

func TestStaticDriftWithinWindow(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *Sample)
		want string
	}{
		{"boot_id", func(s *Sample) { s.BootID = boot2F }, "boot_id changed at line 31: " + bootF6 + ", then " + boot2F},
		{"gpu_name", func(s *Sample) { s.GPUName = "NVIDIA H100 80GB HBM3" }, `gpu_name changed at line 31: "NVIDIA GB10", then "NVIDIA H100 80GB HBM3"`},
		{"gpu_uuid", func(s *Sample) { s.GPUUUID = "GPU-other" }, `gpu_uuid changed at line 31`},
		{"driver_version", func(s *Sample) { s.DriverVersion = "590.44.01" }, `driver_version changed at line 31: "580.159.03", then "590.44.01"`},
		{"clocks_max_sm_mhz", func(s *Sample) { s.ClocksMaxSMMHz = 1980 }, "clocks_max_sm_mhz changed at line 31: 3003, then 1980"},
		{"clocks_applications_graphics_mhz", func(s *Sample) { s.ClocksApplicationsGraphicsMHz = nil }, "clocks_applications_graphics_mhz changed at line 31: 2418, then null"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := cleanWindow(bootF6)
			for _, s := range ss[30:] {
				tc.edit(s)
			}
			l := legOf(t, "r1", ss, nil)
			wantCodes(t, l.Reasons, CodeStaticDrift)
			wantReason(t, l.Reasons, CodeStaticDrift, "not constant within the window: "+tc.want)
		})
	}
}

func TestPartialWindow(t *testing.T) {
	l := legOf(t, "r1", cleanWindow(bootF6), func(r *Record) { r.Window.StopReason = StopMaxDuration })
	wantCodes(t, l.Reasons, CodePartialWindow)
	wantReason(t, l.Reasons, CodePartialWindow, "stop_reason max-duration: the sampler was cut off at --max-duration")
	for _, ok := range []string{StopPIDExit, StopCommandExit, StopSignal} {
		l := legOf(t, "r1", cleanWindow(bootF6), func(r *Record) { r.Window.StopReason = ok })
		wantCodes(t, l.Reasons)
	}
}

func TestEveryLegFailureReported(t *testing.T) {
	ss := window(bootF6, append(flat(2470, 31), flat(1781, 30)...), 70)
	ss[0].ThrottleReasonsActive = "0x0000000000000020"
	ss[0].PersistenceMode = "Disabled"
	ss[100].DriverVersion = "590.44.01"
	l := legOf(t, "r1", ss, func(r *Record) { r.Window.StopReason = StopMaxDuration; r.GPUs[0].PersistenceMode = "Disabled" })
	wantCodes(t, l.Reasons, CodeBusyFraction, CodeSpread, CodeThrottle, CodePersistence, CodeStaticDrift, CodePartialWindow)
	if !strings.Contains(l.Reasons[2].Message, "SwThermal") {
		t.Fatal(l.Reasons[2].Message)
	}
}
