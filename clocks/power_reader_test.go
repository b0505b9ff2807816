package clocks

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// powerWindow is an H100 window that records the power readings of SPEC
// §10.1 on every line: the enforced limit, a module limit and counters.
func powerWindow() []*Sample {
	var ss []*Sample
	for i := 0; i < 40; i++ {
		s := h100(i, boot13, 1980, 90)
		s.EnforcedPowerLimitW, s.ModuleEnforcedPowerLimitW = ptr(700.0), ptr(900.0)
		s.PowerDrawW = ptr(650.25)
		s.EventCountersUS = &Counters{SwPowerCap: int64(250000 * (i / 3)), SwThermal: 17, HwPowerBrake: 5}
		ss = append(ss, s)
	}
	return ss
}

func TestReaderReadsPowerReadings(t *testing.T) {
	ss := powerWindow()
	got, err := readerStream(streamOf(ss))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range got {
		if *s.EnforcedPowerLimitW != 700 || *s.ModuleEnforcedPowerLimitW != 900 || *s.EventCountersUS != *ss[i].EventCountersUS {
			t.Fatalf("line %d read as %+v", i+1, s)
		}
	}
	sameFold(t, streamOf(ss))
}

// The new keys' defects: each refused as the oracle refuses it, naming
// the key, on every line, on one line, and in every layout.
func TestReaderEqualsOracleOnPowerReadings(t *testing.T) {
	base := streamOf(powerWindow())
	for name, b := range layouts(t, base) {
		t.Run(name, func(t *testing.T) { sameFold(t, b) })
	}
	for _, tc := range []struct{ from, to, want string }{
		{`"enforced_power_limit_w":700`, `"enforced_power_limit_w":0`, "enforced_power_limit_w: want a positive number of W, found number 0"},
		{`"enforced_power_limit_w":700`, `"enforced_power_limit_w":-700`, "enforced_power_limit_w: want a positive number of W, found number -700"},
		{`"enforced_power_limit_w":700`, `"enforced_power_limit_w":"700 W"`, `enforced_power_limit_w: want a number, found string "700 W"`},
		{`"enforced_power_limit_w":700`, `"enforced_power_limit_w":null`, "module_enforced_power_limit_w: present without enforced_power_limit_w"},
		{`"enforced_power_limit_w":700,`, ``, "module_enforced_power_limit_w: present without enforced_power_limit_w"},
		{`"enforced_power_limit_w":700`, `"enforced_power_limit_w":1e999`, "number 1e999 is not finite"},
		{`"module_enforced_power_limit_w":900`, `"module_enforced_power_limit_w":[900]`, "module_enforced_power_limit_w: want a number, found array"},
		{`"module_enforced_power_limit_w":900`, `"module_enforced_power_limit_w":-0`, "module_enforced_power_limit_w: want a positive number of W, found number -0"},
		{`"event_counters_us":{`, `"event_counters_us":7,"x":{`, "event_counters_us: want an object of counters, found number 7"},
		{`"event_counters_us":{`, `"event_counters_us":null,"x":{`, ""},
		{`"event_counters_us":{`, `"event_counters_us":{"hw_slowdown":4,`, `event_counters_us: "hw_slowdown" is not a counter`},
		{`"sw_power_cap":0`, `"sw_power_cap":-1`, "event_counters_us: sw_power_cap: want an integer of µs from 0 to 2^53, found -1"},
		{`"sw_power_cap":0`, `"sw_power_cap":0.5`, "event_counters_us: sw_power_cap: want an integer of µs, found number 0.5"},
		{`"sw_power_cap":0`, `"sw_power_cap":"0"`, `event_counters_us: sw_power_cap: want an integer of µs, found string "0"`},
		{`"sw_power_cap":0`, `"sw_power_cap":9007199254740993`, "event_counters_us: sw_power_cap: want an integer of µs from 0 to 2^53, found 9007199254740993"},
		{`"sw_power_cap":0,`, ``, "event_counters_us: sw_power_cap: missing"},
		{`,"hw_power_brake_slowdown":5`, ``, "event_counters_us: hw_power_brake_slowdown: missing"},
		{`"sw_power_cap":0`, `"sw_power_cap":0,"sw_power_cap":1`, `duplicate key "sw_power_cap"`},
		{`"sw_power_cap":0`, `"sw_power_cap":0,`, "want a key string"},
		{`"sw_power_cap":0`, `"sw_power_cap" : 0`, ""},
		{`"sync_boost":0`, `"sync_boost":{"a":[1,2]}`, "event_counters_us: sync_boost: want an integer of µs, found object"},
	} {
		for _, n := range []int{1, -1} {
			edited := bytes.Replace(base, []byte(tc.from), []byte(tc.to), n)
			if bytes.Equal(edited, base) {
				t.Fatalf("edit %q did not apply", tc.from)
			}
			t.Run(fmt.Sprintf("%s×%d", tc.to, n), func(t *testing.T) {
				sameFold(t, edited)
				_, err := readerStream(edited)
				if tc.want == "" && err != nil || tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)) {
					t.Fatalf("error %v, want %q", err, tc.want)
				}
			})
		}
		lines := bytes.SplitAfter(base, []byte("\n"))
		ls := append([][]byte(nil), lines...)
		ls[20] = bytes.Replace(lines[20], []byte(tc.from), []byte(tc.to), 1)
		t.Run(fmt.Sprintf("%s@21", tc.to), func(t *testing.T) { sameFold(t, bytes.Join(ls, nil)) })
	}
}

// A counters object on a learned layout is read on every line, never
// taken from the template's literals: counters that stand still for two
// lines and then move are read as they move.
func TestTemplateReadsEveryCounters(t *testing.T) {
	ss := powerWindow()
	got, err := readerStream(streamOf(ss))
	if err != nil {
		t.Fatal(err)
	}
	for i := range ss {
		if got[i].EventCountersUS.SwPowerCap != int64(250000*(i/3)) {
			t.Fatalf("line %d: sw_power_cap %d, want %d", i+1, got[i].EventCountersUS.SwPowerCap, 250000*(i/3))
		}
	}
}
