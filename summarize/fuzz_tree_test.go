package summarize_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/report"
	"github.com/clockgate/clockgate/strictjson"
	"github.com/clockgate/clockgate/summarize"
)

// FuzzSummarizeTree summarizes trees mutated byte-wise and structurally,
// driven by the fuzz input, from the clean-grid scenario's first model
// (fastengine and vllm, r1 and r2: 4 legs, 28 files, every leg
// binding-eligible). The input is read five bytes at a time, each group one
// operation (at most 4):
//
//	op  what                                   what it is
//	0   remove a file                          corrupt (a bench file: the point set differs)
//	1   truncate a file                        corrupt if a non-space byte goes; else a no-op
//	2   flip a structural byte ({}[]:," and    corrupt (always a syntax error)
//	    a stream's inner newlines)
//	3   flip any byte                          unknown: a valid new value may be undetectable
//	4   swap one file with another leg's       record or stream alone: corrupt (they no longer
//	                                           reconcile); bench or memory: unknown
//	5   copy a bench file to a new name        corrupt while the original stays (two objects
//	                                           for one point); with it removed, a rename: a no-op
//	6   reverse a JSON file's (a stream        a no-op
//	    line's) key order
//	7   CRLF line ends                         a no-op
//	8   add a stray file beside one            a no-op (a warning)
//
// Invariants, on every input: summarize never panics and returns within
// 10 s; it gives the same bytes twice; a binding-eligible ratio has every
// leg of both arms binding-eligible; a leg refused for its clock record or
// stream is not trusted. And, by what was done to each leg:
//
//   - a leg holding corrupt evidence is not binding-eligible, nor is any
//     ratio it is part of; legs holding different sets of bench points
//     (by content: a file's name is not its point) make their ratios not
//     binding-eligible;
//   - a leg whose clock record and stream still come from one leg, and
//     were not both changed byte-wise, is either refused or judged on
//     exactly that leg's clock numbers (what the record says is what the
//     stream recomputes to: a changed value that survives is one the
//     contract cannot see, such as interval_s or the case of a hex digit);
//   - a tree changed only by no-ops gives the clean tree's all-runs.json
//     byte for byte.
func FuzzSummarizeTree(f *testing.F) {
	fz := newTreeFuzz(f)
	f.Add([]byte{})
	for op := byte(0); op < 9; op++ {
		for _, file := range []byte{0, 3, 4, 5, 6, 13, 27} {
			f.Add([]byte{op, file, 0, 7, 0x21})
		}
	}
	f.Add([]byte{4, 5, 0, 2, 0, 4, 6, 0, 2, 0})                                  // record and stream of r1 both swapped with r2's
	f.Add([]byte{0, 3, 0, 0, 0, 0, 10, 0, 0, 0, 0, 17, 0, 0, 0, 0, 24, 0, 0, 0}) // every leg loses c8
	f.Add([]byte{3, 6, 0, 200, 0x04, 3, 5, 0, 100, 0x01})                        // stream and record each flipped
	f.Fuzz(func(t *testing.T, data []byte) {
		fz.run(t, data)
	})
}

// treeFuzz holds the clean tree and what summarize says of it.
type treeFuzz struct {
	master string
	// files are the 28 evidence files, relative to master: per leg, its
	// bench points, memory record, clock record and clock stream.
	files []string
	legs  []string
	clean *summarize.Summary
	// cleanAllRuns is the clean tree's all-runs.json.
	cleanAllRuns []byte
	records      map[string]*clocks.Record
}

const (
	kindBench = iota
	kindMemory
	kindRecord
	kindStream
)

var fuzzLegs = []string{"fastengine/r1", "fastengine/r2", "vllm/r1", "vllm/r2"}

