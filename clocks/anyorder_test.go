package clocks

import (
	"bytes"
	"math/rand"
	"testing"

	"github.com/clockgate/clockgate/strictjson"
)

// shuffled writes each line of stream that is an object again with its
// keys in a random order, and with spacing from seps; other lines stay.
func shuffled(stream []byte, rng *rand.Rand, seps []strictjson.Layout) []byte {
	var out []byte
	for _, line := range bytes.SplitAfter(stream, []byte("\n")) {
		body := bytes.TrimSuffix(line, []byte("\n"))
		v, err := strictjson.ParseObject(body)
		if err != nil {
			out = append(out, line...)
			continue
		}
		keys := append([]string(nil), v.Keys...)
		rng.Shuffle(len(keys), func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
		l := seps[rng.Intn(len(seps))]
		l.Order = keys
		out = strictjson.AppendLayout(out, v, l)
		out = append(out, line[len(body):]...)
	}
	return out
}

var anyOrderSeps = []strictjson.Layout{{}, pythonDumps, {Comma: " ,\t", Colon: " : "}}

// TestAnyOrderScannerReadsShuffledLines: a stream whose key order changes
// on every line is read by the any-order scanner, not member by member,
// in every layout of spacing, with the optional readings and nulls; and
// what it reads is what the oracle reads.
func TestAnyOrderScannerReadsShuffledLines(t *testing.T) {
	ss := richWindow()
	for i, s := range ss {
		if i%4 == 1 {
			s.ClocksApplicationsGraphicsMHz = nil
			s.VbiosVersion = ptr("96.00.A5.00.01")
		}
		if i%3 == 1 {
			// A key the reader does not type, on lines without the event
			// counters (an object, the general reading's): skipped, not
			// read member by member.
			s.MemoryUsedMiB = ptr(71234.5)
		}
	}
	for _, sep := range anyOrderSeps {
		stream := shuffled(streamOf(ss), rand.New(rand.NewSource(5)), []strictjson.Layout{sep})
		sameFold(t, stream)
		r := NewReader(bytes.NewReader(stream), "")
		lines := 0
		for r.Scan() {
			lines++
		}
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		// The lines with event counters (an object) are the general
		// reading's; every other line is the scanner's.
		want := 0
		for _, s := range ss {
			if s.EventCountersUS == nil {
				want++
			}
		}
		if lines != len(ss) || r.p.anyOrderLines != want {
			t.Errorf("%q: the scanner read %d of %d lines, want %d", sep.Comma, r.p.anyOrderLines, lines, want)
		}
	}
}

// TestAnyOrderScannerLeavesOddLinesToTheGeneralReading: a line the scanner
// cannot read plainly (an escape, a byte outside ASCII, a duplicate, an
// exponent, a wrong type, another key) is read by the general reading,
// which accepts or refuses it exactly as the oracle does.
func TestAnyOrderScannerLeavesOddLinesToTheGeneralReading(t *testing.T) {
	base := shuffled(streamOf(cleanWindow(bootF6)[:4]), rand.New(rand.NewSource(9)), anyOrderSeps[:1])
	lines := bytes.SplitAfter(bytes.TrimSuffix(base, []byte("\n")), []byte("\n"))
	for _, tc := range []struct{ from, to string }{
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA\u0020GB10"`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA GB10é"`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA GB10","gpu_name":"NVIDIA GB10"`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA GB10","extra":{"a":1}`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA GB10","extra":1,"extra":2`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA GB10","extra":1e3`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA GB10","ext\u0072a":1`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":"NVIDIA GB10","extra":nul`},
		{`"gpu_name":"NVIDIA GB10"`, `"gpu_name":null`},
		{`"gpu_name":"NVIDIA GB10"`, `"g\u0070u_name":"NVIDIA GB10"`},
		{`"gpu_index":0`, `"gpu_index":0e0`},
		{`"gpu_index":0`, `"gpu_index":-0`},
		{`"gpu_index":0`, `"gpu_index":00`},
		{`"gpu_index":0`, `"gpu_index":0.0`},
		{`"gpu_index":0`, `"gpu_index":1234567890123456789`},
	} {
		for k, line := range lines[1:] {
			edited := bytes.Replace(line, []byte(tc.from), []byte(tc.to), 1)
			if bytes.Equal(edited, line) {
				t.Fatalf("edit %q did not apply to line %d", tc.from, k+2)
			}
			ls := append([][]byte(nil), lines...)
			ls[k+1] = edited
			stream := bytes.Join(ls, nil)
			sameFold(t, stream)
			r := NewReader(bytes.NewReader(stream), "")
			for r.Scan() {
			}
			if r.p.anyOrderLines != r.Line()-1 {
				t.Errorf("%s on line %d: the scanner read %d lines of %d, want all but the edited one", tc.to, k+2, r.p.anyOrderLines, r.Line())
			}
		}
	}
}

// FuzzAnyOrder holds the any-order scanner to the oracle: every object
// line of the fuzzed stream is written again in a random key order and
// spacing, then one byte is set, and the reader must read what the
// oracle reads.
func FuzzAnyOrder(f *testing.F) {
	f.Add(streamOf(richWindow()[:6]), int64(1), uint16(0), byte(0))
	f.Add(streamOf(cleanWindow(bootF6)[:5]), int64(2), uint16(40), byte('x'))
	f.Add(streamOf(amdWindow(boot13, []int{2080, 2090}, 1)), int64(3), uint16(7), byte('"'))
	f.Add([]byte(specSample+"\n"+specSample+"\n"), int64(4), uint16(300), byte('.'))
	f.Fuzz(func(t *testing.T, stream []byte, seed int64, at uint16, c byte) {
		out := shuffled(stream, rand.New(rand.NewSource(seed)), anyOrderSeps)
		if len(out) > 0 && c != 0 {
			out[int(at)%len(out)] = c
		}
		sameFold(t, out)
	})
}
