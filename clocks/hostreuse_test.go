package clocks

import (
	"bytes"
	"encoding/json"
	"math"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
)

// hostFoldByAdd folds lines as the sampler does, one HostLine at a time
// through Add: no template, no reused fold.
func hostFoldByAdd(st *HostStatic, ss []*Sample, lines []*HostLine) *Host {
	busy := map[string]bool{}
	for _, s := range ss {
		b, seen := busy[s.T]
		busy[s.T] = (b || !seen) && s.UtilizationGPUPct != 0
	}
	f := NewHostFold(st)
	for _, l := range lines {
		f.Add(l, busy[l.T])
	}
	return f.Host()
}

// TestFoldHostStreamReusesNothing: FoldHostStream reuses its fold, its
// template and its buffers from stream to stream, and each stream folds to
// what the sampler's fold of the same lines gives, whatever stream was
// folded before: other processes under the same pids with other names and
// cores, another layout (fewer processes, no PSI, a CPU clock).
func TestFoldHostStreamReusesNothing(t *testing.T) {
	ss := cleanWindow(boot13)
	a := quietLines(ss)
	for i, l := range a {
		l.Top = []HostProc{{PID: 7, Comm: "burner", Cores: 0.9}, {PID: 8, Comm: "sshd", Cores: 0.01}, {PID: 9, Comm: "cron", Cores: 0.001}}
		l.PSI.CPUSome += int64(i) * 100
	}
	b := quietLines(ss)
	for i, l := range b {
		mhz := 2400 + float64(i%3)
		l.Top, l.PSI, l.CPUMHz = []HostProc{{PID: 9, Comm: "python3", Cores: 0.002}, {PID: 10, Comm: "bash", Cores: 0.001}}, nil, &mhz
	}
	for _, lines := range [][]*HostLine{a, b, a, a, b, b} {
		got, _ := json.Marshal(hostFoldOf(t, quietStatic(), ss, lines))
		want, _ := json.Marshal(hostFoldByAdd(quietStatic(), ss, lines))
		if string(got) != string(want) {
			t.Fatalf("folded after another stream:\n got %s\nwant %s", got, want)
		}
	}
}

// TestHostTemplateTimeAsStr: a t that starts with the minute of the t
// before is read without a byte-by-byte scan, yet a byte str refuses (a
// raw '<', which the writer escapes) anywhere in it leaves the line to the
// strict reader, as before: its message is the strict one.
func TestHostTemplateTimeAsStr(t *testing.T) {
	ss := cleanWindow(boot13)
	for _, bad := range []struct{ at, t string }{
		{"its seconds", "2026-08-12T10:15:0<.000Z"},
		{"its minute", "2026-0<-12T10:15:05.000Z"},
	} {
		lines := quietLines(ss)
		lines[5].T = bad.t
		stream := bytes.Replace(hostStreamOf(quietStatic(), lines), []byte(`\u003c`), []byte("<"), 1)
		ticks := BusyTicks{}
		for _, s := range ss {
			ticks.Add(s.T, true)
		}
		_, err := FoldHostStream(bytes.NewReader(stream), "r1.host.jsonl", &ticks)
		if want := `r1.host.jsonl:7: t: want an RFC 3339 time, found "` + bad.t + `"`; err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("a '<' in %s: %v, want %s", bad.at, err, want)
		}
	}
}

// TestSinceNS: sinceNS is time's Sub of the two Unix times, at the
// extremes too (Sub saturates where a - b overflows).
func TestSinceNS(t *testing.T) {
	vals := []int64{0, 1, -1, 1 << 61, -1 << 61, 1<<61 - 1, -1<<61 + 1, math.MaxInt64, math.MinInt64, math.MaxInt64 - 5, math.MinInt64 + 5,
		time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC).UnixNano()}
	for _, a := range vals {
		for _, b := range vals {
			if got, want := sinceNS(a, b), time.Unix(0, a).Sub(time.Unix(0, b)); got != want {
				t.Fatalf("sinceNS(%d, %d) = %v, want %v", a, b, got, want)
			}
		}
	}
}

