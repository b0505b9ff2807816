package clocks

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// Stop reasons a sampler records in Window.StopReason.
const (
	StopPIDExit     = "pid-exit"
	StopCommandExit = "command-exit"
	StopSignal      = "signal"
	StopMaxDuration = "max-duration"
	// StopRefused: the sampler refused a reading mid-window; the record
	// says why in Refusal.
	StopRefused = "refused"
	// StopRebuilt: the record was recomputed from its stream by clockgate
	// build, so where the window ended is unknown.
	StopRebuilt = "rebuilt"
)

var stopReasons = map[string]bool{StopPIDExit: true, StopCommandExit: true, StopSignal: true, StopMaxDuration: true,
	StopRefused: true, StopRebuilt: true}

// stopReasonList is stopReasons in the order messages name them.
const stopReasonList = "pid-exit, command-exit, signal, max-duration, refused, rebuilt"

// Stats summarizes the SM clock over a window's busy samples, in MHz. With
// N == 0 the other fields are nil: there is nothing to summarize.
type Stats struct {
	N         int      `json:"n"`
	Min       *int     `json:"min"`
	Median    *float64 `json:"median"`
	Max       *int     `json:"max"`
	SpreadPct *float64 `json:"spread_pct"`
}

// Window says what a sampler observed and why it stopped.
type Window struct {
	FirstT       string  `json:"first_t"`
	LastT        string  `json:"last_t"`
	SamplesTotal int     `json:"samples_total"`
	IntervalS    float64 `json:"interval_s"`
	StopReason   string  `json:"stop_reason"`
	// MaxGapS is the largest time between two consecutive samples, in
	// seconds to the millisecond; nil in records written before it existed
	// (the stream still gives it, and the coverage check reads the stream).
	MaxGapS *float64 `json:"max_gap_s,omitempty"`
}

// Record is the per-leg clock record, r<N>.summary.json.
type Record struct {
	BootID                        string   `json:"boot_id"`
	SMClockMHz                    Stats    `json:"sm_clock_mhz"`
	ClocksMaxSMMHz                int      `json:"clocks_max_sm_mhz"`
	ClocksApplicationsGraphicsMHz *int     `json:"clocks_applications_graphics_mhz"`
	ThrottleReasonsActive         []string `json:"throttle_reasons_active"`
	PersistenceMode               string   `json:"persistence_mode"`
	DriverVersion                 string   `json:"driver_version"`
	GPUName                       string   `json:"gpu_name"`
	GPUUUID                       string   `json:"gpu_uuid"`
	IdleSamplesExcluded           int      `json:"idle_samples_excluded"`
	Window                        Window   `json:"window"`
	// Refusal is why the sampler refused, exactly when the window's stop
	// reason is StopRefused.
	Refusal string `json:"refusal,omitempty"`
}

// static returns the record's STATIC_FIELDS values, printed.
func (r *Record) static() map[string]string {
	return map[string]string{
		"gpu_name":                         fmt.Sprintf("%q", r.GPUName),
		"gpu_uuid":                         fmt.Sprintf("%q", r.GPUUUID),
		"driver_version":                   fmt.Sprintf("%q", r.DriverVersion),
		"clocks_max_sm_mhz":                fmt.Sprint(r.ClocksMaxSMMHz),
		"clocks_applications_graphics_mhz": intOrNull(r.ClocksApplicationsGraphicsMHz),
	}
}

func intOrNull(p *int) string {
	if p == nil {
		return "null"
	}
	return fmt.Sprint(*p)
}

