package summarize_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/summarize"
)

// The hostile-input corpus: testdata/corpus/<kind>/<case> is a bad file
// that replaces one file of one leg of an otherwise clean tree; the cases
// that cannot be committed (a FIFO, a symbolic link loop, a 100 MB line, …)
// are made here. Each case names the one reason code the leg must carry and
// a fragment of its message; testdata/corpus/README.md lists them all, and
// TestCorpusREADME keeps the two in step.

const (
	corpusDir   = "../testdata/corpus"
	corpusModel = "llama-3.1-8b-instruct"
	// corpusLeg is the leg whose file each case replaces.
	corpusLeg = corpusModel + "/vllm/r1"
)

// corpusTargets maps each kind of evidence to the file of corpusLeg that a
// case of that kind replaces, relative to TREE.
var corpusTargets = map[string]string{
	"bench":  "bench/" + corpusModel + "/vllm/r1/c8.json",
	"memory": "memory/" + corpusModel + "/vllm/r1.summary.json",
	"record": "clocks/" + corpusModel + "/vllm/r1.summary.json",
	"stream": "clocks/" + corpusModel + "/vllm/r1.samples.jsonl",
}

// corpusCodes is what each kind's defects are reported as, in general; a
// case may name another code.
var corpusCodes = map[string]string{
	"bench":  summarize.CodeBenchInvalid,
	"memory": summarize.CodeMemoryInvalid,
	"record": clocks.CodeInvalid,
	"stream": clocks.CodeStreamInvalid,
}

// corpusCase is one bad input. A committed case names its file; a
// generated one has make, which puts the bad entry at path (the target,
// absent when make runs) given the clean file's bytes.
type corpusCase struct {
	kind, name string
	make       func(t *testing.T, path string, clean []byte)
	// code is the one reason the leg carries; "" means the input is
	// accepted and the outputs equal the clean tree's, byte for byte.
	code, fragment string
	// maxRead bounds the bytes the process may read while summarizing.
	maxRead int64
}