func newTreeFuzz(f *testing.F) *treeFuzz {
	fz := &treeFuzz{master: filepath.Join(f.TempDir(), "master"), legs: fuzzLegs, records: map[string]*clocks.Record{}}
	for _, sub := range []string{"bench", "memory", "clocks"} {
		if err := os.CopyFS(filepath.Join(fz.master, sub, corpusModel), os.DirFS(filepath.Join(treesDir, "clean-grid", sub, corpusModel))); err != nil {
			f.Fatal(err)
		}
	}
	for _, leg := range fz.legs {
		engine, run, _ := strings.Cut(leg, "/")
		for _, c := range []string{"c1", "c2", "c4", "c8"} {
			fz.files = append(fz.files, path.Join("bench", corpusModel, engine, run, c+".json"))
		}
		fz.files = append(fz.files,
			path.Join("memory", corpusModel, engine, run+".summary.json"),
			path.Join("clocks", corpusModel, engine, run+".summary.json"),
			path.Join("clocks", corpusModel, engine, run+".samples.jsonl"))
	}
	s, err := summarize.Summarize(fz.master, summarize.Options{Baseline: "vllm"})
	if err != nil {
		f.Fatal(err)
	}
	if !s.GatePass || len(s.Legs) != 4 {
		f.Fatalf("the clean tree: gate_pass %v, %d legs", s.GatePass, len(s.Legs))
	}
	fz.clean = s
	if fz.cleanAllRuns, err = s.AllRunsJSON(); err != nil {
		f.Fatal(err)
	}
	for _, l := range s.Legs {
		fz.records[l.Engine+"/"+l.Name()] = l.Clock.Record
	}
	for i, a := range fz.legs {
		for _, b := range fz.legs[i+1:] {
			if fz.records[a].Window.FirstT == fz.records[b].Window.FirstT {
				f.Fatalf("legs %s and %s have one first_t: a swapped record could reconcile", a, b)
			}
		}
	}
	return fz
}

// fileKind tells which evidence files[i] is, and whose leg it is.
func fileKind(i int) (leg, kind int) {
	leg, k := i/7, i%7
	switch {
	case k < 4:
		return leg, kindBench
	case k == 4:
		return leg, kindMemory
	case k == 5:
		return leg, kindRecord
	}
	return leg, kindStream
}

// content is what a path holds now: which leg's file it came from, and
// what was done to it.
type content struct {
	src int // the leg the bytes came from
	// origin is the name of the file the bytes came from: for a bench
	// file, the point they hold (the name is not read, the content is).
	origin                  string
	corrupt, unknown, flipd bool
}

// extra is a bench file copied to a new name in a leg.
type extra struct {
	leg int
	c   content
}

