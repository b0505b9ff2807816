package clocks

import (
	"bytes"
	"encoding/json"
	"math"
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