// committed lists the files in testdata/corpus with their code and
// fragment. The code is corpusCodes[kind] unless given.
var committed = []struct{ kind, file, code, fragment string }{
	{"bench", "array.json", "warning", "c8.json: not a bench result (its top level is an array"},
	{"bench", "bom.json", "", ":1: byte order mark is not allowed"},
	{"bench", "deep-nesting.json", "", ":1: nesting deeper than 64"},
	{"bench", "duplicate-key.json", "", `:1: duplicate key "output_throughput"`},
	{"bench", "duplicate-nested-key.json", "", `:1: duplicate key "tp"`},
	{"bench", "empty.json", "", ":1: empty file: want one bench result object per point"},
	{"bench", "failed-requests.json", summarize.CodeFailedRequests, "max_concurrency 8, request_rate inf: want every request completed and failed 0, found completed 24 of num_prompts 24, failed 1"},
	{"bench", "fractional-count.json", "", "num_prompts: want an integer from 0 to 2^40 (1099511627776), found number 24.0"},
	{"bench", "infinity.json", "", "output_throughput: want a finite number ≥ 0, found Infinity"},
	{"bench", "integer-as-string.json", "", `max_concurrency: want an integer from 1 to 2^40 (1099511627776) or null (no bound), found string "8"`},
	{"bench", "missing-key.json", "", "total_output_tokens: want an integer from 0 to 2^40 (1099511627776), found nothing (key missing)"},
	{"bench", "nan.json", "", "output_throughput: want a finite number ≥ 0, found NaN"},
	{"bench", "negative-infinity.json", "", "output_throughput: want a finite number ≥ 0, found -Infinity"},
	{"bench", "negative-throughput.json", "", "output_throughput: want a finite number ≥ 0, found number -69.95875980428646"},
	{"bench", "non-utf8.json", "", ":1: invalid UTF-8"},
	{"bench", "number-as-string.json", "", `output_throughput: want a finite number ≥ 0, found string "69.95875980428646"`},
	{"bench", "overflow.json", "", ":1: number 1e999 is not finite in float64"},
	{"bench", "request-rate-zero.json", "", `request_rate: want a number > 0, "inf" or Infinity, found number 0`},
	{"bench", "trailing-garbage.json", "", ":1: want a newline after an object, found 'x'"},
	{"bench", "truncated.json", "", ":1: unexpected end of input in an object"},
	{"bench", "two-objects-one-line.json", "", ":1: want a newline after an object, found '{'"},
	{"bench", "whitespace-only.json", "", ":1: empty file: want one bench result object per point"},
	{"bench", "wrong-nesting.json", "warning", "c8.json: not a bench result (an object with none of output_throughput, completed, total_output_tokens"},
	{"bench", "zero-concurrency.json", "", "max_concurrency: want an integer from 1 to 2^40 (1099511627776) or null (no bound), found number 0"},

	{"memory", "array.json", "", ":1: want an object, found array"},
	{"memory", "bom.json", "", ":1: byte order mark is not allowed"},
	{"memory", "duplicate-key.json", "", `:1: duplicate key "peak_gpu_memory_mib"`},
	{"memory", "empty.json", "", ":1: unexpected end of input"},
	{"memory", "fractional-n.json", "", "n: want an integer from 1 to 2^40 (1099511627776), found number 287.5"},
	{"memory", "infinity.json", "", ":1: unexpected 'I': NaN and Infinity are not JSON numbers"},
	{"memory", "nan.json", "", ":1: unexpected 'N': NaN and Infinity are not JSON numbers"},
	{"memory", "negative.json", "", "peak_gpu_memory_mib: want a finite number > 0 MiB, found number -71235.5"},
	{"memory", "non-utf8.json", "", ":1: invalid UTF-8"},
	{"memory", "number-as-string.json", "", `peak_gpu_memory_mib: want a finite number > 0 MiB, found string "71235.5"`},
	{"memory", "overflow.json", "", ":1: number 1e999 is not finite in float64"},
	{"memory", "truncated.json", "", ":1: want a digit after '.', found end of input"},
	{"memory", "two-objects.json", "", ":2: unexpected '{' after the value"},
	{"memory", "wrong-nesting.json", "", "peak_gpu_memory_mib: want a finite number > 0 MiB, found nothing (key missing); n: want an integer from 1 to 2^40 (1099511627776), found nothing (key missing)"},
	{"memory", "zero-n.json", "", "n: want an integer from 1 to 2^40 (1099511627776), found number 0"},
	{"memory", "zero.json", "", "peak_gpu_memory_mib: want a finite number > 0 MiB, found number 0"},

	{"record", "bom.json", "", "offset 0: byte order mark is not allowed"},
	{"record", "duplicate-key.json", "", `duplicate key "n"`},
	{"record", "empty-throttle-list.json", "", "throttle_reasons_active: empty list: the window's throttle state is unrecorded"},
	{"record", "empty.json", "", "offset 0: unexpected end of input"},
	{"record", "min-above-median.json", "", "sm_clock_mhz.median: want min ≤ median ≤ max, found min 2480, median 2473, max 2489"},
	{"record", "nan.json", "", "unexpected 'N': NaN and Infinity are not JSON numbers"},
	{"record", "negative-clock.json", "", "sm_clock_mhz.min: want a positive integer, found -2403"},
	{"record", "non-utf8.json", "", "invalid UTF-8"},
	{"record", "number-as-string.json", "", `sm_clock_mhz.n: want an integer, found string "179"`},
	{"record", "overflow.json", "", "number 1e999 is not finite in float64"},
	{"record", "truncated.json", "", "want a key string, found end of input"},
	{"record", "unknown-stop-reason.json", "", `window.stop_reason: want one of pid-exit, command-exit, signal, max-duration, refused, rebuilt, imported; found "oom"`},
	{"record", "wrong-nesting.json", "", "sm_clock_mhz: want an object, found array"},
	{"record", "zero-clock.json", "", "clocks_max_sm_mhz: want a positive integer, found 0"},

	{"stream", "array-line.jsonl", "", ".jsonl:3:1: want an object, found array"},
	{"stream", "bad-throttle.jsonl", "", `.jsonl:3: throttle_reasons_active: "[N/A]" is not a hex bit set like 0x0000000000000000`},
	{"stream", "bad-time.jsonl", "", `.jsonl:3: t: want an RFC 3339 time, found "2026-08-12 11:00:02"`},
	{"stream", "bom.jsonl", "", ".jsonl:1:1: byte order mark is not allowed"},
	{"stream", "duplicate-key.jsonl", "", `.jsonl:3:225: duplicate key "sm_clock_mhz"`},
	{"stream", "empty-line.jsonl", "", ".jsonl:2: empty line"},
	{"stream", "empty.jsonl", "", ".jsonl: no samples"},
	{"stream", "fractional-clock.jsonl", "", ".jsonl:3: sm_clock_mhz: want an integer, found number 2473.5"},
	{"stream", "infinity.jsonl", "", ".jsonl:3:443: unexpected 'I': NaN and Infinity are not JSON numbers"},
	{"stream", "missing-key.jsonl", "", ".jsonl:3: persistence_mode: missing"},
	{"stream", "nan.jsonl", "", ".jsonl:3:220: unexpected 'N': NaN and Infinity are not JSON numbers"},
	{"stream", "negative-clock.jsonl", "", ".jsonl:3: sm_clock_mhz: want a positive integer, found -2473"},
	{"stream", "non-utf8.jsonl", "", ".jsonl:3:378: invalid UTF-8"},
	{"stream", "number-as-string.jsonl", "", `.jsonl:3: sm_clock_mhz: want an integer, found string "2473"`},
	{"stream", "overflow.jsonl", "", ".jsonl:3:443: number 1e999 is not finite in float64"},
	{"stream", "truncated.jsonl", "", ".jsonl:3:151: torn final line (no newline): unterminated string"},
	{"stream", "two-objects-one-line.jsonl", "", ".jsonl:3:499: unexpected '{' after the value"},
	{"stream", "utilization-over-100.jsonl", "", ".jsonl:3: utilization_gpu_pct: want 0 to 100, found 101"},
	{"stream", "wrong-nesting.jsonl", "", ".jsonl:3: t: missing"},
	{"stream", "zero-clock.jsonl", "", ".jsonl:3: sm_clock_mhz: want a positive integer, found 0"},
}