func (fz *treeFuzz) run(t *testing.T, data []byte) {
	root := linkTree(t, fz.master)
	abs := func(i int) string { return filepath.Join(root, filepath.FromSlash(fz.files[i])) }
	state := map[int]*content{}
	for i := range fz.files {
		leg, _ := fileKind(i)
		state[i] = &content{src: leg, origin: filepath.Base(fz.files[i])}
	}
	var extras []extra
	var did []string
	write := func(i int, b []byte) {
		// Files are hard links to the master: replace, never rewrite.
		must(t, os.Remove(abs(i)))
		must(t, os.WriteFile(abs(i), b, 0o644))
	}

	for n := 0; n+5 <= len(data) && n < 5*4; n += 5 {
		op, fi, arg, mask := data[n]%9, int(data[n+1])%len(fz.files), int(data[n+2])<<8|int(data[n+3]), data[n+4]
		leg, kind := fileKind(fi)
		cur, err := os.ReadFile(abs(fi))
		if err != nil {
			continue // removed by an earlier operation
		}
		st := state[fi]
		switch op {
		case 0:
			must(t, os.Remove(abs(fi)))
			delete(state, fi)
			did = append(did, "remove "+fz.files[fi])
		case 1:
			if len(cur) == 0 {
				continue
			}
			at := arg % len(cur)
			if len(bytes.TrimSpace(cur[at:])) > 0 {
				st.corrupt = true
			}
			write(fi, cur[:at])
			did = append(did, fmt.Sprintf("truncate %s to %d of %d bytes", fz.files[fi], at, len(cur)))
		case 2:
			pos := structural(cur, kind == kindStream)
			if len(pos) == 0 || mask == 0 {
				continue
			}
			at := pos[arg%len(pos)]
			if strictValid(cur, kind == kindStream) {
				st.corrupt = true
			} else {
				st.unknown = true
			}
			b := bytes.Clone(cur)
			b[at] ^= mask
			write(fi, b)
			did = append(did, fmt.Sprintf("flip structural %q at %d of %s by %#x", cur[at], at, fz.files[fi], mask))
		case 3:
			if len(cur) == 0 || mask == 0 {
				continue
			}
			at := arg % len(cur)
			b := bytes.Clone(cur)
			b[at] ^= mask
			st.unknown, st.flipd = true, true
			write(fi, b)
			did = append(did, fmt.Sprintf("flip %q at %d of %s by %#x", cur[at], at, fz.files[fi], mask))
		case 4:
			other := (fi + 7*(1+int(mask)%3)) % len(fz.files) // the same file of another leg
			ob, err := os.ReadFile(abs(other))
			if err != nil {
				continue
			}
			write(fi, ob)
			write(other, cur)
			state[fi], state[other] = state[other], state[fi]
			if kind == kindBench || kind == kindMemory {
				state[fi].unknown, state[other].unknown = true, true
			}
			did = append(did, fmt.Sprintf("swap %s and %s", fz.files[fi], fz.files[other]))
		case 5:
			if kind != kindBench {
				continue
			}
			dup := filepath.Join(filepath.Dir(abs(fi)), fmt.Sprintf("d%d.json", arg%100))
			if _, err := os.Stat(dup); err == nil {
				continue
			}
			must(t, os.WriteFile(dup, cur, 0o644))
			extras = append(extras, extra{leg, *st})
			did = append(did, "copy "+fz.files[fi]+" to "+filepath.Base(dup))
		case 6:
			b, ok := reversedKeys(cur, kind == kindStream, arg)
			if !ok {
				continue
			}
			write(fi, b)
			did = append(did, "reverse the keys of "+fz.files[fi])
		case 7:
			b := bytes.ReplaceAll(cur, []byte("\n"), []byte("\r\n"))
			if !bytes.HasSuffix(b, []byte("\n")) && kind != kindStream {
				b = append(b, "\r\n"...)
			}
			write(fi, b)
			did = append(did, "CRLF "+fz.files[fi])
		case 8:
			stray := filepath.Join(filepath.Dir(abs(fi)), fmt.Sprintf("notes-%d.txt", arg%100))
			must(t, os.WriteFile(stray, []byte("x"), 0o644))
			did = append(did, "stray file beside "+fz.files[fi])
		}
	}
	fail := func(format string, args ...any) {
		t.Helper()
		t.Fatalf("after\n  %s\n"+format, append([]any{strings.Join(did, "\n  ")}, args...)...)
	}

	s, out := summarizeTwice(t, root)
	checkStructure(t, s, fail)

	// What each leg must be, from what was done to it. A leg's bench
	// points are the origins of the bench files it holds: two of one
	// origin are two objects for one point; legs whose point sets differ
	// make the ratio's point sets differ.
	corrupt := make([]bool, len(fz.legs))
	unknown := make([]bool, len(fz.legs))
	points := make([]string, len(fz.legs))
	anyBenchUnknown := false
	for li := range fz.legs {
		var bench []content
		for _, e := range extras {
			if e.leg == li {
				bench = append(bench, e.c)
			}
		}
		for k := 0; k < 7; k++ {
			i := li*7 + k
			_, kind := fileKind(i)
			c, ok := state[i]
			switch {
			case !ok && kind == kindBench:
				continue
			case !ok:
				corrupt[li] = true
				continue
			case kind == kindBench:
				bench = append(bench, *c)
				continue
			}
			corrupt[li] = corrupt[li] || c.corrupt
			unknown[li] = unknown[li] || c.unknown
		}
		seen := map[string]bool{}
		var names []string
		for _, c := range bench {
			corrupt[li] = corrupt[li] || c.corrupt
			unknown[li] = unknown[li] || c.unknown
			anyBenchUnknown = anyBenchUnknown || c.unknown
			if seen[c.origin] && !c.unknown {
				corrupt[li] = true // two objects for one point
			}
			if !seen[c.origin] {
				names = append(names, c.origin)
			}
			seen[c.origin] = true
		}
		slices.Sort(names)
		points[li] = strings.Join(names, ",")
		rec, str := state[li*7+5], state[li*7+6]
		if rec != nil && str != nil && rec.src != str.src {
			corrupt[li] = true // a record beside another leg's stream
		}
	}
	uniform := true
	for _, n := range points {
		uniform = uniform && n == points[0]
	}
	c := s.Comparisons
	ratiosEligible := len(c) == 1 && (c[0].Throughput.BindingEligible || c[0].Memory.BindingEligible)

	for li, key := range fz.legs {
		l := legByKey(s, corpusModel+"/"+key)
		if l == nil {
			fail("no leg %s", key)
		}
		if corrupt[li] && (l.BindingEligible() || ratiosEligible) {
			fail("leg %s holds corrupt evidence, yet leg eligible %v, a ratio eligible %v; reasons %+v",
				key, l.BindingEligible(), ratiosEligible, l.Reasons)
		}
		rec, str := state[li*7+5], state[li*7+6]
		if l.BindingEligible() && rec != nil && str != nil && rec.src == str.src && !(rec.flipd && str.flipd) {
			if diff := recordDiff(fz.records[fz.legs[rec.src]], l.Clock.Record); diff != "" {
				fail("leg %s is binding-eligible on clock numbers that are not leg %s's: %s", key, fz.legs[rec.src], diff)
			}
		}
	}
	if !uniform && !anyBenchUnknown && ratiosEligible {
		fail("legs hold different bench points (%q), yet a ratio is binding-eligible", points)
	}
	noOps := !slices.Contains(corrupt, true) && !slices.Contains(unknown, true) && uniform && points[0] == "c1.json,c2.json,c4.json,c8.json"
	for i, st := range state {
		leg, _ := fileKind(i)
		noOps = noOps && st.src == leg // no file holds another leg's bytes
	}
	if noOps && !bytes.Equal(out.allRuns, fz.cleanAllRuns) {
		fail("only no-ops, yet all-runs.json differs from the clean tree's")
	}
}

