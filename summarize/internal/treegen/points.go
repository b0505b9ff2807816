package treegen

import (
	"fmt"
	"strings"
	"time"

	// The scenarios name zones (Europe/Berlin): the generator must give
	// one tree on any box, with or without zoneinfo.
	_ "time/tzdata"

	"github.com/clockgate/clockgate/clocks"
)

// pointWin gives a leg point windows (SPEC §10.2).
type pointWin struct {
	// zone is the sampler host's IANA zone, written into the record's
	// window with its offset at the first sample.
	zone string
	// client is the zone the bench client stamps vLLM's date in; nil is
	// the host's.
	client *time.Location
	// marks writes clockgate mark lines around each point; open are the
	// points (by index) with a begin line and no end.
	marks bool
	open  map[int]bool
	// inset marks each point from just after its first busy reading to
	// just before its last, so that each end of its window lies between
	// two samples (SPEC §11.3); otherwise from just before the first to
	// just after the last.
	inset bool
	// dates stamps each result's date at its point's end, as vLLM does,
	// and its duration from after the warm-ups to the end.
	dates bool
	// pointMHz, when set, is each point's busy clock.
	pointMHz []int
}

func mustZone(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(err)
	}
	return loc
}

// stamp writes the host's zone into the record, as the sampler does.
func (pw *pointWin) stamp(rec *clocks.Record) {
	first, err := time.Parse(time.RFC3339Nano, rec.Window.FirstT)
	if err != nil {
		panic(err)
	}
	_, off := first.In(mustZone(pw.zone)).Zone()
	rec.Window.UTCOffsetS, rec.Window.TimeZone = &off, pw.zone
}

// dated is a point's duration and the span whose start the result's date
// is written from: vLLM stamps date in the client's zone, truncated to the
// second, a few hundred ms after the last request (the metrics are
// computed first), and its duration runs from after the warm-ups, which
// the point's first busy second holds, to the end. bounds are the
// point's first busy reading and the reading after its last.
func (pw *pointWin) dated(bounds [2]time.Time) (float64, [2]time.Time) {
	loc := pw.client
	if loc == nil {
		loc = mustZone(pw.zone)
	}
	end := bounds[1].Add(-500 * time.Millisecond)
	date := end.Add(300 * time.Millisecond).Truncate(time.Second).In(loc)
	dur := end.Sub(bounds[0]).Seconds() - 0.5
	return dur, [2]time.Time{date, bounds[1]}
}

// marksFile is the leg's points file: each point's begin just before its
// first busy reading, its end just after its last, exit 0.
func (pw *pointWin) marksFile(l leg, bounds [][2]time.Time) []byte {
	var b strings.Builder
	ts := func(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }
	for i := range l.points {
		id := fmt.Sprintf("%d/inf", l.points[i].conc)
		begin, end := bounds[i][0].Add(-300*time.Millisecond), bounds[i][1].Add(-500*time.Millisecond)
		if pw.inset {
			begin, end = bounds[i][0].Add(300*time.Millisecond), bounds[i][1].Add(-1500*time.Millisecond)
		}
		fmt.Fprintf(&b, `{"point":%q,"event":"begin","t":%q}`+"\n", id, ts(begin))
		if pw.open[i] {
			continue
		}
		fmt.Fprintf(&b, `{"point":%q,"event":"end","t":%q,"exit":0}`+"\n", id, ts(end))
	}
	return []byte(b.String())
}

// values is the leg's busy clocks when each point has its own: the
// point's clock, 2 MHz either side in turn.
func (pw *pointWin) values(busy []int) []int {
	var out []int
	for i, n := range busy {
		for k := 0; k < n; k++ {
			out = append(out, pw.pointMHz[i]+2*(k%3-1))
		}
	}
	return out
}

// pwLeg gives each leg the windows pw says, then fix.
func pwLeg(pw pointWin, fix func(*leg)) func(*leg) {
	return func(l *leg) {
		p := pw
		l.pw = &p
		if fix != nil {
			fix(l)
		}
	}
}

// The drifting clock: fastengine's GB10 runs each point one step lower
// than the last, 2470 to 2420 MHz; vllm's holds 2470.
var (
	drift  = []int{2470, 2465, 2455, 2420}
	steady = []int{2470, 2470, 2470, 2470}
)