const refusedLink = "a symbolic link that leaves the tree or cannot be resolved (a loop or a dangling link); refused unread; " +
	"put the file or directory itself in its place (copy it into the tree), or remove the link"

// hugeSize is the size of the generated oversized file or line: 100 MB.
const hugeSize = 100 << 20

// generated returns the cases made at test time, for each kind.
func generated() []corpusCase {
	var out []corpusCase
	for _, kind := range []string{"bench", "memory", "record", "stream"} {
		code := corpusCodes[kind]
		unreadable := code // a file that cannot be opened
		if kind == "stream" {
			unreadable = clocks.CodeStreamMissing
		}
		missing := map[string]string{"bench": summarize.CodeBenchMissing, "memory": summarize.CodeMemoryMissing,
			"record": clocks.CodeMissing, "stream": clocks.CodeStreamMissing}[kind]
		missingMsg := map[string]string{
			"bench":  "no bench points: no <point>.json or .jsonl file in bench/" + corpusLeg + "/",
			"memory": "no memory record at memory/" + corpusLeg + ".summary.json",
			"record": "no clock record at clocks/" + corpusLeg + ".summary.json",
			"stream": "no readable clock stream beside the record: ",
		}[kind]
		hugeCode, hugeMsg, hugeRead := code, "larger than 16 MiB; refused unread", int64(clocks.MaxJSONBytes+4<<20)
		switch kind {
		case "stream":
			hugeMsg, hugeRead = ".jsonl:1: longer than 65536 bytes; refused unread", 4<<20
		case "bench":
			// Bench files are streamed up to 1 GiB: the first NUL ends it.
			hugeMsg, hugeRead = ":1: control character 0x0 in a string", 4<<20
		}
		out = append(out,
			corpusCase{kind: kind, name: "removed", code: missing, fragment: missingMsg,
				make: func(t *testing.T, path string, clean []byte) {
					if kind == "bench" {
						// The leg's only bench file: remove them all.
						files, _ := filepath.Glob(filepath.Join(filepath.Dir(path), "*.json"))
						for _, f := range files {
							must(t, os.Remove(f))
						}
					}
				}},
			corpusCase{kind: kind, name: "directory", code: unreadable, fragment: "not a regular file (a directory)",
				make: func(t *testing.T, path string, _ []byte) { must(t, os.Mkdir(path, 0o755)) }},
			corpusCase{kind: kind, name: "fifo", code: unreadable, fragment: "not a regular file (a FIFO)",
				make: func(t *testing.T, path string, _ []byte) { must(t, syscall.Mkfifo(path, 0o644)) }},
			corpusCase{kind: kind, name: "symlink-loop", code: unreadable, fragment: refusedLink,
				make: func(t *testing.T, path string, _ []byte) { must(t, os.Symlink(filepath.Base(path), path)) }},
			corpusCase{kind: kind, name: "symlink-dangling", code: unreadable, fragment: refusedLink,
				make: func(t *testing.T, path string, _ []byte) { must(t, os.Symlink("nowhere", path)) }},
			corpusCase{kind: kind, name: "symlink-outside", code: unreadable, fragment: refusedLink,
				make: func(t *testing.T, path string, clean []byte) {
					// The clean bytes, but outside TREE: the place is the defect.
					outside := filepath.Join(t.TempDir(), filepath.Base(path))
					must(t, os.WriteFile(outside, clean, 0o644))
					must(t, os.Symlink(outside, path))
				}},
			corpusCase{kind: kind, name: "huge-single-line", code: hugeCode, fragment: hugeMsg, maxRead: hugeRead,
				make: func(t *testing.T, path string, _ []byte) {
					// A sparse 100 MB file with no newline: JSON's opening, then zeros.
					f, err := os.Create(path)
					must(t, err)
					_, err = f.WriteString(`{"t":"`)
					must(t, err)
					must(t, f.Truncate(hugeSize))
					must(t, f.Close())
				}},
			corpusCase{kind: kind, name: "crlf", code: "",
				make: func(t *testing.T, path string, clean []byte) {
					// A file written on one line gets a CRLF line end.
					crlf := bytes.ReplaceAll(clean, []byte("\n"), []byte("\r\n"))
					if !bytes.Contains(clean, []byte("\n")) {
						crlf = append(crlf, "\r\n"...)
					}
					must(t, os.WriteFile(path, crlf, 0o644))
				}},
			corpusCase{kind: kind, name: "keys-reordered", code: "",
				make: func(t *testing.T, path string, clean []byte) {
					must(t, os.WriteFile(path, reorderKeys(t, clean), 0o644))
				}},
		)
	}
	return append(out, corpusCase{kind: "bench", name: "over-cap", code: summarize.CodeBenchInvalid, maxRead: 1 << 20,
		fragment: fmt.Sprintf("c8.json: %d bytes, larger than 1024 MiB (the bench file cap); refused unread", summarize.MaxBenchBytes+1),
		make: func(t *testing.T, path string, _ []byte) {
			// A sparse file one byte over the cap: refused before a byte
			// of it is read.
			f, err := os.Create(path)
			must(t, err)
			_, err = f.WriteString("{")
			must(t, err)
			must(t, f.Truncate(summarize.MaxBenchBytes+1))
			must(t, f.Close())
		}})
}