// ParseRecord reads and validates a clock record, fail-closed: every field
// present, typed, finite and in range, min ≤ median ≤ max, spread_pct
// agreeing with them, a non-empty throttle list, n > 0, and n plus the idle
// count equal to the window's samples. The error names the field.
func ParseRecord(data []byte) (*Record, error) {
	v, err := strictjson.ParseObject(data)
	if err != nil {
		return nil, err
	}
	o := &obj{v: v}
	r := &Record{
		BootID:                        o.str("boot_id"),
		ClocksMaxSMMHz:                o.intMin("clocks_max_sm_mhz", 1),
		ClocksApplicationsGraphicsMHz: o.intOrNull("clocks_applications_graphics_mhz", 1),
		PersistenceMode:               o.str("persistence_mode"),
		DriverVersion:                 o.str("driver_version"),
		GPUName:                       o.str("gpu_name"),
		GPUUUID:                       o.str("gpu_uuid"),
		IdleSamplesExcluded:           o.intMin("idle_samples_excluded", 0),
	}
	if sm := o.object("sm_clock_mhz"); sm != nil {
		r.SMClockMHz.N = sm.intMin("n", 0)
		if sm.err == nil && r.SMClockMHz.N == 0 {
			sm.fail("n", "0: no busy sample in the window, nothing to attribute")
		}
		mn, md, mx, sp := sm.intMin("min", 1), sm.num("median"), sm.intMin("max", 1), sm.num("spread_pct")
		if sm.err == nil {
			r.SMClockMHz.Min, r.SMClockMHz.Median, r.SMClockMHz.Max, r.SMClockMHz.SpreadPct = &mn, &md, &mx, &sp
			checkStats(sm, mn, md, mx, sp)
		}
		if o.err == nil {
			o.err = sm.err
		}
	}
	if f := o.get("throttle_reasons_active"); f != nil {
		switch {
		case f.Kind != strictjson.Array:
			o.fail("throttle_reasons_active", "want an array of hex strings, found %s", f.Describe())
		case len(f.Elems) == 0:
			o.fail("throttle_reasons_active", "empty list: the window's throttle state is unrecorded")
		}
		for i, e := range f.Elems {
			if e.Kind != strictjson.String {
				o.fail(fmt.Sprintf("throttle_reasons_active[%d]", i), "want a hex string, found %s", e.Describe())
				continue
			}
			if _, err := ParseThrottle(e.Str); err != nil {
				o.fail(fmt.Sprintf("throttle_reasons_active[%d]", i), "%v", err)
			}
			r.ThrottleReasonsActive = append(r.ThrottleReasonsActive, e.Str)
		}
	}
	if w := o.object("window"); w != nil {
		r.Window = Window{
			FirstT:       w.str("first_t"),
			LastT:        w.str("last_t"),
			SamplesTotal: w.intMin("samples_total", 1),
			IntervalS:    w.num("interval_s"),
			StopReason:   w.str("stop_reason"),
		}
		if w.err == nil {
			for _, k := range []string{"first_t", "last_t"} {
				t := r.Window.FirstT
				if k == "last_t" {
					t = r.Window.LastT
				}
				if _, err := time.Parse(time.RFC3339Nano, t); err != nil {
					w.fail(k, "want an RFC 3339 time, found %q", t)
				}
			}
		}
		if w.err == nil && !(r.Window.IntervalS > 0) {
			w.fail("interval_s", "want a positive number of seconds, found %v", r.Window.IntervalS)
		}
		if w.err == nil && !stopReasons[r.Window.StopReason] {
			w.fail("stop_reason", "want one of %s; found %q", stopReasonList, r.Window.StopReason)
		}
		if w.err == nil {
			if f, ok := w.v.Fields["max_gap_s"]; ok {
				if f.Kind != strictjson.Number || f.Num < 0 {
					w.fail("max_gap_s", "want a number of seconds ≥ 0, found %s", f.Describe())
				} else {
					g := f.Num
					r.Window.MaxGapS = &g
				}
			}
		}
		if o.err == nil {
			o.err = w.err
		}
	}
	if o.err == nil {
		_, has := v.Fields["refusal"]
		switch {
		case r.Window.StopReason == StopRefused && !has:
			o.fail("refusal", "missing: stop_reason %s needs the sampler's refusal", StopRefused)
		case has && r.Window.StopReason != StopRefused:
			o.fail("refusal", "present, but stop_reason is %q, not %s", r.Window.StopReason, StopRefused)
		case has:
			r.Refusal = o.str("refusal")
		}
	}
	if o.err == nil && r.SMClockMHz.N+r.IdleSamplesExcluded != r.Window.SamplesTotal {
		o.fail("window.samples_total", "%d, but sm_clock_mhz.n %d + idle_samples_excluded %d = %d",
			r.Window.SamplesTotal, r.SMClockMHz.N, r.IdleSamplesExcluded, r.SMClockMHz.N+r.IdleSamplesExcluded)
	}
	if o.err != nil {
		return nil, o.err
	}
	return r, nil
}

