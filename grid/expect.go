package grid

import (
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/clocks"
)

// parseExpect reads the plan's expect table (SPEC §12.2: expect = {
// sm_clock_mhz = 1830, power_limit_w = 700, cpu_governor = "performance" }),
// the declared state of the box every leg is recorded with, as --expect
// reads it; nil where the plan declares nothing.
func parseExpect(raw map[string]any) (*clocks.Expect, error) {
	if raw == nil {
		return nil, nil
	}
	if len(raw) == 0 {
		return nil, fmt.Errorf("expect = {}: declare at least one of sm_clock_mhz, power_limit_w, cpu_governor, or leave the key out")
	}
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	e := &clocks.Expect{}
	for _, k := range keys {
		var text string
		switch v := raw[k].(type) {
		case int64:
			text = strconv.FormatInt(v, 10)
		case float64:
			text = strconv.FormatFloat(v, 'f', -1, 64)
		case string:
			text = v
		default:
			return nil, fmt.Errorf("expect.%s = %v: want a number, or a governor's name as a string", k, v)
		}
		if (k == "cpu_governor") != isString(raw[k]) {
			want := "a number"
			if k == "cpu_governor" {
				want = `a string (cpu_governor = "performance")`
			}
			return nil, fmt.Errorf("expect.%s = %v: want %s", k, raw[k], want)
		}
		if err := e.Set(k, text); err != nil {
			return nil, fmt.Errorf("expect.%v", err)
		}
	}
	return e, nil
}

func isString(v any) bool {
	_, ok := v.(string)
	return ok
}

// expectText is the plan's expect as a resume compares it: the
// declarations as --expect takes them, "" where the plan declares none.
func expectText(e *clocks.Expect) string {
	if e == nil {
		return ""
	}
	return strings.Join(e.Decls(), ", ")
}