// reorderKeys writes each JSON object of data (one per line, or one
// object over several lines) with its top-level keys in reverse order and
// its values as written: the same evidence.
func reorderKeys(t *testing.T, data []byte) []byte {
	t.Helper()
	var out bytes.Buffer
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	multi := bytes.Count(bytes.TrimSpace(data), []byte("\n")) > 0 && bytes.HasPrefix(bytes.TrimSpace(data), []byte("{\"t\""))
	for dec.More() {
		var m map[string]json.RawMessage
		must(t, dec.Decode(&m))
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		slices.Reverse(keys)
		out.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				out.WriteByte(',')
			}
			kb, _ := json.Marshal(k)
			out.Write(kb)
			out.WriteByte(':')
			out.Write(m[k])
		}
		out.WriteByte('}')
		if multi || dec.More() {
			out.WriteByte('\n')
		}
	}
	return out.Bytes()
}

// corpusTree copies the clean-grid scenario's first model, both arms, two
// legs each, into a temporary directory: every leg binding-eligible.
func corpusTree(t *testing.T) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "tree")
	for _, sub := range []string{"bench", "memory", "clocks"} {
		dst := filepath.Join(root, sub, corpusModel)
		must(t, os.CopyFS(dst, os.DirFS(filepath.Join(treesDir, "clean-grid", sub, corpusModel))))
	}
	return root
}

// linkTree makes a tree of hard links to the files of master: cheap, and
// a case that removes a file and writes another in its place leaves master
// as it was. (Changing a linked file in place would change master.)
func linkTree(t *testing.T, master string) string {
	t.Helper()
	root := filepath.Join(t.TempDir(), "tree")
	must(t, filepath.WalkDir(master, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(master, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(root, rel), 0o755)
		}
		return os.Link(p, filepath.Join(root, rel))
	}))
	return root
}

