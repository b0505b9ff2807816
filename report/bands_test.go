package report

import (
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

var bandRE = regexp.MustCompile(`<rect class="point-window" x="([0-9.]+)" y="[0-9.]+" width="([0-9.]+)"[^>]*><title>point ([^:]+):`)

// TestPointWindowsAreBandsWhereTheSamplesAre: each of a leg's point
// windows is a band over its own samples, labelled with its point inside
// the picture; a leg without windows draws none.
func TestPointWindowsAreBandsWhereTheSamplesAre(t *testing.T) {
	t0 := time.Date(2026, 8, 12, 9, 0, 0, 0, time.UTC)
	busy := func(i int) bool { return i%50 >= 10 } // points at 10-49 and 60-99 s
	l := traceLeg(t, "r1", synth(100, t0, "b", func(i int) int { return 2470 }, func(i int) bool { return !busy(i) }))
	l.Bands = []PointBand{{Label: "1/inf", From: 10, To: 49}, {Label: "8/inf", From: 60, To: 99}}
	p, svg := onePanel(l)
	m := bandRE.FindAllStringSubmatch(svg, -1)
	if len(m) != 2 || m[0][3] != "1/inf" || m[1][3] != "8/inf" {
		t.Fatalf("bands %v in\n%s", m, svg)
	}
	if !strings.Contains(svg, `<text class="point-window-label"`) || !strings.Contains(svg, ">8/inf</text>") {
		t.Errorf("no band label inside the picture")
	}
	// The busy samples of a point lie within its band.
	x0, _ := strconv.ParseFloat(m[1][1], 64)
	w, _ := strconv.ParseFloat(m[1][2], 64)
	pts := busyPoints(t, svg)
	var in int
	for _, q := range pts {
		if q[0] >= x0-0.5 && q[0] <= x0+w+0.5 {
			in++
		}
	}
	if in == 0 || in == len(pts) {
		t.Errorf("%d of %d busy points inside 8/inf's band [%v, %v]", in, len(pts), x0, x0+w)
	}
	_ = p
	l.Bands = nil
	if _, svg := onePanel(l); strings.Contains(svg, "point-window") {
		t.Errorf("a leg without windows draws a band")
	}
}