// TestBusyTicksReused: ticks given back and taken again hold none of the
// leg before's.
func TestBusyTicksReused(t *testing.T) {
	for round := 0; round < 3; round++ {
		b := newBusyTicks()
		if len(b.ticks) != 0 {
			t.Fatalf("round %d: %d ticks of the leg before", round, len(b.ticks))
		}
		for i := int64(0); i < 10; i++ {
			b.add(i%2 == 0, (int64(round)*100+i)*1e9)
		}
		if _, ok := b.find((int64(round)*100 - 95) * 1e9); ok && round > 0 {
			t.Fatalf("round %d: found a tick of the leg before", round)
		}
		if tk, ok := b.find((int64(round)*100 + 4) * 1e9); !ok || !tk.busy {
			t.Fatalf("round %d: tick 4 %+v %v", round, tk, ok)
		}
		b.release()
	}
}

// TestQuantileAsSorted: the quantiles by selection are the sorted
// slice's, nearest rank, the median of an even count the mean of the two
// middle values: on slices of every small length, with many equal values
// and none, in order, reversed and shuffled, and on a long one.
func TestQuantileAsSorted(t *testing.T) {
	rng := rand.New(rand.NewSource(12))
	sorted := func(xs []float64, q float64) float64 {
		s := append([]float64(nil), xs...)
		sort.Float64s(s)
		if q == 0.5 && len(s)%2 == 0 {
			return Round3(s[len(s)/2-1]/2 + s[len(s)/2]/2)
		}
		if q == 0.5 {
			return Round3(s[len(s)/2])
		}
		return Round3(s[max(int(math.Ceil(q*float64(len(s))))-1, 0)])
	}
	var cases [][]float64
	for n := 1; n <= 40; n++ {
		for _, spread := range []int{1, 3, 1000} {
			xs := make([]float64, n)
			for i := range xs {
				xs[i] = float64(rng.Intn(spread)) / 8
			}
			up := append([]float64(nil), xs...)
			sort.Float64s(up)
			down := append([]float64(nil), up...)
			slices.Reverse(down)
			cases = append(cases, xs, up, down)
		}
	}
	long := make([]float64, 7200)
	for i := range long {
		long[i] = Round3(rng.Float64() * 2)
	}
	cases = append(cases, long)
	for _, xs := range cases {
		for _, q := range []float64{0.5, 0.9} {
			want := sorted(xs, q)
			if got := quantile(append([]float64(nil), xs...), q); *got != want {
				t.Fatalf("q %v of %v: %v, want %v", q, xs, *got, want)
			}
		}
		// The median, then the p90, of one slice, as Host takes them.
		ys := append([]float64(nil), xs...)
		if m, p := quantile(ys, 0.5), quantile(ys, 0.9); *m != sorted(xs, 0.5) || *p != sorted(xs, 0.9) {
			t.Fatalf("median then p90 of %v: %v %v", xs, *m, *p)
		}
	}
}

// TestHostNumAsChecked: a number read in one pass is the number read
// digit by digit, and a number one pass may not read (more than 15
// digits, a leading zero, an exponent, no digit after the point) is read
// as digit by digit reads it.
func TestHostNumAsChecked(t *testing.T) {
	rng := rand.New(rand.NewSource(15))
	nums := []string{"0", "1", "0.5", "00", "01", "0.", ".5", "1.", "1e5", "1.5e3", "1.5E3", "1.2.3", "123456789012345", "1234567890123456",
		"12345678901234.5", "123456789012345.6", "0.000000000000001", "0.0000000000000001", "9007199254740991", "9007199254740993",
		"0.1234567890123456789012", "0.12345678901234567890123", "2400.0", "-1", "", "x", "7,", "7}"}
	for i := 0; i < 2000; i++ {
		nums = append(nums, strconv.FormatFloat(Round3(rng.Float64()*float64(rng.Intn(5000))), 'f', -1, 64),
			strconv.FormatFloat(rng.Float64(), 'f', -1, 64), strconv.Itoa(rng.Intn(1<<30)))
	}
	for _, s := range nums {
		for _, tail := range []string{"", ",", "}"} {
			b := []byte(s + tail)
			var a, c float64
			p, q := hostScan{b: b}, hostScan{b: b}
			okA, okC := p.num(&a), q.numChecked(&c)
			if okA != okC || (okA && (a != c || p.i != q.i)) {
				t.Fatalf("%q: one pass %v %v at %d, digit by digit %v %v at %d", b, okA, a, p.i, okC, c, q.i)
			}
			if f, err := strconv.ParseFloat(s, 64); okA && p.i == len(s) && (err != nil || f != a) {
				t.Fatalf("%q: read %v, strconv %v %v", b, a, f, err)
			}
		}
	}
}
