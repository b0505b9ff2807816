package history

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"html"
	"io"
	"math"
	"sort"
	"strconv"
	"time"
)

// Report is a history's series, ready to be written.
type Report struct {
	Grids     int
	Detection Detection
	Series    []*Series
	// MinChangePct is the --min-change the check judges by: history.html
	// draws each series on an axis of at least ± this much, in percent,
	// around its median, so that a move smaller than it does not fill
	// the picture (SPEC §12.1.1).
	MinChangePct float64
}

// Build analyzes grids (in date order) into a report, its axes at
// DefaultMinChangePct.
func Build(grids []*Grid, d Detection) *Report {
	return &Report{Grids: len(grids), Detection: d, Series: Analyze(grids, d), MinChangePct: DefaultMinChangePct}
}

// axis is the value range series s is drawn on: its values' range,
// widened to at least ± minChangePct percent of their median around
// the median.
func axis(s *Series, minChangePct float64) (lo, hi float64) {
	lo, hi = math.Inf(1), math.Inf(-1)
	vs := make([]float64, len(s.Points))
	for i, p := range s.Points {
		lo, hi = math.Min(lo, p.Value), math.Max(hi, p.Value)
		vs[i] = p.Value
	}
	m := median(vs)
	half := math.Abs(m) * minChangePct / 100
	lo, hi = math.Min(lo, m-half), math.Max(hi, m+half)
	if hi == lo {
		lo, hi = lo-1, hi+1
	}
	return lo, hi
}

const timeLayout = "2006-01-02T15:04:05.000Z"

func fmtDate(t time.Time) string { return t.UTC().Format(timeLayout) }

// num formats a value with four decimals, the precision summary.json has.
func num(v float64) string { return strconv.FormatFloat(v, 'f', 4, 64) }

func pct(v float64) string { return strconv.FormatFloat(v, 'f', 2, 64) }

func fmtP(p float64) string {
	if p < 1e-4 {
		return strconv.FormatFloat(p, 'e', 2, 64)
	}
	return strconv.FormatFloat(p, 'f', 5, 64)
}

// attribution is a change's verdict on the box, in words.
func attribution(c SeriesChange, metric string) string {
	switch {
	case metric != MetricThroughput:
		return "—"
	case c.Clock == nil:
		return "free clock unknown on a side"
	case c.Clock.BoxMoved:
		return fmt.Sprintf("the box moved too: free clock %s → %s MHz (%s%%), throughput %s%%",
			num(c.Clock.BeforeMHz), num(c.Clock.AfterMHz), pct(c.Clock.Pct()), pct(c.MagnitudePct()))
	}
	return fmt.Sprintf("the code: free clock %s → %s MHz (%s%%), throughput %s%%",
		num(c.Clock.BeforeMHz), num(c.Clock.AfterMHz), pct(c.Clock.Pct()), pct(c.MagnitudePct()))
}

func (s *Series) establishedCount() int {
	n := 0
	for _, p := range s.Points {
		if p.Established {
			n++
		}
	}
	return n
}

// transferText is a throughput series' fitted transfer, or why there is
// none; "" for other series.
func (s *Series) transferText() string {
	if s.Key.Metric != MetricThroughput {
		return ""
	}
	if s.Transfer != nil {
		return fmt.Sprintf("transfer: elasticity %s (95%% CI [%s, %s]) of throughput in free clock over %d grids, whose free clocks span %s%%",
			num(s.Transfer.Elasticity), num(s.Transfer.Lo), num(s.Transfer.Hi), s.Transfer.Grids, pct(s.ClockSpanPct))
	}
	if math.IsNaN(s.ClockSpanPct) {
		return "transfer: not identifiable: no established grid has both the throughput and the free clock"
	}
	return fmt.Sprintf("transfer: not identifiable: the established grids' free clocks span %s%%, under %d%%", pct(s.ClockSpanPct), TransferMinSpanPct)
}

