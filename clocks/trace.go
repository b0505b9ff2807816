package clocks

import (
	"math"
	"sort"
	"sync"
)

// TraceBuckets is a trace's resolution: a window is reduced to between
// TraceBuckets and 2 × TraceBuckets time buckets, finer than any picture
// draws one leg (a report's plot is under a thousand pixels wide for all
// of an arm's legs), so a picture at any scale loses no excursion.
const TraceBuckets = 512

// maxBootMarks bounds the boot changes a trace keeps; a window that
// changes boot more often than this is drawn with its first ones.
const maxBootMarks = 256

// Trace is a window reduced, while its stream is folded, to what a
// clock-over-time picture draws: per time bucket the lowest and highest
// busy sample, the lowest and highest idle sample, and the first busy
// sample with a non-benign throttle bit, each at its own time.
type Trace struct {
	// Span is the seconds from the window's first sample to its latest.
	Span float64
	// Points are in time order. A picture draws them as it would draw the
	// samples: each pixel column's extremes are among them. Nil once the
	// trace is put in a TraceSpool: ReadPoints reads them back.
	Points []TracePoint
	// Boots are the window's boot ids, in the order they appeared.
	Boots []string
	// PowerManaged says some point is a power-managed sample.
	PowerManaged bool

	// spool holds the points, n of them from off, once put there
	// (TraceSpool.Put); Points is then nil.
	spool *TraceSpool
	off   int64
	n     int
}

// TracePoint is one sample kept in a trace, in sixteen bytes.
type TracePoint struct {
	// T is seconds from the window's first sample (a sample stamped
	// before it counts as 0).
	T   float64
	MHz int32
	// Boot indexes Trace.Boots: the boot id the sample was taken on.
	Boot uint16
	// Idle is utilization 0%; Throttled a busy sample with a bit outside
	// BenignThrottleMask (and, at a recorded power limit, outside
	// SwPowerCap); PowerManaged a busy sample the power controller held
	// at the limit, as its own reading shows it.
	Idle, Throttled, PowerManaged bool
}

type bucket struct {
	idx                            int64
	busyLo, busyHi, idleLo, idleHi int32
	thrMHz, pmMHz                  int32
	tBusyLo, tBusyHi, tIdleLo      float64
	tIdleHi, tThr, tPM             float64
	busy, idle, thr, pm            bool
}

// bootMark is where the boot id changed, in stream order, to the boot
// of index boot.
type bootMark struct {
	t    float64
	boot uint16
}

// traceBuilder reduces rows to time buckets as they are folded; its memory
// is bounded by 2 × TraceBuckets whatever the window's length.
type traceBuilder struct {
	started       bool
	t0sec, t0nsec int64
	width         float64
	buckets       []bucket
	marks         []bootMark
	boots         []string
	lastBoot      string
	span          float64
}

// firstWidth is the first buckets' width in seconds; it doubles whenever
// the buckets outgrow their bound.
const firstWidth = 0.001

// add folds in a row of the GPU whose first sample is first; t0sec and
// t0nsec are the window's first row's time, from which every GPU's trace
// counts its seconds, so that the GPUs of a leg share one time axis.
//
// managed says the GPU records a power limit, where SwPowerCap is power
// management; pm that this row is a power-managed busy sample.
func (b *traceBuilder) add(r *Row, first *Sample, t0sec, t0nsec int64, managed, pm bool) {
	if !b.started {
		b.started, b.t0sec, b.t0nsec, b.width = true, t0sec, t0nsec, firstWidth
		b.buckets = (*bucketPool.Get().(*[]bucket))[:0]
		b.lastBoot = first.BootID
		b.boots, b.marks = []string{first.BootID}, []bootMark{{0, 0}}
	}
	t := max(0, float64(r.Sec-b.t0sec)+float64(r.Nsec-b.t0nsec)/1e9)
	b.span = max(b.span, t)
	if string(r.BootID) != b.lastBoot && len(b.marks) < maxBootMarks {
		b.lastBoot = string(r.BootID)
		i := 0
		for i < len(b.boots) && b.boots[i] != b.lastBoot {
			i++
		}
		if i == len(b.boots) {
			b.boots = append(b.boots, b.lastBoot)
		}
		b.marks = append(b.marks, bootMark{t, uint16(i)})
	}
	k := b.at(int64(t / b.width))
	mhz, tt := int32(min(r.SMClockMHz, math.MaxInt32)), t
	switch {
	case r.Idle():
		if !k.idle || mhz < k.idleLo {
			k.idleLo, k.tIdleLo = mhz, tt
		}
		if !k.idle || mhz > k.idleHi {
			k.idleHi, k.tIdleHi = mhz, tt
		}
		k.idle = true
	default:
		if !k.busy || mhz < k.busyLo {
			k.busyLo, k.tBusyLo = mhz, tt
		}
		if !k.busy || mhz > k.busyHi {
			k.busyHi, k.tBusyHi = mhz, tt
		}
		k.busy = true
		benign := BenignThrottleMask
		if managed {
			benign |= SwPowerCapBit
		}
		if !k.thr && r.ThrottleBits&^benign != 0 {
			k.thr, k.thrMHz, k.tThr = true, mhz, tt
		}
		if !k.pm && pm {
			k.pm, k.pmMHz, k.tPM = true, mhz, tt
		}
	}
	if len(b.buckets) > 2*TraceBuckets {
		b.coarsen()
	}
}

