package history

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"

	"gonum.org/v1/gonum/stat/distuv"
)

// PredictionLevel is the two-sided coverage of the prediction interval
// the newest value is judged against: noise alone puts an independent
// Gaussian value outside it one night in a thousand.
const PredictionLevel = 0.999

// MinSegment is how many established values the series' last segment
// (since its last change point, before the newest) must hold before the
// newest value is judged against its prediction interval: fewer leave
// the interval too wide and its spread too unsure to say anything.
const MinSegment = 8

// LegAlpha is the level of the small-history rule's one-sided
// Mann–Whitney test of the newest grid's legs against the segment's
// (SPEC §12.1.1): 0.02, because 4 legs a side can reach it (their
// smallest one-sided p is 1/70 ≈ 0.014), while the check's p of 0.001
// needs far more legs. A regression needs p < LegAlpha.
const LegAlpha = 0.02

// MinLegsPerSide is how many legs the newest grid, and the segment's
// grids together, must each hold for the small-history rule's test:
// fewer cannot reach LegAlpha against a few legs, and say nothing.
const MinLegsPerSide = 4

// DefaultMinChangePct is the default --min-change: a change smaller than
// 1% of the value before is never a regression, however significant.
const DefaultMinChangePct = 1

// The verdicts of a series' newest grid.
const (
	VerdictRegression     = "regression"
	VerdictImprovement    = "improvement"
	VerdictStable         = "stable"
	VerdictNotEstablished = "not_established"
	// VerdictInsufficient: too few legs for the small-history rule, where
	// the series is too short for the prediction interval: nothing could
	// be judged, which is never "stable".
	VerdictInsufficient = "insufficient"
	// VerdictNew: the series' first grid; nothing to compare it with.
	VerdictNew = "new"
)

// Direction is which way a series' value is worse.
type Direction int

const (
	// LowerWorse is THROUGHPUT's: the ratio families and an engine's own
	// throughput.
	LowerWorse Direction = iota
	// HigherWorse is MEMORY's and ENERGY's.
	HigherWorse
	// NoDirection is the free clock's: it explains throughput and is
	// judged with it (the box moved too), never on its own.
	NoDirection
)

// DirectionOf is the worse direction of a series' metric by its family:
// lower THROUGHPUT (its ratio, its points' ratios, an engine's own
// throughput), higher MEMORY and ENERGY (found by the family's name at the
// start of the metric). A metric of no known family is an error: its
// verdict would be a guess.
func DirectionOf(metric string) (Direction, error) {
	switch m := strings.ToUpper(metric); {
	case metric == MetricFreeClock:
		return NoDirection, nil
	case metric == MetricThroughputRatio, metric == MetricPointRatio, metric == MetricThroughput:
		return LowerWorse, nil
	case strings.HasPrefix(m, "MEMORY"), strings.HasPrefix(m, "ENERGY"):
		return HigherWorse, nil
	}
	return 0, fmt.Errorf("metric %q: no known family, so no direction that is worse", metric)
}

// Judgement is the verdict on one series' newest grid.
type Judgement struct {
	Key    Key
	Newest Point
	// Verdict is one of the Verdict constants.
	Verdict string
	// MagnitudePct is the newest value's change, in percent of the value
	// before (the last segment's mean, or the change point's mean
	// before); NaN where nothing came before.
	MagnitudePct float64
	// Clock is the free clock before and at the newest grid, on an
	// engine's throughput where both are known.
	Clock *ClockMove
	// How says what the verdict rests on, in words.
	How string
}

// Check is history check's verdict on the newest grid of every series.
type Check struct {
	Detection          Detection
	MinChangePct       float64
	AllowUnestablished bool
	// AllowShortHistory makes an insufficient series not fail the check
	// (--allow-short-history).
	AllowShortHistory bool
	// Judgements are in the series' key order.
	Judgements []Judgement
}

// Exit is the check's exit status: 1 when a newest grid starts an
// established regression, is NOT ESTABLISHED and that is not allowed, or
// could not be judged (insufficient) and that is not allowed; 0
// otherwise.
func (c *Check) Exit() int {
	for _, j := range c.Judgements {
		if c.fails(j.Verdict) {
			return 1
		}
	}
	return 0
}

// fails reports whether verdict v fails the check.
func (c *Check) fails(v string) bool {
	switch v {
	case VerdictRegression:
		return true
	case VerdictNotEstablished:
		return !c.AllowUnestablished
	case VerdictInsufficient:
		return !c.AllowShortHistory
	}
	return false
}