// Markdown writes history.md: the method, then per series its values'
// count, its change points with their attribution, and its transfer.
func (r *Report) Markdown(w io.Writer) error {
	b := bufio.NewWriter(w)
	fmt.Fprintf(b, "# clockgate history\n\n")
	fmt.Fprintf(b, "- %d grids, %d series.\n", r.Grids, len(r.Series))
	fmt.Fprintf(b, "- Detection: %s, on ESTABLISHED values only; NOT ESTABLISHED values are drawn and never detected on. A change is dated at the first grid after it.\n", r.Detection.describe())
	fmt.Fprintf(b, "- Attribution: at a change of an engine's throughput, the box moved too when its free clock moved the same way by at least %d%% of the throughput's change (both in percent of the value before).\n", AttributionSharePct)
	fmt.Fprintf(b, "- Transfer: Theil–Sen slope of log throughput on log free clock, 95%% bootstrap interval (%d resamples), where the free clocks span at least %d%%.\n", BootstrapResamples, TransferMinSpanPct)
	changed := 0
	for _, s := range r.Series {
		if len(s.Changes) > 0 {
			changed++
		}
	}
	fmt.Fprintf(b, "- %d of %d series changed.\n", changed, len(r.Series))
	for _, s := range r.Series {
		fmt.Fprintf(b, "\n## %s\n\n", s.Key)
		first, last := s.Points[0], s.Points[len(s.Points)-1]
		fmt.Fprintf(b, "%d values (%d ESTABLISHED) from %s to %s; last %s", len(s.Points), s.establishedCount(), fmtDate(first.Date), fmtDate(last.Date), num(last.Value))
		if !last.Established {
			b.WriteString(" (NOT ESTABLISHED)")
		}
		b.WriteString(".\n\n")
		if len(s.Changes) == 0 {
			b.WriteString("No change point.\n")
		} else {
			b.WriteString("| date | change % | mean before | mean after | p | attribution |\n")
			b.WriteString("|:-----|---------:|------------:|-----------:|--:|:------------|\n")
			for _, c := range s.Changes {
				fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s |\n", fmtDate(c.Date), pct(c.MagnitudePct()), num(c.MeanBefore), num(c.MeanAfter), fmtP(c.P), attribution(c, s.Key.Metric))
			}
		}
		if t := s.transferText(); t != "" {
			fmt.Fprintf(b, "\n%s.\n", t)
		}
	}
	return b.Flush()
}

// jsonDoc is history report --json's document.
type jsonDoc struct {
	Series []jsonSeries `json:"series"`
}

type jsonSeries struct {
	Key      string        `json:"key"`
	Values   []jsonValue   `json:"values"`
	Changes  []jsonChange  `json:"changes"`
	Transfer *jsonTransfer `json:"transfer"`
}

type jsonValue struct {
	Date        string  `json:"date"`
	Value       float64 `json:"value"`
	Established bool    `json:"established"`
}

type jsonChange struct {
	Date         string   `json:"date"`
	MagnitudePct float64  `json:"magnitude_pct"`
	MeanBefore   float64  `json:"mean_before"`
	MeanAfter    float64  `json:"mean_after"`
	P            float64  `json:"p"`
	BoxMoved     *bool    `json:"box_moved"`
	ClockBefore  *float64 `json:"free_clock_before_mhz"`
	ClockAfter   *float64 `json:"free_clock_after_mhz"`
}

type jsonTransfer struct {
	Elasticity float64 `json:"elasticity"`
	Lo         float64 `json:"lo"`
	Hi         float64 `json:"hi"`
}

func round(v float64, digits int) float64 {
	p := math.Pow(10, float64(digits))
	return math.Round(v*p) / p
}

