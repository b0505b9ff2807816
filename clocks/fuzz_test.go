package clocks

import (
	"bytes"
	"encoding/json"
	"slices"
	"testing"
)

func FuzzParseSample(f *testing.F) {
	f.Add([]byte(specSample))
	for _, s := range cleanWindow(bootF6)[:3] {
		f.Add(s.AppendJSON(nil))
	}
	s := h100(0, boot2F, 345, 0)
	s.ThrottleReasonsActive = "0x0000000000000001"
	f.Add(s.AppendJSON(nil))
	f.Add(mi300x(0, boot13, 2080, 97).AppendJSON(nil))
	f.Fuzz(func(t *testing.T, line []byte) {
		s, err := ParseSample(line)
		if err != nil {
			return
		}
		if s.SMClockMHz <= 0 || s.ClocksMaxSMMHz <= 0 || s.UtilizationGPUPct < 0 || s.UtilizationGPUPct > 100 {
			t.Fatalf("accepted out-of-range sample %+v", s)
		}
		if _, err := ParseThrottle(s.ThrottleReasonsActive); err != nil {
			t.Fatalf("accepted bad throttle: %v", err)
		}
		if s.AMD() != (s.PersistenceMode == "") || s.AMD() != (s.XCDClocksMHz != nil) || s.Vendor != "" && !s.AMD() {
			t.Fatalf("accepted a sample whose vendor keys disagree: %+v", s)
		}
		if s.AMD() && slices.Min(s.XCDClocksMHz) != s.SMClockMHz {
			t.Fatalf("accepted an AMD sample whose lowest XCD is not its SM clock: %+v", s)
		}
		again, err := ParseSample(s.AppendJSON(nil))
		if err != nil || !bytes.Equal(again.AppendJSON(nil), s.AppendJSON(nil)) {
			t.Fatalf("round trip of an accepted sample: %v", err)
		}
	})
}

func FuzzParseRecord(f *testing.F) {
	good, _ := json.Marshal(NewFoldFrom(cleanWindow(bootF6)).mustRecord())
	f.Add(good)
	f.Add([]byte(`{}`))
	f.Add(bytes.Replace(good, []byte(`"n":61`), []byte(`"n":0`), 1))
	f.Fuzz(func(t *testing.T, data []byte) {
		r, err := ParseRecord(data)
		if err != nil {
			return
		}
		st := r.GPUs[0].SMClockMHz
		if st.N <= 0 || st.Min == nil || !(float64(*st.Min) <= *st.Median && *st.Median <= float64(*st.Max)) {
			t.Fatalf("accepted inconsistent stats %+v", st)
		}
		if len(r.GPUs[0].ThrottleReasonsActive) == 0 || r.GPUs[0].IdleSamplesExcluded < 0 || st.N+r.GPUs[0].IdleSamplesExcluded != r.Window.SamplesTotal {
			t.Fatalf("accepted inconsistent record %+v", r)
		}
		if !stopReasons[r.Window.StopReason] || !(r.Window.IntervalS > 0) {
			t.Fatalf("accepted window %+v", r.Window)
		}
	})
}

// FuzzFoldStream holds the reader to its oracle on any input, and
// a leg judged from any stream to the contract: a refused stream is never
// trusted.
func FuzzFoldStream(f *testing.F) {
	f.Add(streamOf(cleanWindow(bootF6)[:8]))
	f.Add(streamOf(window(boot13, []int{2190, 2200}, 2)))
	f.Add([]byte(specSample + "\n" + specSample))
	f.Add(streamOf(amdWindow(boot13, []int{2080, 2090, 2080}, 1)))
	f.Fuzz(func(t *testing.T, stream []byte) {
		sameFold(t, stream)
		fold, err := FoldStream(bytes.NewReader(stream))
		if err != nil || fold.Total == 0 {
			return
		}
		rec, err := fold.Record(1, StopSignal)
		if err != nil {
			t.Fatal(err)
		}
		data, _ := json.Marshal(rec)
		l := JudgeLeg("r1", data, bytes.NewReader(stream), nil)
		if rec.GPUs[0].SMClockMHz.N == 0 {
			wantCodes(t, l.Reasons, CodeInvalid)
			return
		}
		if HasClock(l.Reasons) == (l.Eligible()) {
			t.Fatalf("eligible with clock reasons: %+v", l.Reasons)
		}
		for _, r := range l.Reasons {
			switch r.Code {
			case CodeInvalid, CodeStreamInvalid, CodeStreamMismatch, CodeStreamMissing, CodeMissing:
				t.Fatalf("a record built from its own stream was refused: %+v", r)
			}
		}
	})
}

// NewFoldFrom folds samples, for tests, its gaps settled as a stream's
// fold has them.
func NewFoldFrom(ss []*Sample) *Fold {
	f := NewFold()
	for i, s := range ss {
		f.Add(s, i+1)
	}
	f.settleGaps()
	for _, g := range f.GPUs {
		g.settlePower()
	}
	return f
}

func (f *Fold) mustRecord() *Record {
	r, err := f.Record(1, StopPIDExit)
	if err != nil {
		panic(err)
	}
	return r
}