var pointScenarios = []Scenario{
	{Name: "points-drift",
		About: "fastengine's clock drifts down a step a point (2470, 2465, 2455, 2420 MHz) while vllm's holds 2470, every point marked with clockgate mark: " +
			"the legs pass spread (2.03%) and the leg's offset (median 0.20%, mean within 1.0%), but the last point ran 2.02% slower in fastengine: " +
			"clock.point_offset at 8/inf voids THROUGHPUT; MEMORY stays ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, gb10, boot13, pwLeg(pointWin{zone: "Etc/UTC", marks: true, pointMHz: drift}, nil))
			t.arm(llama, vllm, 2, gb10, boot13, pwLeg(pointWin{zone: "Etc/UTC", marks: true, pointMHz: steady}, nil))
		}},
	{Name: "points-drift-dates",
		About: "points-drift's legs without marks, their windows from vLLM's own date and duration (a host and a client in UTC): " +
			"the same verdict, clock.point_offset at 8/inf",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, gb10, boot13, pwLeg(pointWin{zone: "Etc/UTC", dates: true, pointMHz: drift}, nil))
			t.arm(llama, vllm, 2, gb10, boot13, pwLeg(pointWin{zone: "Etc/UTC", dates: true, pointMHz: steady}, nil))
		}},
	{Name: "points-utc-client",
		About: "a sampler host in Europe/Berlin (+02:00 in August, utc_offset_s 7200): fastengine's bench client ran in a UTC container and " +
			"stamped vLLM's date in UTC, vllm's in the host's local time; each leg's dates fit one zone, so every point is judged on its vllm-date windows; " +
			"both ratios ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, gb10, boot13, pwLeg(pointWin{zone: "Europe/Berlin", client: time.UTC, dates: true}, nil))
			t.arm(llama, vllm, 2, gb10, boot13, pwLeg(pointWin{zone: "Europe/Berlin", dates: true}, nil))
		}},
	{Name: "points-zone-neither",
		About: "a host in UTC, but vllm r2's bench client stamped vLLM's date in America/New_York (-04:00): under neither zone do its dates lie inside " +
			"its clock window, so its points have no window (a warning naming the leg) and no point is judged; nor do they overlap it under either zone " +
			"(they ran 4 h before it by their dates), so each carries bench.outside_window (SPEC §12.1.1): both ratios NOT ESTABLISHED, leg.ineligible",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, gb10, boot13, pwLeg(pointWin{zone: "Etc/UTC", dates: true}, nil))
			t.arm(llama, vllm, 2, gb10, boot13, pwLeg(pointWin{zone: "Etc/UTC", dates: true}, func(l *leg) {
				if l.run == 2 {
					l.pw.client = mustZone("America/New_York")
				}
			}))
		}},
	{Name: "points-open-mark",
		About: "every point marked, but fastengine r2's 8/inf has a begin line and no end (its bench command was killed): that point has no window " +
			"in that leg (a warning) and is not judged; the other points are, and both ratios stay ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, gb10, boot13, pwLeg(pointWin{zone: "Etc/UTC", marks: true}, func(l *leg) {
				if l.run == 2 {
					l.pw.open = map[int]bool{3: true}
				}
			}))
			t.arm(llama, vllm, 2, gb10, boot13, pwLeg(pointWin{zone: "Etc/UTC", marks: true}, nil))
		}},
	{Name: "points-sglang",
		About: "sglang (python -m sglang.bench_serving writes no time) against vllm with vLLM dates: sglang's points have no window, a warning for " +
			"each leg and point, and no point is judged; both ratios ESTABLISHED on the legs' checks",
		build: func(t *tree) {
			t.arm(llama, sglang, 2, gb10, boot13, pwLeg(pointWin{zone: "Etc/UTC", dates: true}, func(l *leg) { l.style = styleSGLang }))
			t.arm(llama, vllm, 2, gb10, boot13, pwLeg(pointWin{zone: "Etc/UTC", dates: true}, func(l *leg) { l.style = styleVLLM }))
		}},
	{Name: "points-power-managed",
		About: "power-managed's H100s at 700 W (fastengine capped in 5 of every 10 busy seconds, vllm in 3), every point marked: each point is judged " +
			"on its free samples, the free clocks agree, and each arm's power-managed share at each point is reported beside its offset, never gated; " +
			"both ratios ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, h100pm, bootH1, pwLeg(pointWin{zone: "Etc/UTC", marks: true}, pmLeg(serving(5), free)))
			t.arm(llama, vllm, 2, h100pm, bootH1, pwLeg(pointWin{zone: "Etc/UTC", marks: true}, pmLeg(serving(3), free)))
		}},
	{Name: "points-thin",
		About: "marked points of 40, 12, 12 and 12 busy seconds per leg: pooled over two legs, only 1/inf has 30 free busy samples in each arm; " +
			"2/inf, 4/inf and 8/inf are reported as too thinly sampled and not judged; both ratios ESTABLISHED",
		build: func(t *tree) {
			for _, e := range []engine{fastengine, vllm} {
				t.arm(llama, e, 2, gb10, boot13, pwLeg(pointWin{zone: "Etc/UTC", marks: true}, func(l *leg) { l.busy = []int{40, 12, 12, 12} }))
			}
		}},
}