// JSON writes the report as history report --json prints it. box_moved
// and the free clocks around a change are null on series other than an
// engine's throughput, and where a side has no established clock.
func (r *Report) JSON(w io.Writer) error {
	d := jsonDoc{Series: []jsonSeries{}}
	for _, s := range r.Series {
		js := jsonSeries{Key: s.Key.String(), Values: []jsonValue{}, Changes: []jsonChange{}}
		for _, p := range s.Points {
			js.Values = append(js.Values, jsonValue{fmtDate(p.Date), p.Value, p.Established})
		}
		for _, c := range s.Changes {
			jc := jsonChange{Date: fmtDate(c.Date), MagnitudePct: round(c.MagnitudePct(), 4),
				MeanBefore: round(c.MeanBefore, 6), MeanAfter: round(c.MeanAfter, 6), P: c.P}
			if c.Clock != nil {
				moved, before, after := c.Clock.BoxMoved, round(c.Clock.BeforeMHz, 4), round(c.Clock.AfterMHz, 4)
				jc.BoxMoved, jc.ClockBefore, jc.ClockAfter = &moved, &before, &after
			}
			js.Changes = append(js.Changes, jc)
		}
		if t := s.Transfer; t != nil {
			js.Transfer = &jsonTransfer{round(t.Elasticity, 4), round(t.Lo, 4), round(t.Hi, 4)}
		}
		d.Series = append(d.Series, js)
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// CSV writes history.csv in the shape Otava's CSV importer reads: a time
// column (ISO 8601, UTC), one column per series (its key), and the grid's
// identity as an attribute column; a value that is not ESTABLISHED is
// left empty. One row per grid, in date order.
func (r *Report) CSV(w io.Writer) error {
	type row struct {
		date time.Time
		grid string
		vals map[int]string
	}
	rows := map[string]*row{}
	for i, s := range r.Series {
		for _, p := range s.Points {
			rw := rows[p.Grid]
			if rw == nil {
				rw = &row{date: p.Date, grid: p.Grid, vals: map[int]string{}}
				rows[p.Grid] = rw
			}
			if p.Established {
				rw.vals[i] = strconv.FormatFloat(p.Value, 'f', -1, 64)
			}
		}
	}
	order := make([]*row, 0, len(rows))
	for _, rw := range rows {
		order = append(order, rw)
	}
	sort.Slice(order, func(i, j int) bool {
		if !order[i].date.Equal(order[j].date) {
			return order[i].date.Before(order[j].date)
		}
		return order[i].grid < order[j].grid
	})
	cw := csv.NewWriter(w)
	head := []string{"time", "grid"}
	for _, s := range r.Series {
		head = append(head, s.Key.String())
	}
	if err := cw.Write(head); err != nil {
		return err
	}
	for _, rw := range order {
		rec := []string{fmtDate(rw.date), rw.grid}
		for i := range r.Series {
			rec = append(rec, rw.vals[i])
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
	}
	cw.Flush()
	return cw.Error()
}

// The picture's size, in SVG units.
const (
	plotW, plotH       = 720, 180
	padL, padR         = 70, 10
	padT, padB         = 10, 30
	pointR             = 3
	colourEstablished  = "#1f5fa8"
	colourNotEstablish = "#c0392b"
	colourChange       = "#e67e22"
)

// HTML writes history.html: per series a trend picture (ESTABLISHED
// values filled, NOT ESTABLISHED ones hollow, each change point a dashed
// line at its date with the mean before and after), its changes and its
// transfer. It needs no script and loads nothing.
func (r *Report) HTML(w io.Writer) error {
	b := bufio.NewWriter(w)
	b.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>clockgate history</title>
<style>
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:60em}
h2{font-size:1.05em;margin-top:2em}
svg.trend{border:1px solid #ddd;background:#fff}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:.2em .5em;font-size:.9em}
.legend span{margin-right:1.5em}
</style></head><body>
<h1>clockgate history</h1>
`)
	fmt.Fprintf(b, "<p>%d grids, %d series. %s, on ESTABLISHED values only.</p>\n", r.Grids, len(r.Series), html.EscapeString(r.Detection.describe()))
	fmt.Fprintf(b, `<p class="legend"><span><svg width="10" height="10"><circle cx="5" cy="5" r="4" fill="%s"/></svg> ESTABLISHED</span><span><svg width="10" height="10"><circle cx="5" cy="5" r="3.5" fill="none" stroke="%s"/></svg> NOT ESTABLISHED (never detected on)</span><span><svg width="14" height="10"><line x1="7" y1="0" x2="7" y2="10" stroke="%s" stroke-dasharray="3 2" stroke-width="2"/></svg> change point</span></p>`+"\n", colourEstablished, colourNotEstablish, colourChange)
	for i, s := range r.Series {
		fmt.Fprintf(b, "<section id=\"s%d\"><h2>%s</h2>\n", i+1, html.EscapeString(s.Key.String()))
		r.trend(b, s)
		if len(s.Changes) == 0 {
			b.WriteString("<p>No change point.</p>\n")
		} else {
			b.WriteString("<table><tr><th>date</th><th>change %</th><th>mean before</th><th>mean after</th><th>p</th><th>attribution</th></tr>\n")
			for _, c := range s.Changes {
				fmt.Fprintf(b, "<tr><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td><td>%s</td></tr>\n", fmtDate(c.Date), pct(c.MagnitudePct()), num(c.MeanBefore), num(c.MeanAfter), fmtP(c.P), html.EscapeString(attribution(c, s.Key.Metric)))
			}
			b.WriteString("</table>\n")
		}
		if t := s.transferText(); t != "" {
			fmt.Fprintf(b, "<p>%s.</p>\n", html.EscapeString(t))
		}
		b.WriteString("</section>\n")
	}
	b.WriteString("</body></html>\n")
	return b.Flush()
}

// trend draws one series.
func (r *Report) trend(b *bufio.Writer, s *Series) {
	lo, hi := axis(s, r.MinChangePct)
	t0, t1 := s.Points[0].Date, s.Points[len(s.Points)-1].Date
	span := t1.Sub(t0).Seconds()
	x := func(t time.Time) float64 {
		if span == 0 {
			return padL + (plotW-padL-padR)/2
		}
		return padL + t.Sub(t0).Seconds()/span*(plotW-padL-padR)
	}
	y := func(v float64) float64 { return padT + (hi-v)/(hi-lo)*(plotH-padT-padB) }
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" class="trend" width="%d" height="%d" viewBox="0 0 %d %d" role="img" aria-label="%s">`+"\n",
		plotW, plotH, plotW, plotH, html.EscapeString(s.Key.String()))
	fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#999"/>`+"\n", padL, plotH-padB, plotW-padR, plotH-padB)
	fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>`+"\n", padL-4, y(hi)+4, num(hi))
	fmt.Fprintf(b, `<text x="%d" y="%.1f" font-size="10" text-anchor="end">%s</text>`+"\n", padL-4, y(lo), num(lo))
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="10">%s</text>`+"\n", padL, plotH-8, t0.Format(time.DateOnly))
	fmt.Fprintf(b, `<text x="%d" y="%d" font-size="10" text-anchor="end">%s</text>`+"\n", plotW-padR, plotH-8, t1.Format(time.DateOnly))
	for _, c := range s.Changes {
		cx := x(c.Date)
		fmt.Fprintf(b, `<line class="change" x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="%s" stroke-width="2" stroke-dasharray="4 3"><title>change %s: %s → %s (%s%%), p %s</title></line>`+"\n",
			cx, padT, cx, plotH-padB, colourChange, fmtDate(c.Date), num(c.MeanBefore), num(c.MeanAfter), pct(c.MagnitudePct()), fmtP(c.P))
	}
	for _, p := range s.Points {
		if p.Established {
			fmt.Fprintf(b, `<circle class="established" cx="%.1f" cy="%.1f" r="%d" fill="%s"/>`+"\n", x(p.Date), y(p.Value), pointR, colourEstablished)
		} else {
			fmt.Fprintf(b, `<circle class="not-established" cx="%.1f" cy="%.1f" r="%d" fill="none" stroke="%s" stroke-width="1.5"/>`+"\n", x(p.Date), y(p.Value), pointR, colourNotEstablish)
		}
	}
	b.WriteString("</svg>\n")
}
