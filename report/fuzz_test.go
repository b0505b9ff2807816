package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
)

// FuzzSpreadPicture draws the legs' spread of any finite throughputs and
// memory peaks, as ratio.Compare gives them: the picture is well-formed
// XML, prints no NaN or Inf, draws one dot per leg of every row it draws,
// and says why of every row it does not.
func FuzzSpreadPicture(f *testing.F) {
	f.Add(13.2, 13.1, 12.9, 12.2, 12.3, 12.2, uint8(3), uint8(3))
	f.Add(1e305, 1e305, 12.0, 5e-324, 12.0, 12.0, uint8(2), uint8(1))
	f.Add(math.MaxFloat64, 1.0, 1.0, 5e-324, 5e-324, 5e-324, uint8(1), uint8(3))
	f.Add(7.0, 7.0, 7.0, 7.0, 7.0, 7.0, uint8(3), uint8(3))
	f.Fuzz(func(t *testing.T, o1, o2, o3, b1, b2, b3 float64, no, nb uint8) {
		vals := []float64{o1, o2, o3, b1, b2, b3}
		for _, x := range vals {
			if !(x > 0) || math.IsInf(x, 0) {
				return // the reader refuses these: never a point or a record
			}
		}
		arm := func(engine string, xs []float64) ratio.Arm {
			a := ratio.Arm{Engine: engine}
			for i, x := range xs {
				m := x
				a.Legs = append(a.Legs, &ratio.Leg{Clock: &clocks.Leg{Name: "r" + strconv.Itoa(i+1)}, PeakGPUMemoryMiB: &m,
					Points: []ratio.BenchPoint{{ID: ratio.PointID{MaxConcurrency: 1}, ModelID: "m", NumPrompts: 6, OutputThroughput: x}}})
			}
			return a
		}
		n1, n2 := 1+int(no)%3, 1+int(nb)%3
		c, err := ratio.Compare("m", arm("ours", vals[:n1]), arm("base", vals[3:3+n2]), false)
		if err != nil {
			t.Fatal(err)
		}
		pt := c.Throughput.Points[0]
		rows := []spreadRow{
			{id: "p1", label: pt.ID.Label(), test: pt.Test, medians: [2]*float64{pt.Ours, pt.Baseline}, ratio: pt.Ratio, unit: "tokens/s"},
			{id: "memory", label: "memory", test: c.Memory.Test, medians: [2]*float64{c.Memory.Ours, c.Memory.Baseline}, ratio: c.Memory.Value, unit: "MiB"},
		}
		svg := spreadSVGOf("f", "ours", "base", "output throughput", rows)
		if strings.Contains(svg, "NaN") || strings.Contains(svg, "Inf") {
			t.Fatalf("the picture prints NaN or Inf:\n%s", svg)
		}
		d := xml.NewDecoder(bytes.NewReader([]byte(svg)))
		d.Strict = true
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("not well formed: %v", err)
			}
		}
		for _, r := range rows {
			g := svg[strings.Index(svg, `id="f-`+r.id+`"`):]
			g = g[:strings.Index(g, "</g>")]
			note := strings.Contains(g, `class="row-note"`)
			dots := strings.Count(g, "<circle")
			if _, why := r.ref(); (why != "") != note || !note && dots != len(r.test.OursLegs)+len(r.test.BaselineLegs) || note && dots != 0 {
				t.Fatalf("row %s: note %v (%q), %d dots for %d legs", r.id, note, why, dots, len(r.test.OursLegs)+len(r.test.BaselineLegs))
			}
		}
	})
}
