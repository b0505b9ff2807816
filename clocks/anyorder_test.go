package clocks

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math/rand"
	"strings"
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

// TestAnyOrderMemoReadsWhatTheOracleReads: the scanner's memo of members
// gives what reading them again gives, whether a member changes once
// mid-stream (the driver), on every line (the clock), on every other line
// (an alternating UUID, which the memo keeps only now and then) or
// between null and a number; and most members of a stream whose key order
// changes on every line are read from the memo.
func TestAnyOrderMemoReadsWhatTheOracleReads(t *testing.T) {
	for _, change := range []string{"none", "driver at 40", "uuid every other line", "apps null every third", "clock a prefix of the next"} {
		ss := window(boot13, repeat([]int{2190, 2200, 2210}, 40), 10)
		for i, s := range ss {
			switch {
			case change == "clock a prefix of the next":
				// 219 then 2190: the member repeats the memo's up to a
				// digit, which does not end it.
				s.SMClockMHz = []int{219, 2190, 21900}[i%3]
			case change == "driver at 40" && i >= 40:
				s.DriverVersion = "580.159.04"
			case change == "uuid every other line":
				s.GPUUUID = fmt.Sprintf("GPU-5f3c2a91-%d", i%2)
			case change == "apps null every third" && i%3 == 0:
				s.ClocksApplicationsGraphicsMHz = nil
			}
		}
		for _, sep := range anyOrderSeps {
			stream := shuffled(streamOf(ss), rand.New(rand.NewSource(11)), []strictjson.Layout{sep})
			sameFold(t, stream)
			r := NewReader(bytes.NewReader(stream), "")
			for r.Scan() {
			}
			if r.Err() != nil {
				t.Fatal(r.Err())
			}
			if r.p.anyOrderLines < len(ss)-4 {
				t.Errorf("%s, %q: the scanner read %d of %d lines", change, sep.Comma, r.p.anyOrderLines, len(ss))
			}
		}
	}
}

// TestAnyOrderStaticIDVouchesForIdentity: rows the scanner read with their
// identity members from its memo share a StaticID only while those
// members are unchanged: a driver changed mid-stream starts a new one, an
// identity member that alternates gives no row of the other value the
// StaticID of the first; and a stream whose identity never changes has
// one StaticID for nearly every row.
func TestAnyOrderStaticIDVouchesForIdentity(t *testing.T) {
	for _, field := range []string{"none", "driver_version", "gpu_uuid", "boot_id", "clocks_applications_graphics_mhz"} {
		ss := window(boot13, repeat([]int{2190, 2200}, 60), 5)
		for i, s := range ss {
			switch {
			case field == "driver_version" && i >= 50:
				s.DriverVersion = "580.159.04"
			case field == "gpu_uuid":
				s.GPUUUID = fmt.Sprintf("GPU-5f3c2a91-%d", i%2)
			case field == "boot_id" && i >= 50:
				s.BootID = boot13[:35] + "0"
			case field == "clocks_applications_graphics_mhz" && i%3 == 0:
				s.ClocksApplicationsGraphicsMHz = nil
			}
		}
		stream := shuffled(streamOf(ss), rand.New(rand.NewSource(4)), anyOrderSeps[:1])
		r := NewReader(bytes.NewReader(stream), "")
		byID, zero := map[uint64]string{}, 0
		for r.Scan() {
			row := r.Row()
			id := fmt.Sprintf("%s %s %s %s %d %v %d", row.BootID, row.GPUName, row.GPUUUID, row.DriverVersion, row.ClocksMaxSMMHz, row.AppsNull, row.AppsMHz)
			if row.StaticID == 0 {
				zero++
				continue
			}
			if was, ok := byID[row.StaticID]; ok && was != id {
				t.Fatalf("%s changing: StaticID %d on line %d has identity %q, and %q before", field, row.StaticID, r.Line(), id, was)
			}
			byID[row.StaticID] = id
		}
		if r.Err() != nil {
			t.Fatal(r.Err())
		}
		if field == "none" && (len(byID) != 1 || zero > 4) {
			t.Errorf("an unchanging identity: %d StaticIDs, %d of %d rows without", len(byID), zero, len(ss))
		}
		if field == "driver_version" && len(byID) < 2 {
			t.Errorf("a driver changed mid-stream: %d StaticIDs, want one before and one after", len(byID))
		}
	}
}

