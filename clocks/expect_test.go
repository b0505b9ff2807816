package clocks

import (
	"strings"
	"testing"
)

// expectLeg judges a leg of the window ss whose record declares e.
func expectLeg(t *testing.T, ss []*Sample, decls ...string) *Leg {
	t.Helper()
	e, err := ParseExpect(decls)
	if err != nil {
		t.Fatal(err)
	}
	return legOf(t, "r1", ss, func(r *Record) { r.Expect = e })
}

// The done case of SPEC §12.2: an H200 at its 700 W limit cannot hold a
// locked 1830 MHz; every busy sample is held at the cap (SwPowerCap) near
// 1755 MHz, and the declared lock is clock.expectation at the leg, naming
// declared and measured and the cap.
func TestExpectLockThePowerCapCannotHold(t *testing.T) {
	capped := pm{capped: flat(1755, 60), limitW: 700, bits: true, counters: true}.window(boot13)
	l := expectLeg(t, capped, "sm_clock_mhz=1830", "power_limit_w=700")
	wantReason(t, l.Reasons, CodeExpectation, "GPU 0: declared sm_clock_mhz=1830 (a locked clock), measured busy median 1755 MHz: 4.10% below it, more than 1.0%",
		"60 of 60 busy samples were held at the power cap (SwPowerCap at 700 W): the cap cannot hold the declared lock")
	for _, r := range l.Reasons {
		if r.Code == CodeExpectation && strings.Contains(r.Message, "power_limit_w") {
			t.Errorf("the limit was as declared: %s", r.Message)
		}
	}
	// The same window without the declaration is judged as before.
	wantNoCode(t, legOf(t, "r1", capped, nil).Reasons, CodeExpectation)
	// A serving window: the free busy median (1980 MHz) is the measure.
	wantNoCode(t, expectLeg(t, serving().window(boot13), "sm_clock_mhz=1980").Reasons, CodeExpectation)
	l = expectLeg(t, serving().window(boot13), "sm_clock_mhz=1830")
	wantReason(t, l.Reasons, CodeExpectation, "measured free busy median 1980 MHz: 8.20% above it", "the clock was not locked where declared")
}

// The 1% bound, exactly: a free busy median of 1980 or 2020 MHz holds a
// declared 2000 MHz, 1979 and 2021 do not.
func TestExpectClockBoundary(t *testing.T) {
	for _, c := range []struct {
		mhz  int
		pass bool
	}{{2000, true}, {2020, true}, {1980, true}, {2021, false}, {1979, false}} {
		l := expectLeg(t, window(boot13, flat(c.mhz, 40), 0), "sm_clock_mhz=2000")
		if c.pass {
			wantCodes(t, l.Reasons)
			continue
		}
		wantCodes(t, l.Reasons, CodeExpectation)
		wantReason(t, l.Reasons, CodeExpectation, "more than 1.0%", "lock it (nvidia-smi -lgc")
	}
}

// power_limit_w: the enforced limit equal to it; a stream without a limit
// bears nothing out (fail closed).
func TestExpectPowerLimit(t *testing.T) {
	w := serving().window(boot13)
	wantNoCode(t, expectLeg(t, w, "power_limit_w=700").Reasons, CodeExpectation)
	l := expectLeg(t, w, "power_limit_w=650")
	wantCodes(t, l.Reasons, CodeExpectation)
	wantReason(t, l.Reasons, CodeExpectation, "GPU 0: declared power_limit_w=650 W, measured enforced limit 700 W")
	l = expectLeg(t, cleanWindow(boot13), "power_limit_w=700")
	wantReason(t, l.Reasons, CodeExpectation, "declared power_limit_w=700 W, but the stream records no enforced_power_limit_w")
	// cpu_governor is judged against the host block (TestExpectCPUGovernor):
	// a leg without a host stream bears it out as little as a stream
	// without a limit bears out power_limit_w.
	wantCodes(t, expectLeg(t, cleanWindow(boot13), "cpu_governor=performance").Reasons, CodeExpectation)
}

