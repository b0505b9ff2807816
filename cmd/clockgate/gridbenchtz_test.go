package main

import (
	"strings"
	"testing"
)

// TestGridBenchTZ: grid --bench-tz takes a zone as summarize's does; a
// zone Go does not know, or none, is a usage error before the plan is
// read.
func TestGridBenchTZ(t *testing.T) {
	for zone, want := range map[string]string{
		"Nowhere/Zone": `--bench-tz "Nowhere/Zone": not a zone Go knows`,
		"":             `--bench-tz "": want the bench machine's zone by name`,
	} {
		code, _, errs := runMain("grid", "--bench-tz", zone, "no-such-plan.toml")
		if code != 2 || !strings.Contains(errs, want) {
			t.Errorf("zone %q: exit %d, stderr %q; want 2 and %q", zone, code, errs, want)
		}
	}
	code, _, errs := runMain("grid", "--bench-tz", "UTC", "no-such-plan.toml")
	if code != 2 || strings.Contains(errs, "--bench-tz") || !strings.Contains(errs, "no-such-plan.toml") {
		t.Errorf("UTC: exit %d, stderr %q; want the plan named", code, errs)
	}
}
