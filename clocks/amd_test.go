package clocks

import (
	"bytes"
	"strings"
	"testing"
)

// mi300x is one AMD Instinct MI300X sample: eight XCDs, the lowest of
// them its SM clock, no persistence mode, pstate or applications clock.
func mi300x(i int, boot string, mhz, util int) *Sample {
	s := gb10(i, boot, mhz, util)
	s.GPUUUID = "abff74a1-0000-1000-80d1-3c23a9580558"
	s.GPUName = "AMD Instinct MI300X"
	s.DriverVersion = "6.10.5"
	s.ClocksMaxSMMHz = 2100
	amdify(s)
	s.XCDClocksMHz = []int{mhz + 12, mhz + 30, mhz, mhz + 8, mhz + 41, mhz + 5, mhz + 19, mhz + 26}
	return s
}

func amdWindow(boot string, busy []int, idle int) []*Sample {
	var out []*Sample
	for i, mhz := range busy {
		out = append(out, mi300x(i, boot, mhz, 97))
	}
	for i := 0; i < idle; i++ {
		out = append(out, mi300x(len(busy)+i, boot, 140, 0))
	}
	return out
}

func TestAMDSampleLine(t *testing.T) {
	s := mi300x(0, boot13, 2080, 97)
	line := string(s.AppendJSON(nil))
	for _, want := range []string{`"persistence_mode":null`, `"pstate":null`, `"clocks_applications_graphics_mhz":null`,
		`"vendor":"amd"`, `"perf_level":"AUTO"`, `"memory_partition":"NPS1"`, `"xcd_clocks_mhz":[2092,2110,2080,2088,2121,2085,2099,2106]`} {
		if !strings.Contains(line, want) {
			t.Errorf("line %s lacks %s", line, want)
		}
	}
	got, err := ParseSample([]byte(line))
	if err != nil {
		t.Fatal(err)
	}
	if b := got.AppendJSON(nil); string(b) != line {
		t.Fatalf("read back as\n%s\nwant\n%s", b, line)
	}
	// A stream of them: the learned template and the member cache read
	// the lines that follow, and must agree with the oracle.
	sameFold(t, streamOf(amdWindow(boot13, repeat([]int{2080, 2095, 2080, 2110}, 20), 3)))
	// NVIDIA and AMD lines in one stream (two GPUs).
	var mixed []*Sample
	for i := 0; i < 40; i++ {
		n, a := gb10(i, boot13, 2190, 97), mi300x(i, boot13, 2080+i%3, 97)
		a.GPUIndex = 1
		mixed = append(mixed, n, a)
	}
	sameFold(t, streamOf(mixed))
}