// TestAnyOrderLeavesAMDLinesToTheGeneralReading: an AMD GPU's line (its
// XCD clocks an array) is never the scanner's, so a row it reads has no
// AMD identity key that its StaticID would have to vouch for.
func TestAnyOrderLeavesAMDLinesToTheGeneralReading(t *testing.T) {
	stream := shuffled(streamOf(amdWindow(boot13, repeat([]int{2080, 2090}, 10), 2)), rand.New(rand.NewSource(6)), anyOrderSeps[:1])
	sameFold(t, stream)
	r := NewReader(bytes.NewReader(stream), "")
	for r.Scan() {
		if r.Row().StaticID != 0 && r.p.tmpl.staticID != r.Row().StaticID {
			t.Fatalf("line %d: StaticID %d not a learned layout's", r.Line(), r.Row().StaticID)
		}
	}
	if r.Err() != nil || r.p.anyOrderLines != 0 {
		t.Fatalf("err %v; the scanner read %d AMD lines", r.Err(), r.p.anyOrderLines)
	}
}

// TestAnyOrderManyMembers: a line of more members than a learned layout
// keeps is left to the general reading, which reads it as the oracle
// does, in any key order.
func TestAnyOrderManyMembers(t *testing.T) {
	ss := cleanWindow(bootF6)[:4]
	stream := shuffled(streamOf(ss), rand.New(rand.NewSource(2)), anyOrderSeps[:1])
	lines := bytes.SplitAfter(bytes.TrimSuffix(stream, []byte("\n")), []byte("\n"))
	for _, n := range []int{maxMembers - 16, 2 * maxMembers} {
		var extra []byte
		for k := range n {
			extra = fmt.Appendf(extra, `,"x%d":%d`, k, k)
		}
		ls := append([][]byte(nil), lines...)
		l := ls[2]
		cut := bytes.LastIndexByte(l, '}')
		ls[2] = append(append(append([]byte(nil), l[:cut]...), extra...), l[cut:]...)
		sameFold(t, bytes.Join(ls, nil))
	}
}

// TestAnyOrderMemoKeysByKey: a member of another key whose first bytes
// find the memo's entry of a sample key (gpu_index here) is not read as
// that key: a line with it in place of gpu_index is refused as the oracle
// refuses it, for the missing key.
func TestAnyOrderMemoKeysByKey(t *testing.T) {
	prefix := func(s string) int {
		b := []byte(s + "\x00\x00\x00\x00")
		return memoSlot(binary.LittleEndian.Uint64(b), binary.LittleEndian.Uint32(b[8:]))
	}
	want := prefix(`"gpu_index":`)
	name := ""
	for n := 0; name == ""; n++ {
		c := fmt.Sprintf("x%08d", n) // nine bytes, as gpu_index
		if prefix(`"`+c+`":`) == want {
			name = c
		}
	}
	stream := shuffled(streamOf(cleanWindow(bootF6)[:5]), rand.New(rand.NewSource(8)), anyOrderSeps[:1])
	lines := bytes.SplitAfter(bytes.TrimSuffix(stream, []byte("\n")), []byte("\n"))
	lines[3] = bytes.Replace(lines[3], []byte(`"gpu_index":0`), []byte(`"`+name+`":0`), 1)
	if !bytes.Contains(lines[3], []byte(name)) {
		t.Fatal("the edit did not apply")
	}
	edited := bytes.Join(lines, nil)
	sameFold(t, edited)
	if _, err := FoldStream(bytes.NewReader(edited)); err == nil || !strings.Contains(err.Error(), "gpu_index") {
		t.Fatalf("a line without gpu_index: err %v, want it named", err)
	}
}

// TestAnyOrderMemoAtTheBufferEnd: a line that ends its buffer (no bytes
// past it to compare a window of words with, as ParseSample's) is read
// from the memo through a copy, member for member as the reader reads it
// from its buffer.
func TestAnyOrderMemoAtTheBufferEnd(t *testing.T) {
	for _, seps := range [][]strictjson.Layout{anyOrderSeps[:1], anyOrderSeps} {
		stream := shuffled(streamOf(richWindow()), rand.New(rand.NewSource(12)), seps)
		r := NewReader(bytes.NewReader(stream), "")
		var p lineParser
		members := 0
		for _, line := range bytes.SplitAfter(bytes.TrimSuffix(stream, []byte("\n")), []byte("\n")) {
			line = bytes.TrimSuffix(line, []byte("\n"))
			line = append([]byte(nil), line...)[:len(line):len(line)] // nothing past it
			var row Row
			_, err := p.parse(line, &row)
			if !r.Scan() || err != nil {
				t.Fatalf("line %d: %v, reader: %v", r.Line(), err, r.Err())
			}
			if got, want := string(row.Sample().AppendJSON(nil)), string(r.Sample().AppendJSON(nil)); got != want {
				t.Fatalf("line %d: read at the buffer's end as\n%s\nby the reader as\n%s", r.Line(), got, want)
			}
			members += bytes.Count(line, []byte(`":`)) + bytes.Count(line, []byte(`" :`))
		}
		if p.memoHits != r.p.memoHits || p.memoHits < members/10 {
			t.Errorf("%d seps: %d of about %d members taken from the memo at the buffer's end, %d by the reader",
				len(seps), p.memoHits, members, r.p.memoHits)
		}
	}
}