func checkStats(o *obj, mn int, md float64, mx int, sp float64) {
	if md*2 != math.Trunc(md*2) {
		o.fail("median", "%v is not a median of integer MHz (a whole or half value)", md)
		return
	}
	if !(float64(mn) <= md && md <= float64(mx)) {
		o.fail("median", "want min ≤ median ≤ max, found min %d, median %v, max %d", mn, md, mx)
		return
	}
	if sp < 0 {
		o.fail("spread_pct", "negative: %v", sp)
		return
	}
	want := spreadPct(int64(mn), int64(mx), int64(md*2))
	if math.Abs(sp-want) > SpreadTolerancePct+1e-9 {
		o.fail("spread_pct", "%v disagrees with (max − min) / median × 100 = %.4f (tolerance %.3f)", sp, want, SpreadTolerancePct)
	}
}

// hist is an exact summary of busy clock values: count, min, max and twice
// the median.
type hist struct {
	n, min, max int
	median2     int64
}

func summarize(h map[int]int) hist {
	vals := make([]int, 0, len(h))
	n := 0
	for v, c := range h {
		vals = append(vals, v)
		n += c
	}
	if n == 0 {
		return hist{}
	}
	sort.Ints(vals)
	lo, hi := (n-1)/2, n/2
	var a, b int
	seen := 0
	for _, v := range vals {
		c := h[v]
		if lo >= seen && lo < seen+c {
			a = v
		}
		if hi >= seen && hi < seen+c {
			b = v
			break
		}
		seen += c
	}
	return hist{n: n, min: vals[0], max: vals[len(vals)-1], median2: int64(a) + int64(b)}
}

func round2(x float64) float64 { return math.Round(x*100) / 100 }

// reconcile names every field where rec differs from what the fold
// recomputes to; an empty result means the record is the stream's.
func reconcile(rec *Record, f *Fold) []string {
	var bad []string
	add := func(field string, got, want any) {
		bad = append(bad, fmt.Sprintf("%s: record %v, stream %v", field, got, want))
	}
	if rec.BootID != f.First.BootID {
		add("boot_id", rec.BootID, f.First.BootID)
	}
	h := summarize(f.Hist)
	st := rec.SMClockMHz
	if st.N != h.n {
		add("sm_clock_mhz.n", st.N, h.n)
	}
	if h.n > 0 && st.Min != nil {
		if *st.Min != h.min {
			add("sm_clock_mhz.min", *st.Min, h.min)
		}
		if *st.Max != h.max {
			add("sm_clock_mhz.max", *st.Max, h.max)
		}
		if *st.Median*2 != float64(h.median2) {
			add("sm_clock_mhz.median", *st.Median, float64(h.median2)/2)
		}
		want := spreadPct(int64(h.min), int64(h.max), h.median2)
		if math.Abs(*st.SpreadPct-want) > SpreadTolerancePct+1e-9 {
			add("sm_clock_mhz.spread_pct", *st.SpreadPct, fmt.Sprintf("%.4f", want))
		}
	}
	rs, fs := rec.static(), map[string]string{}
	first := sampleStatic(f.First)
	for i := 1; i < len(first); i++ {
		fs[driftNames[i]] = first[i]
	}
	for _, k := range StaticFields {
		if rs[k] != fs[k] {
			add(k, rs[k], fs[k])
		}
	}
	if rec.PersistenceMode != f.First.PersistenceMode {
		add("persistence_mode", fmt.Sprintf("%q", rec.PersistenceMode), fmt.Sprintf("%q", f.First.PersistenceMode))
	}
	recBits := map[uint64]bool{}
	for _, s := range rec.ThrottleReasonsActive {
		b, _ := ParseThrottle(s)
		recBits[b] = true
	}
	same := len(recBits) == len(f.Throttle)
	for b := range f.Throttle {
		same = same && recBits[b]
	}
	if !same {
		add("throttle_reasons_active", rec.ThrottleReasonsActive, f.throttleList())
	}
	if rec.IdleSamplesExcluded != f.Idle {
		add("idle_samples_excluded", rec.IdleSamplesExcluded, f.Idle)
	}
	if rec.Window.FirstT != f.FirstT {
		add("window.first_t", rec.Window.FirstT, f.FirstT)
	}
	if rec.Window.LastT != f.LastT {
		add("window.last_t", rec.Window.LastT, f.LastT)
	}
	if rec.Window.SamplesTotal != f.Total {
		add("window.samples_total", rec.Window.SamplesTotal, f.Total)
	}
	if g := rec.Window.MaxGapS; g != nil && math.Abs(*g-f.MaxGapS()) > MaxGapToleranceS+1e-9 {
		add("window.max_gap_s", *g, f.MaxGapS())
	}
	return bad
}