func TestAMDSampleDefects(t *testing.T) {
	amd := string(mi300x(0, boot13, 2080, 97).AppendJSON(nil))
	nv := string(gb10(0, boot13, 2190, 97).AppendJSON(nil))
	for _, tc := range []struct {
		name, line, want string
	}{
		{"persistence string on AMD", strings.Replace(amd, `"persistence_mode":null`, `"persistence_mode":"Enabled"`, 1),
			`persistence_mode: want null for vendor "amd" (AMD GPUs have none), found string "Enabled"`},
		{"pstate string on AMD", strings.Replace(amd, `"pstate":null`, `"pstate":"P0"`, 1),
			`pstate: want null for vendor "amd" (AMD GPUs have none), found string "P0"`},
		{"persistence null on NVIDIA", strings.Replace(nv, `"persistence_mode":"Enabled"`, `"persistence_mode":null`, 1),
			`persistence_mode: want a string, found null`},
		{"pstate null on NVIDIA", strings.Replace(nv, `"pstate":"P0"`, `"pstate":null`, 1),
			`pstate: want a string, found null`},
		{"unknown vendor", strings.Replace(amd, `"vendor":"amd"`, `"vendor":"AMD"`, 1),
			`persistence_mode: want a string, found null`},
		{"unknown vendor on an NVIDIA line", strings.Replace(nv, `}`, `,"vendor":"nvidia"}`, 1),
			`vendor: want "amd" (NVIDIA samples have no vendor key), found string "nvidia"`},
		{"vendor a number", strings.Replace(nv, `}`, `,"vendor":1}`, 1), `vendor: want a string, found number 1`},
		{"perf level on NVIDIA", strings.Replace(nv, `}`, `,"perf_level":"AUTO"}`, 1), `perf_level: only an AMD GPU's sample (vendor "amd") has it`},
		{"memory partition on NVIDIA", strings.Replace(nv, `}`, `,"memory_partition":"NPS1"}`, 1), `memory_partition: only an AMD GPU's sample (vendor "amd") has it`},
		{"XCD clocks on NVIDIA", strings.Replace(nv, `}`, `,"xcd_clocks_mhz":[2190]}`, 1), `xcd_clocks_mhz: only an AMD GPU's sample (vendor "amd") has it`},
		{"AMD without perf level", strings.Replace(amd, `"perf_level":"AUTO",`, ``, 1), `perf_level: missing: every AMD GPU's sample (vendor "amd") has it`},
		{"AMD without XCD clocks", strings.Replace(amd, `,"xcd_clocks_mhz":[2092,2110,2080,2088,2121,2085,2099,2106]`, ``, 1),
			`xcd_clocks_mhz: missing: every AMD GPU's sample (vendor "amd") has it`},
		{"perf level empty", strings.Replace(amd, `"perf_level":"AUTO"`, `"perf_level":""`, 1), `perf_level: empty string`},
		{"perf level a number", strings.Replace(amd, `"perf_level":"AUTO"`, `"perf_level":3`, 1), `perf_level: want a string, found number 3`},
		{"memory partition empty", strings.Replace(amd, `"memory_partition":"NPS1"`, `"memory_partition":""`, 1), `memory_partition: empty string`},
		{"XCD clocks not an array", strings.Replace(amd, `[2092,2110,2080,2088,2121,2085,2099,2106]`, `2080`, 1),
			`xcd_clocks_mhz: want an array of integers, found number 2080`},
		{"XCD clocks empty", strings.Replace(amd, `[2092,2110,2080,2088,2121,2085,2099,2106]`, `[ ]`, 1),
			`xcd_clocks_mhz: empty array: want the GFX clock of every XCD`},
		{"XCD clock N/A", strings.Replace(amd, `[2092,2110,2080,2088,2121,2085,2099,2106]`, `[2092,"N/A",2080]`, 1),
			`xcd_clocks_mhz: element 1: want a positive integer, found string "N/A"`},
		{"XCD clock a fraction", strings.Replace(amd, `[2092,2110,2080,2088,2121,2085,2099,2106]`, `[2080, 2092.5]`, 1),
			`xcd_clocks_mhz: element 1: want a positive integer, found number 2092.5`},
		{"XCD clock zero", strings.Replace(amd, `[2092,2110,2080,2088,2121,2085,2099,2106]`, `[2080,0]`, 1),
			`xcd_clocks_mhz: element 1: want a positive integer, found 0`},
		{"XCD clock past the ceiling", strings.Replace(amd, `[2092,2110,2080,2088,2121,2085,2099,2106]`, `[2080,1099511627777]`, 1),
			`xcd_clocks_mhz: element 1: want a positive integer, found 1099511627777`},
		{"XCD clock an object", strings.Replace(amd, `[2092,2110,2080,2088,2121,2085,2099,2106]`, `[{"value":2080}]`, 1),
			`xcd_clocks_mhz: element 0: want a positive integer, found object`},
		{"lowest XCD is not the SM clock", strings.Replace(amd, `[2092,2110,2080,2088,2121,2085,2099,2106]`, `[2092,2110,2088]`, 1),
			`xcd_clocks_mhz: lowest XCD clock 2088 MHz, but sm_clock_mhz is 2080: it must be the lowest of them`},
		{"XCD lower than the SM clock", strings.Replace(amd, `2085,`, `2001,`, 1),
			`xcd_clocks_mhz: lowest XCD clock 2001 MHz, but sm_clock_mhz is 2080: it must be the lowest of them`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseSample([]byte(tc.line))
			if err == nil || err.Error() != tc.want {
				t.Fatalf("%s: %v, want %q", tc.line, err, tc.want)
			}
			// The same line after valid ones (read through the learned
			// template) and alone: the reader agrees with the oracle.
			ok := streamOf(amdWindow(boot13, flat(2080, 3), 0))
			sameStream(t, append(ok, tc.line+"\n"...))
			sameStream(t, []byte(tc.line+"\n"))
		})
	}
}