// summarizeBounded summarizes root and fails the test when that takes
// more than 10 s (a FIFO waited on, a loop followed) or panics.
func summarizeBounded(t *testing.T, root string) *summarize.Summary {
	t.Helper()
	return summarizeBoundedWith(t, root, summarize.Options{Baseline: "vllm"})
}

// summarizeBoundedWith is summarizeBounded with options.
func summarizeBoundedWith(t *testing.T, root string, opts summarize.Options) *summarize.Summary {
	t.Helper()
	type result struct {
		s   *summarize.Summary
		err error
		pan any
	}
	done := make(chan result, 1)
	go func() {
		defer func() {
			if p := recover(); p != nil {
				done <- result{pan: p}
			}
		}()
		s, err := summarize.Summarize(root, opts)
		done <- result{s: s, err: err}
	}()
	select {
	case r := <-done:
		if r.pan != nil {
			t.Fatalf("summarize panicked: %v", r.pan)
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
		return r.s
	case <-time.After(10 * time.Second):
		t.Fatal("summarize did not return within 10 s")
	}
	return nil
}

// bytesRead is what this process has read so far (rchar of
// /proc/self/io), or -1 where that is not known.
func bytesRead() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return -1
}

func legByKey(s *summarize.Summary, key string) *summarize.Leg {
	for _, l := range s.Legs {
		if l.Model+"/"+l.Engine+"/"+l.Name() == key {
			return l
		}
	}
	return nil
}

func outputsOf(t *testing.T, s *summarize.Summary) []byte {
	t.Helper()
	sum, err := s.SummaryJSON()
	must(t, err)
	all, err := s.AllRunsJSON()
	must(t, err)
	return append(sum, all...)
}

func allCorpusCases(t *testing.T) []corpusCase {
	var cases []corpusCase
	for _, c := range committed {
		c := c
		code := c.code
		if code == "" {
			code = corpusCodes[c.kind]
		}
		cases = append(cases, corpusCase{kind: c.kind, name: c.file, code: code, fragment: c.fragment,
			make: func(t *testing.T, path string, _ []byte) {
				data, err := os.ReadFile(filepath.Join(corpusDir, c.kind, c.file))
				must(t, err)
				must(t, os.WriteFile(path, data, 0o644))
			}})
	}
	return append(cases, generated()...)
}

// TestCorpus puts each bad input into a clean tree and checks the exact
// reason its leg carries, that the leg and both ratios of its model are
// not binding-eligible, and that no other leg is touched. Accepted inputs
// (CRLF line ends, keys in another order) must give the clean tree's
// outputs byte for byte.
func TestCorpus(t *testing.T) {
	cleanRoot := corpusTree(t)
	clean := summarizeBounded(t, cleanRoot)
	if !clean.GatePass || len(clean.Legs) != 4 {
		t.Fatalf("the clean tree: gate_pass %v, %d legs; want true, 4", clean.GatePass, len(clean.Legs))
	}
	cleanOut := outputsOf(t, clean)

	for _, c := range allCorpusCases(t) {
		t.Run(c.kind+"/"+c.name, func(t *testing.T) {
			if c.maxRead == 0 {
				// The cases that measure what is read run first, alone.
				t.Parallel()
			}
			root := linkTree(t, cleanRoot)
			target := filepath.Join(root, filepath.FromSlash(corpusTargets[c.kind]))
			cleanBytes, err := os.ReadFile(target)
			must(t, err)
			must(t, os.Remove(target))
			c.make(t, target, cleanBytes)

			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			allocBefore, readBefore := ms.TotalAlloc, bytesRead()
			opts := summarize.Options{Baseline: "vllm"}
			if c.maxRead > 0 {
				// What is measured is the reading: no all-runs.json rows.
				opts.Rows = summarize.DiscardRows
			}
			s := summarizeBoundedWith(t, root, opts)
			runtime.ReadMemStats(&ms)
			alloc, read := int64(ms.TotalAlloc-allocBefore), bytesRead()-readBefore
			if c.maxRead > 0 {
				if readBefore >= 0 && read > c.maxRead {
					t.Errorf("read %d bytes of a %d-byte input; want at most %d", read, hugeSize, c.maxRead)
				}
				if alloc > 2*c.maxRead {
					t.Errorf("allocated %d bytes for a %d-byte input; want at most %d", alloc, hugeSize, 2*c.maxRead)
				}
			}

			if c.code == "warning" {
				checkWarned(t, s, c.fragment)
				return
			}
			if c.code == "" {
				if got := outputsOf(t, s); !bytes.Equal(got, cleanOut) {
					l := legByKey(s, corpusLeg)
					t.Fatalf("an accepted input changed the outputs; leg reasons %+v", l.Reasons)
				}
				return
			}
			checkRefused(t, s, c.code, c.fragment)
			if c.kind == "bench" || c.kind == "memory" || strings.HasPrefix(c.name, "symlink-") {
				checkSaysWhatToDo(t, legByKey(s, corpusLeg))
			}
		})
	}
}