// CheckGrids judges the newest grid of every series of grids (in date
// order) that has a worse direction. A series' newest value starts a
// regression when it is ESTABLISHED and either a change point of d is
// dated at it, or it lies outside the PredictionLevel prediction interval
// of the series' last segment of at least MinSegment established values;
// and in both cases it moved, in the family's worse direction, by more
// than minChangePct percent of the value before. The same in the better
// direction is an improvement, which never fails.
func CheckGrids(grids []*Grid, d Detection, minChangePct float64, allowUnestablished bool) (*Check, error) {
	c := &Check{Detection: d, MinChangePct: minChangePct, AllowUnestablished: allowUnestablished}
	series := Analyze(grids, d)
	byKey := map[Key]*Series{}
	for _, s := range series {
		byKey[s.Key] = s
	}
	for _, s := range series {
		dir, err := DirectionOf(s.Key.Metric)
		if err != nil {
			return nil, fmt.Errorf("series %s: %w", s.Key, err)
		}
		if dir == NoDirection {
			continue
		}
		var clock *Series
		if s.Key.Metric == MetricThroughput {
			clock = byKey[Key{s.Key.Model, s.Key.Engines, MetricFreeClock, "", s.Key.GPU}]
		}
		c.Judgements = append(c.Judgements, s.judge(dir, clock, d, minChangePct))
	}
	return c, nil
}

// beyond is whether a change of pct percent passes the --min-change
// bound: strictly more than it, in either direction.
func beyond(pct, minChangePct float64) bool { return math.Abs(pct) > minChangePct }

// verdictOf is the verdict of a change of pct percent in a series worse
// in dir.
func verdictOf(pct float64, dir Direction) string {
	if (pct < 0) == (dir == LowerWorse) {
		return VerdictRegression
	}
	return VerdictImprovement
}

// judge is the verdict on s's newest grid.
func (s *Series) judge(dir Direction, clock *Series, d Detection, minChangePct float64) Judgement {
	last := len(s.Points) - 1
	j := Judgement{Key: s.Key, Newest: s.Points[last], MagnitudePct: math.NaN()}
	if !j.Newest.Established {
		j.Verdict = VerdictNotEstablished
		j.How = "the newest value is NOT ESTABLISHED: nothing can be said"
		return j
	}
	// A change point dated at the newest grid.
	for _, ch := range s.Changes {
		if ch.Index != last {
			continue
		}
		j.MagnitudePct = ch.MagnitudePct()
		j.Clock = ch.Clock
		if beyond(j.MagnitudePct, minChangePct) {
			j.Verdict = verdictOf(j.MagnitudePct, dir)
			j.How = fmt.Sprintf("a change point at the newest grid: %s → %s, p %s", num(ch.MeanBefore), num(ch.MeanAfter), fmtP(ch.P))
			return j
		}
	}
	if last == 0 {
		j.Verdict = VerdictNew
		j.How = "the series' first grid: nothing to compare it with"
		return j
	}
	// The newest value against the last segment before it.
	idx := s.established()
	idx = idx[:len(idx)-1]
	if len(idx) == 0 {
		j.Verdict = VerdictInsufficient
		j.How = fmt.Sprintf("no established grid before the newest (%s, none ESTABLISHED): nothing to compare it with", nGrids(last))
		return j
	}
	xs := make([]float64, len(idx))
	for i, at := range idx {
		xs[i] = s.Points[at].Value
	}
	from := 0
	if cs := Detect(xs, d); len(cs) > 0 {
		from = cs[len(cs)-1].Index
	}
	seg := xs[from:]
	m, _ := meanStd(seg)
	if m != 0 {
		j.MagnitudePct = (j.Newest.Value/m - 1) * 100
	}
	if clock != nil {
		grids := make([]Point, 0, len(seg))
		for _, at := range idx[from:] {
			grids = append(grids, s.Points[at])
		}
		j.Clock = clockAround(clock, grids, j.Newest, m)
	}
	if len(seg) < MinSegment {
		var before []float64
		for _, at := range idx[from:] {
			before = append(before, s.Points[at].Legs...)
		}
		return s.judgeLegs(j, dir, j.Newest.Legs, before, len(seg), minChangePct)
	}
	lo, hi := predictionInterval(seg, PredictionLevel)
	inside := lo <= j.Newest.Value && j.Newest.Value <= hi
	where := fmt.Sprintf("the %g%% prediction interval [%s, %s] of the last %d values (mean %s)", PredictionLevel*100, num(lo), num(hi), len(seg), num(m))
	switch {
	case inside:
		j.Verdict = VerdictStable
		j.How = "inside " + where
	case !beyond(j.MagnitudePct, minChangePct):
		j.Verdict = VerdictStable
		j.How = fmt.Sprintf("outside %s, but by %s%%, not beyond --min-change %g%%", where, pct(j.MagnitudePct), minChangePct)
	default:
		j.Verdict = verdictOf(j.MagnitudePct, dir)
		j.How = "outside " + where
	}
	return j
}