func TestAMDLegHasNoPersistenceCheck(t *testing.T) {
	ss := amdWindow(bootF6, append(flat(2080, 59), 2040, 2110), 3)
	l := legOf(t, "r1", ss, nil)
	if len(l.Reasons) != 0 {
		t.Fatalf("clean AMD leg: %+v", l.Reasons)
	}
	rec := recordJSON(t, recordOf(t, ss, StopPIDExit))
	for _, want := range []string{`"persistence_mode":null`, `"vendor":"amd"`, `"perf_level":"AUTO"`, `"memory_partition":"NPS1"`} {
		if !bytes.Contains(rec, []byte(want)) {
			t.Errorf("record %s lacks %s", rec, want)
		}
	}
	r, err := ParseRecord(rec)
	if err != nil {
		t.Fatal(err)
	}
	if g := r.GPUs[0]; g.Vendor != VendorAMD || g.PerfLevel != "AUTO" || g.MemoryPartition != "NPS1" || g.PersistenceMode != "" {
		t.Fatalf("record read back as %+v", g)
	}
	// The same window as NVIDIA samples with persistence disabled is
	// clock.persistence: the check is skipped for AMD only.
	for _, s := range ss {
		s.Vendor, s.PerfLevel, s.MemoryPartition, s.XCDClocksMHz, s.PersistenceMode, s.PState = "", "", "", nil, "Disabled", "P0"
	}
	wantCodes(t, legOf(t, "r1", ss, nil).Reasons, CodePersistence)
}

func TestAMDStaticDriftWithinWindow(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(s *Sample)
		want string
	}{
		{"perf_level", func(s *Sample) { s.PerfLevel = "MANUAL" }, `perf_level changed at line 31: "AUTO", then "MANUAL"`},
		{"memory_partition", func(s *Sample) { s.MemoryPartition = "NPS4" }, `memory_partition changed at line 31: "NPS1", then "NPS4"`},
		{"memory_partition gone", func(s *Sample) { s.MemoryPartition = "" }, `memory_partition changed at line 31: "NPS1", then null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ss := amdWindow(bootF6, flat(2080, 61), 3)
			for _, s := range ss[30:] {
				tc.edit(s)
			}
			l := legOf(t, "r1", ss, nil)
			wantCodes(t, l.Reasons, CodeStaticDrift)
			wantReason(t, l.Reasons, CodeStaticDrift, "not constant within the window: "+tc.want)
		})
	}
}

func TestAMDRecordDefects(t *testing.T) {
	good := recordJSON(t, recordOf(t, amdWindow(bootF6, flat(2080, 61), 3), StopPIDExit))
	nvidia := recordJSON(t, recordOf(t, cleanWindow(bootF6), StopPIDExit))
	for _, tc := range []struct {
		name     string
		rec      []byte
		from, to string
		want     string
	}{
		{"persistence on AMD", good, `"persistence_mode":null`, `"persistence_mode":"Enabled"`,
			`persistence_mode: want null for vendor "amd" (AMD GPUs have none), found string "Enabled"`},
		{"other vendor", good, `"vendor":"amd"`, `"vendor":"intel"`, `vendor: want "amd" (NVIDIA records have no vendor key), found string "intel"`},
		{"AMD without perf level", good, `"perf_level":"AUTO",`, ``, `perf_level: missing`},
		{"perf level on NVIDIA", nvidia, `"idle_samples_excluded"`, `"perf_level":"AUTO","idle_samples_excluded"`, `perf_level: only an AMD GPU's sample (vendor "amd") has it`},
		{"null persistence on NVIDIA", nvidia, `"persistence_mode":"Enabled"`, `"persistence_mode":null`, `persistence_mode: want a string, found null`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec := bytes.Replace(tc.rec, []byte(tc.from), []byte(tc.to), 1)
			if bytes.Equal(rec, tc.rec) {
				t.Fatalf("%q not in %s", tc.from, tc.rec)
			}
			_, err := ParseRecord(rec)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("%v, want %q", err, tc.want)
			}
		})
	}
}

