package grid

import (
	"strings"
	"testing"
)

// The plan's expect table is the declared state every leg is recorded
// with, read as --expect reads it; a declaration it cannot read is refused
// naming plan.toml:LINE:COL of the key and why.
func TestPlanExpect(t *testing.T) {
	p, err := Parse("plan.toml", []byte(edit(t, `interval = "250ms"`, `interval = "250ms"
expect = { sm_clock_mhz = 1830, power_limit_w = 700.5, cpu_governor = "performance" }`)))
	if err != nil {
		t.Fatal(err)
	}
	if p.Expect == nil || strings.Join(p.Expect.Decls(), " ") != "sm_clock_mhz=1830 power_limit_w=700.5 cpu_governor=performance" {
		t.Fatalf("expect %+v", p.Expect)
	}
	if p, err := Parse("plan.toml", []byte(goodPlan)); err != nil || p.Expect != nil {
		t.Errorf("no expect key: %+v, %v", p, err)
	}
	for _, c := range []struct{ expect, msg string }{
		{`expect = { sm_clock_mhz = "1830" }`, `expect.sm_clock_mhz = 1830: want a number`},
		{`expect = { sm_clock_mhz = 0 }`, "expect.sm_clock_mhz=0: want the locked SM clock in MHz"},
		{`expect = { cpu_governor = 1 }`, `expect.cpu_governor = 1: want a string (cpu_governor = "performance")`},
		{`expect = { fan = 1 }`, "expect.fan: not a key --expect knows"},
		{`expect = {}`, "expect = {}: declare at least one"},
	} {
		_, err := Parse("plan.toml", []byte(edit(t, `interval = "250ms"`, "interval = \"250ms\"\n"+c.expect)))
		if err == nil || !strings.HasPrefix(err.Error(), "plan.toml:9:1: ") || !strings.Contains(err.Error(), c.msg) {
			t.Errorf("%s: %v, want plan.toml:9:1: … %s", c.expect, err, c.msg)
		}
	}
}

// A resume compares the declarations, not how the table was written.
func TestPlanExpectText(t *testing.T) {
	a, err := Parse("plan.toml", []byte(edit(t, `interval = "250ms"`, "interval = \"250ms\"\nexpect = { power_limit_w = 700.0, sm_clock_mhz = 1830 }")))
	if err != nil {
		t.Fatal(err)
	}
	if got := expectText(a.Expect); got != "sm_clock_mhz=1830, power_limit_w=700" {
		t.Errorf("expect %q", got)
	}
	if got := expectText(nil); got != "" {
		t.Errorf("none %q", got)
	}
}