// doVerbs begin what a message says to do.
var doVerbs = []string{"restore ", "rerun ", "re-measure ", "read ", "put ", "fix ", "run ", "keep ", "save ", "summarize ", "make "}

// checkSaysWhatToDo asserts that every reason of l that summarize words
// (bench, memory, and a refused symbolic link) ends with what to do: its
// last "; " clause, or the part of it after ": ", begins with a verb of
// doVerbs.
func checkSaysWhatToDo(t *testing.T, l *summarize.Leg) {
	t.Helper()
	for _, r := range l.Reasons {
		if !strings.HasPrefix(r.Code, "bench.") && !strings.HasPrefix(r.Code, "memory.") && !strings.Contains(r.Message, "symbolic link") {
			continue
		}
		i := strings.LastIndex(r.Message, "; ")
		last := r.Message[i+2:]
		_, after, _ := strings.Cut(last, ": ")
		if i < 0 || !slices.ContainsFunc(doVerbs, func(v string) bool { return strings.HasPrefix(last, v) || strings.HasPrefix(after, v) }) {
			t.Errorf("%s %q does not end with what to do", r.Code, r.Message)
		}
	}
}

// checkWarned asserts a file that holds no bench result is a warning
// holding fragment and never a reason: corpusLeg carries none, and only
// misses the point the file held (bench.point_mismatch at the ratio).
func checkWarned(t *testing.T, s *summarize.Summary, fragment string) {
	t.Helper()
	l := legByKey(s, corpusLeg)
	if l == nil || len(l.Reasons) > 0 {
		t.Fatalf("leg %s: %+v; want no reason", corpusLeg, l)
	}
	if !slices.ContainsFunc(s.Warnings, func(w string) bool { return strings.Contains(w, fragment) }) {
		t.Errorf("warnings %q lack %q", s.Warnings, fragment)
	}
	if len(s.Comparisons) != 1 || !slices.Contains(clocks.Codes(s.Comparisons[0].Throughput.Reasons), "bench.point_mismatch") || s.GatePass {
		t.Errorf("want the ratio refused for the missing point alone; gate_pass %v", s.GatePass)
	}
}

// checkRefused asserts corpusLeg carries exactly one reason, code, whose
// message holds fragment; that it and its model's ratios are not
// binding-eligible; and that every other leg is.
func checkRefused(t *testing.T, s *summarize.Summary, code, fragment string) {
	t.Helper()
	l := legByKey(s, corpusLeg)
	if l == nil {
		t.Fatalf("no leg %s", corpusLeg)
	}
	if got := clocks.Codes(l.Reasons); !slices.Equal(got, []string{code}) {
		t.Fatalf("leg codes %v, want [%s]; reasons %+v", got, code, l.Reasons)
	}
	var msgs []string
	for _, r := range l.Reasons {
		msgs = append(msgs, r.Message)
	}
	if !slices.ContainsFunc(msgs, func(m string) bool { return strings.Contains(m, fragment) }) {
		t.Errorf("%s messages %q lack %q", code, msgs, fragment)
	}
	if l.BindingEligible() {
		t.Error("the leg is binding-eligible")
	}
	for _, o := range s.Legs {
		if o != l && !o.BindingEligible() {
			t.Errorf("leg %s/%s/%s was touched: %+v", o.Model, o.Engine, o.Name(), o.Reasons)
		}
	}
	if len(s.Comparisons) != 1 {
		t.Fatalf("%d comparisons, want 1", len(s.Comparisons))
	}
	c := s.Comparisons[0]
	want := clocks.Reason{Code: clocks.CodeLegIneligible, Message: "leg vllm r1 is not binding-eligible: " + code,
		Scope: clocks.ScopeRatio, Engine: "vllm", Run: 1}
	for name, r := range map[string]struct {
		eligible bool
		reasons  []clocks.Reason
	}{"throughput": {c.Throughput.BindingEligible, c.Throughput.Reasons}, "memory": {c.Memory.BindingEligible, c.Memory.Reasons}} {
		if r.eligible || !slices.Contains(r.reasons, want) {
			t.Errorf("%s ratio: binding_eligible %v, reasons %+v; want false with %+v", name, r.eligible, r.reasons, want)
		}
	}
	if s.GatePass {
		t.Error("gate_pass with a refused leg")
	}
}

