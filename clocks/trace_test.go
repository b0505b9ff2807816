package clocks

import (
	"bytes"
	"math/rand"
	"reflect"
	"slices"
	"testing"
	"time"
)

// traceOf folds samples with a tracing fold.
func traceOf(t *testing.T, ss []*Sample) *Trace {
	t.Helper()
	f := NewTracingFold()
	if err := f.FoldStream(bytes.NewReader(streamOf(ss)), ""); err != nil {
		t.Fatal(err)
	}
	return f.GPUs[0].Trace
}

// TestTraceKeepsEveryExcursionInBoundedSpace: a two-hour leg at 1 Hz is
// reduced to at most 2 × TraceBuckets buckets, and still holds its
// one-sample dip and spike, each at its own time, its throttled sample
// and its idle minimum.
func TestTraceKeepsEveryExcursionInBoundedSpace(t *testing.T) {
	const n, dipAt, spikeAt, thrAt = 7200, 4321, 777, 5000
	var busy []int
	for i := 0; i < n; i++ {
		switch i {
		case dipAt:
			busy = append(busy, 1500)
		case spikeAt:
			busy = append(busy, 2950)
		default:
			busy = append(busy, 2380+(i*7919)%41)
		}
	}
	ss := window(boot13, busy, 10)
	ss[thrAt].ThrottleReasonsActive = "0x0000000000000004"
	ss[n+3].SMClockMHz = 900
	tr := traceOf(t, ss)
	if len(tr.Points) > 5*2*TraceBuckets {
		t.Fatalf("%d points for %d samples; want at most 5 per bucket, %d buckets", len(tr.Points), len(ss), 2*TraceBuckets)
	}
	if tr.Span != float64(len(ss)-1) {
		t.Fatalf("span %v, want %d", tr.Span, len(ss)-1)
	}
	found := map[string]bool{}
	for i, p := range tr.Points {
		if i > 0 && p.T < tr.Points[i-1].T {
			t.Fatalf("points out of time order at %d", i)
		}
		switch {
		case !p.Idle && p.MHz == 1500 && p.T == dipAt:
			found["dip"] = true
		case !p.Idle && p.MHz == 2950 && p.T == spikeAt:
			found["spike"] = true
		case p.Throttled && p.T == thrAt:
			found["throttle"] = true
		case p.Idle && p.MHz == 900 && p.T == n+3:
			found["idle minimum"] = true
		}
		if tr.Boots[p.Boot] != boot13 {
			t.Fatalf("point %+v on boot %q", p, tr.Boots[p.Boot])
		}
	}
	for _, want := range []string{"dip", "spike", "throttle", "idle minimum"} {
		if !found[want] {
			t.Errorf("the %s is not in the trace", want)
		}
	}
}

// TestTraceOfAShortLegIsItsSamples: under the bound, every sample is a
// point, and a boot change is where it happened.
func TestTraceOfAShortLegIsItsSamples(t *testing.T) {
	ss := window(boot13, repeat([]int{2390, 2400, 2410}, 20), 0)
	for _, s := range ss[30:] {
		s.BootID = boot2F
	}
	tr := traceOf(t, ss)
	if len(tr.Points) != len(ss) {
		t.Fatalf("%d points for %d samples", len(tr.Points), len(ss))
	}
	for i, p := range tr.Points {
		want := boot13
		if i >= 30 {
			want = boot2F
		}
		if p.T != float64(i) || int(p.MHz) != ss[i].SMClockMHz || tr.Boots[p.Boot] != want {
			t.Fatalf("point %d = %+v, want t %d, %d MHz, boot %s", i, p, i, ss[i].SMClockMHz, want)
		}
	}
}

// TestTraceOutOfOrderAndBeforeTheFirst: a sample stamped before the
// latest (a clock stepped back) is placed by its time, the points staying
// in time order; one before the first counts as 0.
func TestTraceOutOfOrderAndBeforeTheFirst(t *testing.T) {
	ss := window(boot13, repeat([]int{2400}, 40), 0)
	ss[20].SMClockMHz = 2000
	ss[20].T = windowStart.Add(5*time.Second + 500*time.Millisecond).Format("2006-01-02T15:04:05.000Z")
	ss[30].SMClockMHz = 2100
	ss[30].T = windowStart.Add(-3 * time.Second).Format("2006-01-02T15:04:05.000Z")
	// Two samples at 6 s, 1900 and 2400 MHz: a late-stamped sample put in
	// their bucket rather than one of its own would be lost between them.
	ss[6].SMClockMHz = 1900
	twin := *ss[6]
	twin.SMClockMHz = 2400
	ss = slices.Insert(ss, 7, &twin)
	tr := traceOf(t, ss)
	var at55, at0, low6, high6 bool
	for _, p := range tr.Points {
		at55 = at55 || p.T == 5.5 && p.MHz == 2000
		at0 = at0 || p.T == 0 && p.MHz == 2100
		low6 = low6 || p.T == 6 && p.MHz == 1900
		high6 = high6 || p.T == 6 && p.MHz == 2400
	}
	if !at55 || !at0 || !low6 || !high6 {
		t.Fatalf("out-of-order samples misplaced: %+v", tr.Points[:8])
	}
	// Every other second keeps its sample, the buckets around the
	// inserted one included.
	for sec := 1; sec < 40; sec++ {
		if sec == 20 || sec == 30 {
			continue // the two moved
		}
		if !slices.ContainsFunc(tr.Points, func(p TracePoint) bool { return p.T == float64(sec) }) {
			t.Fatalf("no point at %d s: %+v", sec, tr.Points[:12])
		}
	}
	// Points are in time order, the late-stamped sample's among them.
	for i := 1; i < len(tr.Points); i++ {
		if tr.Points[i].T < tr.Points[i-1].T {
			t.Fatalf("point %d at %g s after one at %g s", i, tr.Points[i].T, tr.Points[i-1].T)
		}
	}
}