// judgeLegs is the small-history rule (SPEC §12.1.1), where the last
// segment's segN established values are under MinSegment: the newest
// grid's legs against the segment's grids' legs moved by minChangePct
// percent in the worse direction (a test that the move is beyond
// --min-change), a one-sided Mann–Whitney U test at LegAlpha, each side
// at least MinLegsPerSide legs, and the legs' medians apart by more than
// minChangePct percent of the median before. The same in the better
// direction is an improvement; too few legs is insufficient.
func (s *Series) judgeLegs(j Judgement, dir Direction, newest, before []float64, segN int, minChangePct float64) Judgement {
	short := fmt.Sprintf("the last segment has %d established values, under %d: no prediction interval", segN, MinSegment)
	if len(newest) == 0 {
		// Nothing the user records adds legs to this series: say when it
		// is judged instead of asking for more legs.
		j.Verdict = VerdictInsufficient
		j.MagnitudePct = math.NaN()
		j.How = fmt.Sprintf("%s; the series keeps no legs (an ENERGY ratio, a grid added before the store kept legs, or a bench format whose results name no max_concurrency, request_rate and output_throughput): no leg test; it is judged once its last segment holds %d established values, or pass --allow-short-history",
			short, MinSegment)
		return j
	}
	if len(newest) < MinLegsPerSide || len(before) < MinLegsPerSide {
		j.Verdict = VerdictInsufficient
		j.MagnitudePct = math.NaN()
		j.How = fmt.Sprintf("%s; the newest grid has %d legs and the %s before it %d, under %d a side: no leg test; record at least %d legs per arm, or pass --allow-short-history",
			short, len(newest), nGrids(segN), len(before), MinLegsPerSide, MinLegsPerSide)
		return j
	}
	mNew, mBefore := median(newest), median(before)
	j.MagnitudePct = (mNew/mBefore - 1) * 100
	// Each direction's test is of a move beyond --min-change: the newest
	// legs against the legs before moved by minChangePct toward them, so
	// noise as wide as --min-change is not read as a change.
	less, _ := rankSumP(newest, shifted(before, 1-minChangePct/100))
	_, greater := rankSumP(newest, shifted(before, 1+minChangePct/100))
	worse, better := less, greater
	if dir == HigherWorse {
		worse, better = greater, less
	}
	test := fmt.Sprintf("%s; the newest grid's %d legs (median %s) against the %d legs of the %s before (median %s)",
		short, len(newest), num(mNew), len(before), nGrids(segN), num(mBefore))
	moved := verdictOf(j.MagnitudePct, dir)
	switch {
	case worse < LegAlpha && moved == VerdictRegression && beyond(j.MagnitudePct, minChangePct):
		j.Verdict = VerdictRegression
		j.How = fmt.Sprintf("%s: worse beyond --min-change %g%% (one-sided Mann–Whitney against the legs before moved by it) at p %s < %g, the medians %s%% apart", test, minChangePct, fmtLegP(worse), LegAlpha, pct(math.Abs(j.MagnitudePct)))
	case better < LegAlpha && moved == VerdictImprovement && beyond(j.MagnitudePct, minChangePct):
		j.Verdict = VerdictImprovement
		j.How = fmt.Sprintf("%s: better beyond --min-change %g%% (one-sided Mann–Whitney against the legs before moved by it) at p %s < %g, the medians %s%% apart", test, minChangePct, fmtLegP(better), LegAlpha, pct(math.Abs(j.MagnitudePct)))
	case worse < LegAlpha || better < LegAlpha:
		j.Verdict = VerdictStable
		j.How = fmt.Sprintf("%s: one-sided Mann–Whitney p %s < %g beyond --min-change %g%%, but the medians %s%% apart, not beyond it", test, fmtLegP(math.Min(worse, better)), LegAlpha, minChangePct, pct(math.Abs(j.MagnitudePct)))
	default:
		j.Verdict = VerdictStable
		j.How = fmt.Sprintf("%s: no move beyond --min-change %g%% (one-sided Mann–Whitney against the legs before moved by it: p %s worse, %s better, not below %g)", test, minChangePct, fmtLegP(worse), fmtLegP(better), LegAlpha)
	}
	return j
}

