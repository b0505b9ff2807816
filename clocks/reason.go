package clocks

import (
	"sort"
	"strings"
)

// The reason codes. Codes are stable API: tests and CI match on them.
const (
	CodeMissing        = "clock.missing"
	CodeInvalid        = "clock.invalid"
	CodeStreamMissing  = "clock.stream_missing"
	CodeStreamInvalid  = "clock.stream_invalid"
	CodeStreamMismatch = "clock.stream_mismatch"
	CodeBusySamples    = "clock.busy_samples"
	CodeBusyFraction   = "clock.busy_fraction"
	CodeSpread         = "clock.spread"
	CodeThrottle       = "clock.throttle"
	CodePersistence    = "clock.persistence"
	CodeStaticDrift    = "clock.static_drift"
	CodePartialWindow  = "clock.partial_window"
	CodeRefused        = "clock.refused"
	CodeCoverage       = "clock.coverage"

	CodeStraddledBoot  = "clock.straddled_boot"
	CodeStaticMismatch = "clock.static_mismatch"
	CodeStaircase      = "clock.staircase"

	CodeCrossBoot        = "clock.cross_boot"
	CodeHardwareMismatch = "clock.hardware_mismatch"
	CodeOffset           = "clock.offset"
	CodeLegIneligible    = "leg.ineligible"
)

// Reason is one named defect: a stable code and a message that names what was
// expected and what was found.
type Reason struct {
	Code    string `json:"code"`
	Message string `json:"message"`
}

// IsClock reports whether code belongs to the clock contract.
func IsClock(code string) bool { return strings.HasPrefix(code, "clock.") }

// Codes lists the distinct codes of reasons, sorted.
func Codes(reasons []Reason) []string {
	seen := map[string]bool{}
	var out []string
	for _, r := range reasons {
		if !seen[r.Code] {
			seen[r.Code] = true
			out = append(out, r.Code)
		}
	}
	sort.Strings(out)
	return out
}

// HasClock reports whether any reason is a clock reason.
func HasClock(reasons []Reason) bool {
	for _, r := range reasons {
		if IsClock(r.Code) {
			return true
		}
	}
	return false
}