func TestAMDArmAgainstNVIDIAArm(t *testing.T) {
	b := Compare(arm(t, "sglang", false, amdWindow(boot13, flat(2080, 50), 0)), arm(t, "vllm", false, flatWindow(boot13, 2190)), false)
	wantReason(t, b.Reasons, CodeHardwareMismatch, `vendor: sglang "amd", vllm "nvidia"`)
	if b.Established {
		t.Fatal("an AMD arm against an NVIDIA arm established")
	}
	// Two AMD arms of one machine compare as NVIDIA arms do.
	b = Compare(arm(t, "sglang", false, amdWindow(boot13, flat(2080, 50), 0)), arm(t, "vllm", false, amdWindow(boot13, flat(2080, 50), 0)), false)
	if !b.Established {
		t.Fatalf("two AMD arms: %+v", b.Reasons)
	}
}

func TestEnforcedPowerLimitIsAnOptionalNumber(t *testing.T) {
	s := mi300x(0, boot13, 2080, 97)
	s.EnforcedPowerLimitW = ptr(750.0)
	line := string(s.AppendJSON(nil))
	if !strings.Contains(line, `"enforced_power_limit_w":750`) {
		t.Fatalf("line %s lacks the limit", line)
	}
	got, err := ParseSample([]byte(line))
	if err != nil || got.EnforcedPowerLimitW == nil || *got.EnforcedPowerLimitW != 750 {
		t.Fatalf("read back as %+v, %v", got, err)
	}
	for _, tc := range []struct{ from, to, want string }{
		{`"enforced_power_limit_w":750`, `"enforced_power_limit_w":"N/A"`, `enforced_power_limit_w: want a number, found string "N/A"`},
		{`"enforced_power_limit_w":750`, `"enforced_power_limit_w":null`, ``},
	} {
		bad := strings.Replace(line, tc.from, tc.to, 1)
		_, err := ParseSample([]byte(bad))
		if tc.want == "" && err != nil || tc.want != "" && (err == nil || err.Error() != tc.want) {
			t.Errorf("%s: %v, want %q", bad, err, tc.want)
		}
		sameStream(t, []byte(bad+"\n"))
	}
	ss := amdWindow(boot13, flat(2080, 5), 0)
	for _, s := range ss {
		s.EnforcedPowerLimitW = ptr(750.0)
	}
	sameFold(t, streamOf(ss))
}

func TestAMDThrottleNamesTheViolation(t *testing.T) {
	ss := amdWindow(bootF6, flat(2080, 61), 3)
	ss[10].ThrottleReasonsActive = "0x0000000000000040"
	ss[20].ThrottleReasonsActive = "0x0000000000000008"
	l := legOf(t, "r1", ss, nil)
	wantCodes(t, l.Reasons, CodeThrottle)
	wantReason(t, l.Reasons, CodeThrottle, "violation bits in busy samples: 0x0000000000000008 HwSlowdown (PROCHOT), 0x0000000000000040 HwThermal (thermal: socket, VR or HBM, TVIOL) "+
		"(seen 0x0000000000000000, 0x0000000000000008, 0x0000000000000040; derived from amd-smi's violation accumulators advancing between readings: "+
		"0x0000000000000004 SwPowerCap (power: PPT, PVIOL), 0x0000000000000008 HwSlowdown (PROCHOT), 0x0000000000000040 HwThermal (thermal: socket, VR or HBM, TVIOL))")
	if strings.Contains(l.Reasons[0].Message, "ApplicationsClocksSetting") {
		t.Errorf("an NVIDIA-only bit named for AMD: %s", l.Reasons[0].Message)
	}
}

