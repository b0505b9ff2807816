package main

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestRecordExpectLockThePowerCapCannotHold is SPEC §12.2's done case
// through the fake nvidia-smi: an H100 on a 590 driver at its 700 W limit,
// every busy reading held at the cap (SwPowerCap) at 1755 MHz, recorded
// with a declared lock of 1830 MHz: the leg is clock.expectation, named by
// record's verdict and by check, with declared and measured; the record
// carries what was declared.
func TestRecordExpectLockThePowerCapCannotHold(t *testing.T) {
	tools := newRecTools(t)
	var plan []any
	for i := 0; i < 90; i++ {
		plan = append(plan, map[string]any{"values": map[string]any{"clocks.sm": "1755", "power.draw": "699.50",
			"clocks_event_reasons.active": "0x0000000000000004", "clocks_event_reasons_counters.sw_power_cap": fmt.Sprint(250000 * i)}})
	}
	l, code, stderr := tools.cleanLeg(t, map[string]any{"power": true, "plan": plan}, 250*time.Millisecond, func(l *recLeg, iv time.Duration) (int, string) {
		code, _, stderr := l.run("", append([]string{"record", "--out", l.prefix, "--interval", iv.String(), "--backend", "nvidia-smi",
			"--expect", "sm_clock_mhz=1830", "--expect", "power_limit_w=700", "--"}, l.untilLines(40)...)...)
		return code, stderr
	})
	if code != 0 || !strings.Contains(stderr, "clock.expectation") {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	data, err := os.ReadFile(l.record())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(strings.Fields(string(data)), ""), `"expect":{"sm_clock_mhz":1830,"power_limit_w":700}`) {
		t.Errorf("record %s", data)
	}
	_, codes := l.checkCodes()
	if !slices.Contains(codes, "clock.expectation") {
		t.Errorf("check gives %v", codes)
	}
	_, stdout, _ := l.run("", "check", l.record())
	if !strings.Contains(stdout, "declared sm_clock_mhz=1830 (a locked clock), measured busy median 1755 MHz") ||
		!strings.Contains(stdout, "held at the power cap (SwPowerCap at 700 W): the cap cannot hold the declared lock") {
		t.Errorf("check:\n%s", stdout)
	}
}

// TestRecordExpectRefused: a declaration --expect cannot read is a usage
// error before COMMAND runs.
func TestRecordExpectRefused(t *testing.T) {
	tools := newRecTools(t)
	l := tools.leg(t, map[string]any{})
	code, _, stderr := l.run("", "record", "--out", l.prefix, "--backend", "nvidia-smi", "--expect", "sm_clock_mhz=fast", "--", "true")
	if code != 2 || !strings.Contains(stderr, "--expect sm_clock_mhz=fast: want the locked SM clock in MHz") {
		t.Errorf("exit %d; stderr:\n%s", code, stderr)
	}
	if _, err := os.Stat(l.record()); err == nil {
		t.Error("a record was written")
	}
}

// TestRecordPCIeLinkDegraded: through the fake nvidia-smi, a GPU whose
// link runs at Gen4 x8 while busy against its Gen5 x16 maximum is
// host.pcie_link, naming the GPU and both links; the same GPU at its
// maximum is not.
func TestRecordPCIeLinkDegraded(t *testing.T) {
	tools := newRecTools(t)
	for _, degraded := range []bool{true, false} {
		l, code, stderr := tools.cleanLeg(t, map[string]any{"pcie": true, "pcie_degraded": degraded}, 250*time.Millisecond, func(l *recLeg, iv time.Duration) (int, string) {
			code, _, stderr := l.run("", append([]string{"record", "--out", l.prefix, "--interval", iv.String(), "--backend", "nvidia-smi", "--"}, l.untilLines(40)...)...)
			return code, stderr
		})
		if code != 0 || strings.Contains(stderr, "host.pcie_link") != degraded {
			t.Fatalf("degraded %v: exit %d; stderr:\n%s", degraded, code, stderr)
		}
		data, err := os.ReadFile(l.record())
		if err != nil || !strings.Contains(strings.Join(strings.Fields(string(data)), ""), `"pcie_gen_max":5,"pcie_width_max":16`) {
			t.Fatalf("record %s, %v", data, err)
		}
		if !degraded {
			continue
		}
		_, stdout, _ := l.run("", "check", l.record())
		if !strings.Contains(stdout, "GPU 0: PCIe link below its maximum in") || !strings.Contains(stdout, "Gen4 x8, maximum Gen5 x16") {
			t.Errorf("check:\n%s", stdout)
		}
	}
}
