package report

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAggregatedHTMLInBrowser renders a report of two arms of 1,000 legs
// (aggregated pictures, a report at scale) in headless Chromium: no
// console error, and the DOM after load holds both aggregated clock
// pictures, the spread pictures' distributions and the line that says how
// many legs the tables summarize.
func TestAggregatedHTMLInBrowser(t *testing.T) {
	bin := chromium(t)
	d := scaledDoc(t, 1000, 1)
	c := &d.Comparisons[0]
	c.flag(t, c.Ours, 3, "clock.spread")
	_, html := render(t, d)
	file := filepath.Join(t.TempDir(), "report.html")
	if err := os.WriteFile(file, html, 0o644); err != nil {
		t.Fatal(err)
	}
	dom, stderr := browse(t, bin, file, "--dump-dom")
	if m := consoleErrors.FindAllString(stderr, -1); len(m) > 0 {
		t.Errorf("the page logged console errors:\n%s", strings.Join(m, "\n"))
	}
	for what, want := range map[string]int{
		`class="clock aggregated"`:                 2,
		`<g class="distribution">`:                 2 * (len(c.Points) + 1),
		"These tables summarize 2,000 legs":        1,
		"Aggregated: 1,000 legs summarized, 1,000": 2,
	} {
		if got := strings.Count(dom, what); got != want {
			t.Errorf("the DOM after load holds %d of %q, want %d", got, what, want)
		}
	}
}