func TestAMDClockAboveMaxIsRecordedAsRead(t *testing.T) {
	// amd-smi has printed a current clock of 2107 MHz against a max_clk of
	// 2102: real, and recorded as read, its share of max over 100%.
	ss := amdWindow(bootF6, flat(2107, 61), 3)
	for _, s := range ss {
		s.ClocksMaxSMMHz = 2102
	}
	l := legOf(t, "r1", ss, nil)
	if len(l.Reasons) != 0 {
		t.Fatalf("a clock above max_clk refused: %+v", l.Reasons)
	}
	if g := l.Record.GPUs[0]; *g.SMClockMHz.Median != 2107 || g.ClocksMaxSMMHz != 2102 {
		t.Fatalf("record %+v", g)
	}
}

func TestAMDSeveralGPUs(t *testing.T) {
	// TP=2 on two MI300X: one row per GPU per reading; the record's GPU
	// blocks carry the vendor keys, and the leg is judged per GPU.
	var ss []*Sample
	for i, mhz := range append(flat(2080, 59), 2060, 2100) {
		a, b := mi300x(i, bootF6, mhz, 97), mi300x(i, bootF6, mhz+4, 97)
		b.GPUIndex, b.GPUUUID = 1, "bcff74a1-0000-1000-80d1-3c23a9580559"
		ss = append(ss, a, b)
	}
	l := legOf(t, "r1", ss, nil)
	if len(l.Reasons) != 0 {
		t.Fatalf("two AMD GPUs: %+v", l.Reasons)
	}
	rec := recordJSON(t, recordOf(t, ss, StopPIDExit))
	if n := bytes.Count(rec, []byte(`"vendor":"amd","perf_level":"AUTO","memory_partition":"NPS1"`)); n != 2 {
		t.Fatalf("record %s: %d GPU blocks with the vendor keys, want 2", rec, n)
	}
	if n := bytes.Count(rec, []byte(`"persistence_mode":null`)); n != 2 {
		t.Fatalf("record %s: %d null persistence modes, want 2", rec, n)
	}
	// One GPU's perf level changed mid-window: static drift on that GPU.
	for _, s := range ss[61:] {
		if s.GPUIndex == 1 {
			s.PerfLevel = "MANUAL"
		}
	}
	l = legOf(t, "r1", ss, nil)
	wantCodes(t, l.Reasons, CodeStaticDrift)
	wantReason(t, l.Reasons, CodeStaticDrift, `GPU 1: not constant within the window: perf_level changed at line 62: "AUTO", then "MANUAL"`)
}

func TestAMDArraySyntaxAsTheOracle(t *testing.T) {
	amd := string(mi300x(0, boot13, 2080, 97).AppendJSON(nil))
	arr := `[2092,2110,2080,2088,2121,2085,2099,2106]`
	for _, bad := range []string{`[2080,]`, `[2080`, `[2080 2090]`, `[,2080]`, `[[2080]]`, `[2080,-]`, `[2080,01]`, `[2080,1e999]`,
		`[2080,NaN]`, `[2080, "x`, `[ 2080 , 2090 ]`, `[-2080]`, `[2080.0]`, `[true]`, `[null]`, `[2080,{"a":1,"a":2}]`} {
		line := strings.Replace(amd, arr, bad, 1)
		ok := streamOf(amdWindow(boot13, flat(2080, 3), 0))
		sameStream(t, append(ok, line+"\n"...))
		sameStream(t, []byte(line+"\n"))
	}
}