// The declaration is recorded in the record's expect block and read back;
// --expect's and the block's defects are refused naming the key.
func TestExpectRecorded(t *testing.T) {
	e, err := ParseExpect([]string{"sm_clock_mhz=1830", "power_limit_w=700", "cpu_governor=performance"})
	if err != nil {
		t.Fatal(err)
	}
	r := recordOf(t, cleanWindow(boot13), StopPIDExit)
	r.Expect = e
	b := recordJSON(t, r)
	if !strings.Contains(string(b), `"expect":{"sm_clock_mhz":1830,"power_limit_w":700,"cpu_governor":"performance"}`) {
		t.Fatalf("record %s", b)
	}
	got, err := ParseRecord(b)
	if err != nil || got.Expect == nil || strings.Join(got.Expect.Decls(), " ") != "sm_clock_mhz=1830 power_limit_w=700 cpu_governor=performance" {
		t.Fatalf("parsed %+v, %v", got, err)
	}
	for _, c := range []struct{ decls []string }{{nil}} {
		if e, err := ParseExpect(c.decls); e != nil || err != nil {
			t.Errorf("no declaration: %v, %v", e, err)
		}
	}
	for _, c := range []struct {
		decls []string
		want  string
	}{
		{[]string{"sm_clock_mhz"}, `"sm_clock_mhz": want KEY=VALUE`},
		{[]string{"sm_clock_mhz=fast"}, "sm_clock_mhz=fast: want the locked SM clock in MHz"},
		{[]string{"sm_clock_mhz=0"}, "sm_clock_mhz=0: want the locked SM clock in MHz"},
		{[]string{"power_limit_w=-1"}, "power_limit_w=-1: want the enforced power limit in W"},
		{[]string{"cpu_governor=Perf Mode"}, "cpu_governor=Perf Mode: want a cpufreq governor's name"},
		{[]string{"mem_clock_mhz=1"}, "mem_clock_mhz: not a key --expect knows; want one of sm_clock_mhz, power_limit_w, cpu_governor"},
		{[]string{"sm_clock_mhz=1830", "sm_clock_mhz=1980"}, "sm_clock_mhz declared twice"},
	} {
		if _, err := ParseExpect(c.decls); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: %v, want %s", c.decls, err, c.want)
		}
	}
	for _, c := range []struct{ block, want string }{
		{`"expect":{"sm_clock_mhz":"1830"}`, `expect.sm_clock_mhz: want a number, found string "1830"`},
		{`"expect":{"sm_clock_mhz":1830.5}`, "expect.sm_clock_mhz=1830.5: want the locked SM clock in MHz"},
		{`"expect":{"cpu_governor":1}`, "expect.cpu_governor: want a string, found number 1"},
		{`"expect":{"fan":1}`, "expect.fan: not a key --expect knows"},
		{`"expect":{}`, "expect: an empty object"},
		{`"expect":[]`, "expect: want an object"},
	} {
		bad := strings.Replace(string(b), `"expect":{"sm_clock_mhz":1830,"power_limit_w":700,"cpu_governor":"performance"}`, c.block, 1)
		if _, err := ParseRecord([]byte(bad)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want %s", c.block, err, c.want)
		}
	}
}

// TestExpectCPUGovernor: a declared cpu_governor is judged against the host
// block's governors (SPEC §12.2: every CPU's governor); a leg without a
// host stream, or a host without cpufreq, bears nothing out.
func TestExpectCPUGovernor(t *testing.T) {
	e, err := ParseExpect([]string{"cpu_governor=performance"})
	if err != nil {
		t.Fatal(err)
	}
	declared := func(r *Record) { r.Expect = e }
	leg := func(gov ...string) *Leg {
		st := quietStatic()
		if gov != nil {
			st.CPUFreq = &CPUFreq{Driver: "intel_pstate", Governors: gov}
		}
		ss := cleanWindow(boot13)
		return hostLeg(t, ss, st, quietLines(ss), declared)
	}
	wantNoCode(t, leg("performance").Reasons, CodeExpectation)
	l := leg("performance", "powersave")
	wantCodes(t, l.Reasons, CodeExpectation)
	wantReason(t, l.Reasons, CodeExpectation, "declared cpu_governor=performance, measured governors performance, powersave", "cpupower frequency-set -g performance")
	l = leg("powersave")
	wantReason(t, l.Reasons, CodeExpectation, "declared cpu_governor=performance, measured governors powersave")
	l = leg()
	wantReason(t, l.Reasons, CodeExpectation, "declared cpu_governor=performance, but the host exposes no cpufreq")
	l = legOf(t, "r1", cleanWindow(boot13), declared)
	wantReason(t, l.Reasons, CodeExpectation, "declared cpu_governor=performance, but the leg has no host stream")
}