// fuzzOutputs are one summarize's outputs.
type fuzzOutputs struct{ summary, allRuns, md []byte }

// summarizeTwice summarizes root twice, each bounded by 10 s, and fails
// unless both give the same bytes.
func summarizeTwice(t *testing.T, root string) (*summarize.Summary, fuzzOutputs) {
	t.Helper()
	var first fuzzOutputs
	var s *summarize.Summary
	for i := 0; i < 2; i++ {
		s = summarizeBounded(t, root)
		var o fuzzOutputs
		var err error
		o.summary, err = s.SummaryJSON()
		must(t, err)
		o.allRuns, err = s.AllRunsJSON()
		must(t, err)
		var md bytes.Buffer
		must(t, report.Markdown(&md, s))
		o.md = md.Bytes()
		if i == 0 {
			first = o
			continue
		}
		if !bytes.Equal(o.summary, first.summary) || !bytes.Equal(o.allRuns, first.allRuns) || !bytes.Equal(o.md, first.md) {
			t.Fatal("summarizing one tree twice gave different bytes")
		}
	}
	return s, first
}

// checkStructure asserts what holds of any summary: an eligible ratio has
// every leg of both arms eligible and its clock established, and a leg
// refused for its record or stream is not trusted.
func checkStructure(t *testing.T, s *summarize.Summary, report func(string, ...any)) {
	t.Helper()
	for _, l := range s.Legs {
		for _, r := range l.Reasons {
			switch r.Code {
			case clocks.CodeMissing, clocks.CodeInvalid, clocks.CodeStreamMissing, clocks.CodeStreamInvalid, clocks.CodeStreamMismatch:
				if l.Clock.Trusted() {
					report("leg %s/%s is trusted with %s", l.Engine, l.Name(), r.Code)
				}
			}
		}
	}
	for _, c := range s.Comparisons {
		for name, ok := range map[string]bool{"throughput": c.Throughput.BindingEligible, "memory": c.Memory.BindingEligible} {
			if !ok {
				continue
			}
			if !c.Throughput.Clock.Established {
				report("%s ratio eligible with its clock not established", name)
			}
			for _, e := range []string{c.Ours, c.Baseline} {
				for _, l := range s.Arm(c.Model, e) {
					if !l.BindingEligible() {
						report("%s ratio eligible with leg %s %s not: %+v", name, e, l.Name(), l.Reasons)
					}
				}
			}
		}
	}
}

