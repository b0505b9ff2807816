package report

import (
	"strings"
	"testing"
)

// TestLeadsNameEveryWindowSource: the leads that say where a point's
// window comes from name each source summarize reads, in the order it
// prefers them: clockgate mark, the result's own exact window (AIPerf,
// GuideLLM, InferenceX; SPEC §12.5), vLLM's date.
func TestLeadsNameEveryWindowSource(t *testing.T) {
	for name, lead := range map[string]string{"ENERGY": EnergyLead, "point clock": PointClockLead("ours", "base")} {
		m, x, d := strings.Index(lead, "mark"), strings.Index(lead, "exact window"), strings.Index(lead, "vLLM's date")
		if d < 0 {
			d = strings.Index(lead, "vLLM date")
		}
		if m < 0 || x < 0 || d < 0 || !(m < x && x < d) {
			t.Errorf("%s lead: %q\nwant marks, then the result's exact window, then vLLM's date", name, lead)
		}
	}
}