// TestCorpusRunNames: names that are not r<N> are warnings, never legs,
// in each subtree.
func TestCorpusRunNames(t *testing.T) {
	root := corpusTree(t)
	dir := func(sub string) string { return filepath.Join(root, sub, corpusModel, "vllm") }
	var want []string
	for _, name := range []string{"r0", "r-1", "r01", "rx", "R1", "r1 ", "r+1", "r1e3", "r٣", "r1073741825"} {
		must(t, os.CopyFS(filepath.Join(dir("bench"), name), os.DirFS(filepath.Join(dir("bench"), "r1"))))
		want = append(want, fmt.Sprintf("bench/%s/vllm/%s: not a leg: want r<N>, N a decimal integer from 1 to 2^30 (1073741824) without leading zeros; ignored", corpusModel, name))
		for _, f := range []struct{ sub, suffix, what string }{
			{"memory", ".summary.json", "r<N>.summary.json"},
			{"clocks", ".summary.json", "r<N>.samples.jsonl or r<N>.summary.json"},
			{"clocks", ".samples.jsonl", "r<N>.samples.jsonl or r<N>.summary.json"},
		} {
			data, err := os.ReadFile(filepath.Join(dir(f.sub), "r1"+f.suffix))
			must(t, err)
			must(t, os.WriteFile(filepath.Join(dir(f.sub), name+f.suffix), data, 0o644))
			want = append(want, fmt.Sprintf("%s/%s/vllm/%s%s: not a leg's file: want %s, N a decimal integer from 1 to 2^30 (1073741824) without leading zeros; ignored",
				f.sub, corpusModel, name, f.suffix, f.what))
		}
	}
	s := summarizeBounded(t, root)
	if len(s.Legs) != 4 || !s.GatePass {
		t.Errorf("%d legs, gate_pass %v; want the 4 real legs, and the gate passing", len(s.Legs), s.GatePass)
	}
	slices.Sort(want)
	got := slices.Sorted(slices.Values(s.Warnings))
	if !slices.Equal(got, want) {
		t.Errorf("warnings\n%s\nwant\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
}

// TestCorpusUnreadable: a file the process may not read. Root reads a
// mode-000 file anyway, so as root the check runs in a child process
// under uid 65534 (nobody); it is skipped, with the reason, only where
// that cannot be arranged.
func TestCorpusUnreadable(t *testing.T) {
	for _, kind := range []string{"bench", "memory", "record", "stream"} {
		t.Run(kind, func(t *testing.T) {
			code := corpusCodes[kind]
			if kind == "stream" {
				code = clocks.CodeStreamMissing
			}
			if os.Geteuid() != 0 {
				root := corpusTree(t)
				must(t, os.Chmod(filepath.Join(root, filepath.FromSlash(corpusTargets[kind])), 0))
				checkRefused(t, summarizeBounded(t, root), code, "permission denied")
				return
			}
			reasons := unreadableAsNobody(t, kind)
			var got []string
			for _, r := range reasons {
				got = append(got, r.Code)
			}
			if !slices.Equal(got, []string{code}) || !strings.Contains(reasons[0].Message, "permission denied") {
				t.Errorf("as nobody, leg reasons %+v; want one %s naming permission denied", reasons, code)
			}
		})
	}
}

// unreadableAsNobody makes a world-readable tree whose kind file is mode
// 000, runs this test binary as uid 65534 on it, and returns corpusLeg's
// reasons as that process saw them.
func unreadableAsNobody(t *testing.T, kind string) []clocks.Reason {
	t.Helper()
	work, err := os.MkdirTemp("", "clockgate-unreadable-")
	must(t, err)
	t.Cleanup(func() { os.RemoveAll(work) })
	must(t, os.Chmod(work, 0o755))
	self, err := os.Executable()
	must(t, err)
	bin := filepath.Join(work, "summarize.test")
	src, err := os.Open(self)
	must(t, err)
	dst, err := os.OpenFile(bin, os.O_WRONLY|os.O_CREATE, 0o755)
	must(t, err)
	_, err = io.Copy(dst, src)
	must(t, err)
	src.Close()
	must(t, dst.Close())
	root := filepath.Join(work, "tree")
	for _, sub := range []string{"bench", "memory", "clocks"} {
		must(t, os.CopyFS(filepath.Join(root, sub, corpusModel), os.DirFS(filepath.Join(treesDir, "clean-grid", sub, corpusModel))))
	}
	must(t, filepath.WalkDir(work, func(p string, d os.DirEntry, err error) error {
		if err == nil && d.IsDir() {
			err = os.Chmod(p, 0o755)
		}
		return err
	}))
	must(t, os.Chmod(filepath.Join(root, filepath.FromSlash(corpusTargets[kind])), 0))

	cmd := exec.Command(bin, "-test.run=^TestCorpusUnreadableHelper$", "-test.count=1")
	cmd.Dir = work
	cmd.Env = append(os.Environ(), "CLOCKGATE_CORPUS_TREE="+root)
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Start(); err != nil {
		t.Skipf("running as root, and cannot start a child as uid 65534 (%v): a mode-000 file does not stop root, so unreadable input is not checked here", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the child as nobody did not finish within 20 s")
	}
	if err != nil {
		t.Fatalf("child as nobody: %v\n%s%s", err, stdout.String(), stderr.String())
	}
	sc := bufio.NewScanner(&stdout)
	for sc.Scan() {
		if js, ok := strings.CutPrefix(sc.Text(), "REASONS "); ok {
			var rs []clocks.Reason
			must(t, json.Unmarshal([]byte(js), &rs))
			return rs
		}
	}
	t.Fatalf("the child printed no reasons:\n%s%s", stdout.String(), stderr.String())
	return nil
}

// TestCorpusUnreadableHelper is the child of unreadableAsNobody.
func TestCorpusUnreadableHelper(t *testing.T) {
	root := os.Getenv("CLOCKGATE_CORPUS_TREE")
	if root == "" {
		t.Skip("run by TestCorpusUnreadable")
	}
	s := summarizeBounded(t, root)
	l := legByKey(s, corpusLeg)
	if l == nil {
		t.Fatalf("no leg %s", corpusLeg)
	}
	js, err := json.Marshal(l.Reasons)
	must(t, err)
	fmt.Printf("REASONS %s\n", js)
}

// TestCorpusREADME: testdata/corpus/README.md lists every case with its
// code, and names no case that does not exist.
func TestCorpusREADME(t *testing.T) {
	readme, err := os.ReadFile(filepath.Join(corpusDir, "README.md"))
	must(t, err)
	listed := map[string]string{}
	for _, line := range strings.Split(string(readme), "\n") {
		cells := strings.Split(line, "|")
		if len(cells) < 5 || !strings.HasPrefix(strings.TrimSpace(cells[1]), "`") {
			continue
		}
		name := strings.Trim(strings.TrimSpace(cells[1]), "`")
		code := strings.Trim(strings.TrimSpace(cells[2]), "`")
		listed[name] = code
	}
	want := map[string]string{}
	for _, c := range allCorpusCases(t) {
		code := c.code
		if code == "" {
			code = "accepted"
		}
		want[c.kind+"/"+c.name] = code
	}
	for _, kind := range []string{"bench", "memory", "record", "stream"} {
		want[kind+"/unreadable"] = map[string]string{"bench": summarize.CodeBenchInvalid, "memory": summarize.CodeMemoryInvalid,
			"record": clocks.CodeInvalid, "stream": clocks.CodeStreamMissing}[kind]
	}
	for k, code := range want {
		if listed[k] != code {
			t.Errorf("README.md: %s listed as %q, want %q", k, listed[k], code)
		}
	}
	for k := range listed {
		if _, ok := want[k]; !ok && !strings.HasPrefix(k, "run-names/") {
			t.Errorf("README.md lists %s, which no test runs", k)
		}
	}
	// Every committed file is in the table.
	files, err := filepath.Glob(filepath.Join(corpusDir, "*", "*"))
	must(t, err)
	for _, f := range files {
		k := filepath.Base(filepath.Dir(f)) + "/" + filepath.Base(f)
		if _, ok := want[k]; !ok {
			t.Errorf("%s is in the corpus but not in the test's table", k)
		}
	}
}