// shifted is xs, each times f, in a new slice.
func shifted(xs []float64, f float64) []float64 {
	out := make([]float64, len(xs))
	for i, x := range xs {
		out[i] = x * f
	}
	return out
}

// nGrids is "1 grid" or "n grids".
func nGrids(n int) string {
	if n == 1 {
		return "1 grid"
	}
	return fmt.Sprintf("%d grids", n)
}

// fmtLegP writes a leg test's p at 4 significant digits.
func fmtLegP(p float64) string { return strconv.FormatFloat(p, 'g', 4, 64) }

// predictionInterval is the two-sided prediction interval, at coverage
// level, of one more independent value of the Gaussian seg came from:
// mean ± t(level, n−1) · s · √(1 + 1/n), s the sample standard deviation.
func predictionInterval(seg []float64, level float64) (lo, hi float64) {
	n := float64(len(seg))
	m, _ := meanStd(seg)
	var ss float64
	for _, x := range seg {
		ss += (x - m) * (x - m)
	}
	sd := math.Sqrt(ss / (n - 1))
	q := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: n - 1}.Quantile(1 - (1-level)/2)
	half := q * sd * math.Sqrt(1+1/n)
	return m - half, m + half
}

// clockAround is the free clock over the segment's grids and at the
// newest grid, with the attribution rule applied to the throughput's move
// from tpBefore to the newest value; nil where either is unknown.
func clockAround(clock *Series, seg []Point, newest Point, tpBefore float64) *ClockMove {
	clk := clockByGrid(clock)
	now, ok := clk[newest.Grid]
	if !ok {
		return nil
	}
	var sum float64
	n := 0
	for _, p := range seg {
		if c, ok := clk[p.Grid]; ok {
			sum += c
			n++
		}
	}
	if n == 0 {
		return nil
	}
	before := sum / float64(n)
	return &ClockMove{BeforeMHz: before, AfterMHz: now, BoxMoved: boxMoved(tpBefore, newest.Value, before, now)}
}

// verdictOrder puts what fails first in the outputs.
func verdictOrder(v string) int {
	switch v {
	case VerdictRegression:
		return 0
	case VerdictNotEstablished:
		return 1
	case VerdictInsufficient:
		return 2
	case VerdictImprovement:
		return 3
	case VerdictNew:
		return 4
	}
	return 5
}

// sorted is the judgements, regressions first, then NOT ESTABLISHED,
// insufficient, improvements, new and stable ones, each in key order.
func (c *Check) sorted() []Judgement {
	out := append([]Judgement{}, c.Judgements...)
	sort.SliceStable(out, func(a, b int) bool { return verdictOrder(out[a].Verdict) < verdictOrder(out[b].Verdict) })
	return out
}

// boxText is the box-moved column of one judgement.
func (j Judgement) boxText() string {
	switch {
	case j.Key.Metric != MetricThroughput, j.Verdict == VerdictNotEstablished, j.Verdict == VerdictNew:
		return "—"
	case j.Clock == nil:
		return "free clock unknown"
	case j.Clock.BoxMoved:
		return fmt.Sprintf("yes: free clock %s → %s MHz (%s%%)", num(j.Clock.BeforeMHz), num(j.Clock.AfterMHz), pct(j.Clock.Pct()))
	}
	return fmt.Sprintf("no: free clock %s → %s MHz (%s%%)", num(j.Clock.BeforeMHz), num(j.Clock.AfterMHz), pct(j.Clock.Pct()))
}

func (j Judgement) magText() string {
	if math.IsNaN(j.MagnitudePct) {
		return "—"
	}
	if math.Abs(j.MagnitudePct) < 0.005 {
		return pct(0) // never "-0.00"
	}
	return pct(j.MagnitudePct)
}