// at returns the bucket of index idx, adding it in order.
func (b *traceBuilder) at(idx int64) *bucket {
	n := len(b.buckets)
	if n > 0 && b.buckets[n-1].idx == idx {
		return &b.buckets[n-1]
	}
	if n == 0 || b.buckets[n-1].idx < idx {
		b.buckets = append(b.buckets, bucket{idx: idx})
		return &b.buckets[n]
	}
	// A sample stamped before the latest one: rare, so a search will do.
	i := sort.Search(n, func(i int) bool { return b.buckets[i].idx >= idx })
	if b.buckets[i].idx != idx {
		b.buckets = append(b.buckets, bucket{})
		copy(b.buckets[i+1:], b.buckets[i:])
		b.buckets[i] = bucket{idx: idx}
	}
	return &b.buckets[i]
}

// coarsen doubles the bucket width until the buckets fit their bound,
// merging each pair of neighbours: in one pass, by the fewest doublings
// that make them fit (merging in order is the same however it is grouped).
func (b *traceBuilder) coarsen() {
	shift := 1
	for distinctShifted(b.buckets, shift) > TraceBuckets {
		shift++
	}
	b.width *= float64(int64(1) << shift)
	out := b.buckets[:0]
	for _, k := range b.buckets {
		k.idx >>= shift
		if n := len(out); n > 0 && out[n-1].idx == k.idx {
			out[n-1].merge(&k)
			continue
		}
		out = append(out, k)
	}
	b.buckets = out
}

// distinctShifted counts the buckets that remain of ks, in index order,
// once their indices are shifted right by shift.
func distinctShifted(ks []bucket, shift int) int {
	n := 0
	for i := range ks {
		if i == 0 || ks[i].idx>>shift != ks[i-1].idx>>shift {
			n++
		}
	}
	return n
}

// bucketPool keeps the bucket arrays of traces between folds: a trace never
// holds more than 2 × TraceBuckets + 1 buckets.
var bucketPool = sync.Pool{New: func() any {
	ks := make([]bucket, 0, 2*TraceBuckets+2)
	return &ks
}}

// merge folds a later bucket o into k.
func (k *bucket) merge(o *bucket) {
	if o.busy {
		if !k.busy || o.busyLo < k.busyLo {
			k.busyLo, k.tBusyLo = o.busyLo, o.tBusyLo
		}
		if !k.busy || o.busyHi > k.busyHi {
			k.busyHi, k.tBusyHi = o.busyHi, o.tBusyHi
		}
		k.busy = true
	}
	if o.idle {
		if !k.idle || o.idleLo < k.idleLo {
			k.idleLo, k.tIdleLo = o.idleLo, o.tIdleLo
		}
		if !k.idle || o.idleHi > k.idleHi {
			k.idleHi, k.tIdleHi = o.idleHi, o.tIdleHi
		}
		k.idle = true
	}
	if o.thr && !k.thr {
		k.thr, k.thrMHz, k.tThr = true, o.thrMHz, o.tThr
	}
	if o.pm && !k.pm {
		k.pm, k.pmMHz, k.tPM = true, o.pmMHz, o.tPM
	}
}

// trace returns the reduced window: every bucket's kept samples, in time
// order, each with the boot id it was taken on.
func (b *traceBuilder) trace() *Trace {
	n := 0
	for i := range b.buckets {
		k := &b.buckets[i]
		if k.idle {
			n += 1 + b2i(k.tIdleHi != k.tIdleLo || k.idleHi != k.idleLo)
		}
		if k.busy {
			n += 1 + b2i(k.tBusyHi != k.tBusyLo || k.busyHi != k.busyLo)
		}
		n += b2i(k.thr) + b2i(k.pm)
	}
	tr := &Trace{Span: b.span, Points: make([]TracePoint, 0, n), Boots: b.boots}
	add := func(t float64, mhz int32, idle, thr bool) {
		tr.Points = append(tr.Points, TracePoint{T: t, MHz: mhz, Idle: idle, Throttled: thr})
	}
	managed := false
	for i := range b.buckets {
		k := &b.buckets[i]
		if k.idle {
			add(k.tIdleLo, k.idleLo, true, false)
			if k.tIdleHi != k.tIdleLo || k.idleHi != k.idleLo {
				add(k.tIdleHi, k.idleHi, true, false)
			}
		}
		if k.busy {
			add(k.tBusyLo, k.busyLo, false, false)
			if k.tBusyHi != k.tBusyLo || k.busyHi != k.busyLo {
				add(k.tBusyHi, k.busyHi, false, false)
			}
		}
		if k.thr {
			add(k.tThr, k.thrMHz, false, true)
		}
		if k.pm {
			tr.Points = append(tr.Points, TracePoint{T: k.tPM, MHz: k.pmMHz, PowerManaged: true})
			managed = true
		}
	}
	tr.PowerManaged = managed
	if cap(b.buckets) == 2*TraceBuckets+2 {
		ks := b.buckets[:0]
		bucketPool.Put(&ks)
	}
	b.buckets = nil
	sort.SliceStable(tr.Points, func(i, j int) bool { return tr.Points[i].T < tr.Points[j].T })
	marks := append([]bootMark(nil), b.marks...)
	sort.SliceStable(marks, func(i, j int) bool { return marks[i].t < marks[j].t })
	m := 0
	for i := range tr.Points {
		for m+1 < len(marks) && marks[m+1].t <= tr.Points[i].T {
			m++
		}
		tr.Points[i].Boot = marks[m].boot
	}
	return tr
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