// recordDiff names the fields where got differs from want, leaving out
// what the contract does not reconcile: interval_s, and how a throttle bit
// set is spelled (0X…, upper-case hex).
func recordDiff(want, got *clocks.Record) string {
	if got == nil {
		return "no record"
	}
	var d []string
	bits := func(r *clocks.Record) []uint64 {
		var out []uint64
		for _, s := range r.GPUs[0].ThrottleReasonsActive {
			b, _ := clocks.ParseThrottle(s)
			out = append(out, b)
		}
		slices.Sort(out)
		return slices.Compact(out)
	}
	if !slices.Equal(bits(want), bits(got)) {
		d = append(d, fmt.Sprintf("throttle %v, want %v", got.GPUs[0].ThrottleReasonsActive, want.GPUs[0].ThrottleReasonsActive))
	}
	ws, gs := want.GPUs[0].SMClockMHz, got.GPUs[0].SMClockMHz
	if ws.N != gs.N || *ws.Min != *gs.Min || *ws.Max != *gs.Max || *ws.Median != *gs.Median ||
		math.Abs(*ws.SpreadPct-*gs.SpreadPct) > 2*clocks.SpreadTolerancePct+1e-9 {
		d = append(d, fmt.Sprintf("sm_clock_mhz %d/%d/%v/%d/%v, want %d/%d/%v/%d/%v", gs.N, *gs.Min, *gs.Median, *gs.Max, *gs.SpreadPct,
			ws.N, *ws.Min, *ws.Median, *ws.Max, *ws.SpreadPct))
	}
	w, g := *want, *got
	w.GPUs, g.GPUs = slices.Clone(w.GPUs), slices.Clone(g.GPUs)
	w.GPUs[0].ThrottleReasonsActive, g.GPUs[0].ThrottleReasonsActive = nil, nil
	w.GPUs[0].SMClockMHz, g.GPUs[0].SMClockMHz = clocks.Stats{}, clocks.Stats{}
	w.Window.IntervalS, g.Window.IntervalS = 0, 0
	wj, _ := json.Marshal(w)
	gj, _ := json.Marshal(g)
	if !bytes.Equal(wj, gj) {
		d = append(d, fmt.Sprintf("%s, want %s", gj, wj))
	}
	return strings.Join(d, "; ")
}

// structural returns the offsets of data's structural bytes: {}[]:, and
// every unescaped quote, outside strings or delimiting them, and, in a
// stream, each newline but the last byte. Changing any of them to any
// other byte leaves data that is not strict JSON.
func structural(data []byte, stream bool) []int {
	var out []int
	inStr, esc := false, false
	for i, c := range data {
		switch {
		case esc:
			esc = false
		case inStr && c == '\\':
			esc = true
		case c == '"':
			inStr = !inStr
			out = append(out, i)
		case inStr:
		case strings.IndexByte("{}[]:,", c) >= 0:
			out = append(out, i)
		case c == '\n' && stream && i < len(data)-1:
			out = append(out, i)
		}
	}
	return out
}

// strictValid reports whether data is strict JSON: one object (a file),
// or one object per line (a stream).
func strictValid(data []byte, stream bool) bool {
	if !stream {
		_, err := strictjson.ParseObject(data)
		return err == nil
	}
	for _, line := range bytes.Split(bytes.TrimSuffix(data, []byte("\n")), []byte("\n")) {
		if _, err := strictjson.ParseObject(line); err != nil {
			return false
		}
	}
	return true
}

// reversedKeys writes data (a stream: its line number arg) with the
// top-level keys of the object in reverse order, values as written. It
// declines what is not strict JSON now: a duplicate key dropped would be a
// change, not a no-op.
func reversedKeys(data []byte, stream bool, arg int) ([]byte, bool) {
	reverse := func(obj []byte) ([]byte, bool) {
		if _, err := strictjson.ParseObject(obj); err != nil {
			return nil, false
		}
		var m map[string]json.RawMessage
		if err := json.Unmarshal(obj, &m); err != nil {
			return nil, false
		}
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slices.Reverse(keys)
		var b bytes.Buffer
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			b.Write(kb)
			b.WriteByte(':')
			b.Write(m[k])
		}
		b.WriteByte('}')
		return b.Bytes(), true
	}
	if !stream {
		return reverse(data)
	}
	lines := bytes.Split(data, []byte("\n"))
	n := arg % len(lines)
	if len(bytes.TrimSpace(lines[n])) == 0 {
		return nil, false
	}
	r, ok := reverse(lines[n])
	if !ok {
		return nil, false
	}
	lines[n] = r
	return bytes.Join(lines, []byte("\n")), true
}