// Markdown writes the check as a CI comment: the outcome and its exit
// status, the rule, then one table row per series, what fails first.
func (c *Check) Markdown(w io.Writer) error {
	b := bufio.NewWriter(w)
	counts := map[string]int{}
	for _, j := range c.Judgements {
		counts[j.Verdict]++
	}
	outcome := "no regression"
	switch {
	case counts[VerdictRegression] > 0:
		outcome = "REGRESSION"
	case counts[VerdictNotEstablished] > 0 && !c.AllowUnestablished:
		outcome = "NOT ESTABLISHED"
	case counts[VerdictInsufficient] > 0 && !c.AllowShortHistory:
		outcome = "INSUFFICIENT HISTORY"
	case len(c.Judgements) > 0 && counts[VerdictNew] == len(c.Judgements):
		outcome = "nothing to compare yet (every series new)"
	}
	if n := counts[VerdictInsufficient]; n > 0 {
		allowed := ""
		if c.AllowShortHistory {
			allowed = " (allowed: --allow-short-history)"
		}
		outcome += fmt.Sprintf("; %d of %d series could not be judged%s", n, len(c.Judgements), allowed)
	}
	fmt.Fprintf(b, "## clockgate history check: %s\n\n", outcome)
	fmt.Fprintf(b, "%d series judged at their newest grid: %d regression, %d NOT ESTABLISHED, %d insufficient, %d improvement, %d new, %d stable. Exit %d.\n\n",
		len(c.Judgements), counts[VerdictRegression], counts[VerdictNotEstablished], counts[VerdictInsufficient], counts[VerdictImprovement], counts[VerdictNew], counts[VerdictStable], c.Exit())
	unest := "fails the check"
	if c.AllowUnestablished {
		unest = "is allowed (--allow-unestablished)"
	}
	short := "fails the check"
	if c.AllowShortHistory {
		short = "is allowed (--allow-short-history)"
	}
	fmt.Fprintf(b, "A regression is a newest ESTABLISHED value that starts a change point (%s) or lies outside the %g%% prediction interval of the series' last segment of at least %d established values, beyond --min-change %g%%, in the direction worse for its family: lower THROUGHPUT, higher MEMORY and ENERGY. Where the segment is shorter, the newest grid's legs are tested against the segment's legs moved by --min-change: a one-sided Mann–Whitney p < %g, at least %d legs a side, and the medians apart beyond --min-change. Improvements are reported and never fail. A NOT ESTABLISHED newest value %s. A series with too few legs for either rule is insufficient, which %s; a series' first grid is new.\n\n",
		c.Detection.describe(), PredictionLevel*100, MinSegment, c.MinChangePct, LegAlpha, MinLegsPerSide, unest, short)
	if len(c.Judgements) == 0 {
		b.WriteString("No series has a direction to judge.\n")
		return b.Flush()
	}
	b.WriteString("| series | newest grid | value | verdict | change % | box moved | how |\n")
	b.WriteString("|:-------|:------------|------:|:--------|---------:|:----------|:----|\n")
	for _, j := range c.sorted() {
		v := j.Verdict
		if c.fails(v) {
			v = "**" + v + "**"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s |\n", mdCell(j.Key.String()), fmtDate(j.Newest.Date), num(j.Newest.Value), v, j.magText(), mdCell(j.boxText()), mdCell(j.How))
	}
	return b.Flush()
}

// mdCell escapes a table cell's pipes.
func mdCell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

type checkDoc struct {
	Exit   int           `json:"exit"`
	Series []checkSeries `json:"series"`
}

type checkSeries struct {
	Key          string   `json:"key"`
	Date         string   `json:"date"`
	Newest       float64  `json:"newest"`
	Verdict      string   `json:"verdict"`
	MagnitudePct *float64 `json:"magnitude_pct"`
	BoxMoved     *bool    `json:"box_moved"`
	How          string   `json:"how"`
}

// JSON writes the check as `history check --format json` prints it:
// {"exit", "series": [{"key", "date", "newest", "verdict",
// "magnitude_pct", "box_moved", "how"}]}, in key order; magnitude_pct is
// null where nothing came before, box_moved where the free clock is not
// known or the series is not an engine's throughput.
func (c *Check) JSON(w io.Writer) error {
	d := checkDoc{Exit: c.Exit(), Series: []checkSeries{}}
	for _, j := range c.Judgements {
		cs := checkSeries{Key: j.Key.String(), Date: fmtDate(j.Newest.Date), Newest: j.Newest.Value, Verdict: j.Verdict, How: j.How}
		if !math.IsNaN(j.MagnitudePct) {
			m := round(j.MagnitudePct, 4)
			cs.MagnitudePct = &m
		}
		if j.Clock != nil && j.Key.Metric == MetricThroughput {
			moved := j.Clock.BoxMoved
			cs.BoxMoved = &moved
		}
		d.Series = append(d.Series, cs)
	}
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}
