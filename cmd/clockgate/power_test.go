package main

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// TestRecordPowerManagedLeg records a leg through the fake nvidia-smi of
// an H100 on a 590 driver that gives the enforced limit and the clock
// event counters, with a prefill burst capped at the limit every sixth
// reading, and judges it: the record carries the free clock and the
// power-managed count, and check finds nothing wrong, where the same leg
// without a limit would be clock.spread and clock.throttle.
func TestRecordPowerManagedLeg(t *testing.T) {
	tools := newRecTools(t)
	var plan []any
	sw := 0
	for i := 0; i < 90; i++ {
		v := map[string]any{"clocks.sm": "1980", "power.draw": "520.25"}
		if i%6 == 5 {
			sw += 700000
			v = map[string]any{"clocks.sm": "1410", "power.draw": "699.50", "clocks_event_reasons.active": "0x0000000000000004"}
		}
		v["clocks_event_reasons_counters.sw_power_cap"] = fmt.Sprint(sw)
		plan = append(plan, map[string]any{"values": v})
	}
	// 44 readings at 250 ms (the interval to use on these GPUs): 37 free,
	// 7 capped.
	l, code, stderr := tools.cleanLeg(t, map[string]any{"power": true, "plan": plan}, 250*time.Millisecond, func(l *recLeg, iv time.Duration) (int, string) {
		code, _, stderr := l.run("", append([]string{"record", "--out", l.prefix, "--interval", iv.String(), "--backend", "nvidia-smi", "--"}, l.untilLines(44)...)...)
		return code, stderr
	})
	if code != 0 || !strings.HasSuffix(stderr, "clockgate record: verdict: ok\n") {
		t.Fatalf("exit %d; stderr:\n%s", code, stderr)
	}
	if !strings.Contains(stderr, "enforced.power.limit") || !strings.Contains(stderr, "clocks_event_reasons_counters.sw_power_cap") {
		t.Errorf("the sampler does not say it reads the power fields:\n%s", stderr)
	}
	data, err := os.ReadFile(l.record())
	if err != nil {
		t.Fatal(err)
	}
	var rec clocks.Record
	if err := json.Unmarshal(data, &rec); err != nil {
		t.Fatal(err)
	}
	g := rec.GPUs[0]
	if g.EnforcedPowerLimitW == nil || *g.EnforcedPowerLimitW != 700 || g.FreeClockMHz == nil || g.PowerManagedSamples == nil ||
		*g.PowerManagedSamples == 0 || *g.FreeClockMHz.Median != 1980 || *g.SMClockMHz.Min != 1410 {
		t.Fatalf("record %s", data)
	}
	if code, codes := l.checkCodes(); code != 0 {
		t.Errorf("check gives %v", codes)
	}
}