// TestTraceGPUsShareTheWindowsClock: in a leg of two GPUs whose GPU 1 is
// first seen 30 s into the window, GPU 1's points count their seconds from
// the window's first sample, as GPU 0's do, so the picture puts both on
// one time axis; its span is the window's.
func TestTraceGPUsShareTheWindowsClock(t *testing.T) {
	var ss []*Sample
	for i, s := range window(boot13, repeat([]int{2400}, 60), 0) {
		ss = append(ss, s)
		if i >= 30 {
			g := *s
			g.GPUIndex, g.GPUUUID = 1, "GPU-1"
			ss = append(ss, &g)
		}
	}
	f := NewTracingFold()
	if err := f.FoldStream(bytes.NewReader(streamOf(ss)), ""); err != nil {
		t.Fatal(err)
	}
	if len(f.GPUs) != 2 {
		t.Fatalf("%d GPUs folded", len(f.GPUs))
	}
	g0, g1 := f.GPUs[0].Trace, f.GPUs[1].Trace
	if p := g1.Points[0]; p.T != 30 {
		t.Errorf("GPU 1's first point at %g s, want 30 (seconds from the window's first sample)", p.T)
	}
	if last := g1.Points[len(g1.Points)-1]; last.T != 59 || g1.Span != 59 || g0.Span != 59 {
		t.Errorf("GPU 1's last point at %g s, spans %g and %g; want 59", last.T, g0.Span, g1.Span)
	}
}

// TestCoarsenIsRepeatedDoubling holds coarsen's one pass to what doubling
// the width one step at a time gives, merging neighbours each time, on
// dense, sparse and clustered bucket indices.
func TestCoarsenIsRepeatedDoubling(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for trial := range 300 {
		var ks []bucket
		idx := int64(rng.Intn(50))
		for range TraceBuckets + 1 + rng.Intn(TraceBuckets+1) {
			switch trial % 3 {
			case 0:
				idx++
			case 1:
				idx += 1 + int64(rng.Intn(5000))
			default:
				if rng.Intn(40) == 0 {
					idx += int64(rng.Intn(1 << 20))
				}
				idx++
			}
			k := bucket{idx: idx}
			if rng.Intn(3) > 0 {
				k.busy, k.busyLo, k.busyHi = true, int32(rng.Intn(3000)), int32(rng.Intn(3000))
				k.tBusyLo, k.tBusyHi = rng.Float64(), rng.Float64()
			}
			if rng.Intn(3) == 0 {
				k.idle, k.idleLo, k.idleHi = true, int32(rng.Intn(3000)), int32(rng.Intn(3000))
				k.tIdleLo, k.tIdleHi = rng.Float64(), rng.Float64()
			}
			if rng.Intn(10) == 0 {
				k.thr, k.thrMHz, k.tThr = true, int32(rng.Intn(3000)), rng.Float64()
			}
			ks = append(ks, k)
		}
		got := traceBuilder{width: firstWidth, buckets: append([]bucket(nil), ks...)}
		got.coarsen()
		want := traceBuilder{width: firstWidth, buckets: append([]bucket(nil), ks...)}
		for len(want.buckets) > TraceBuckets {
			want.width *= 2
			var out []bucket
			for _, k := range want.buckets {
				k.idx >>= 1
				if n := len(out); n > 0 && out[n-1].idx == k.idx {
					out[n-1].merge(&k)
					continue
				}
				out = append(out, k)
			}
			want.buckets = out
		}
		if got.width != want.width || !reflect.DeepEqual(got.buckets, want.buckets) {
			t.Fatalf("trial %d: width %v, %d buckets; doubling gives width %v, %d buckets",
				trial, got.width, len(got.buckets), want.width, len(want.buckets))
		}
	}
}
