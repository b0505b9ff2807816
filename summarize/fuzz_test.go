package summarize

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/clockgate/clockgate/strictjson"
)

// fuzzSeeds adds every file under the committed scenario trees and the
// corpus whose name ends in suffix, below dir, as a seed.
func fuzzSeeds(f *testing.F, suffix string, dirs ...string) {
	for _, dir := range dirs {
		filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && strings.HasSuffix(p, suffix) {
				if b, err := os.ReadFile(p); err == nil {
					f.Add(b)
				}
			}
			return nil
		})
	}
}

const fuzzRel = "bench/m/e/r1/c1.json"

// FuzzParseBench holds the bench reader to its contract on any file: it
// never panics and never answers nothing (every file is points,
// bench.invalid messages, or one not-a-result warning); an accepted
// point's identity and numbers are in range, its kept object encodes as
// JSON and reads back to the same point; and reading the file a byte at a
// time gives the same answer as reading it whole.
func FuzzParseBench(f *testing.F) {
	fuzzSeeds(f, ".json", "../testdata/trees/clean-grid/bench/llama-3.1-8b-instruct/vllm/r1",
		"../testdata/trees/three-engines/bench/llama-3.1-8b-instruct/vllm/r1",
		"../testdata/trees/failed-requests/bench", "../testdata/corpus/bench", "../testdata/bench-real")
	fuzzSeeds(f, ".jsonl", "../testdata/bench-real")
	f.Add([]byte(validPoint))
	f.Add([]byte(validPoint + "\n" + pointWith("max_concurrency", "2") + "\n"))
	f.Add([]byte(validPoint + "\r\n" + validPoint))
	f.Add([]byte(sglangPoint + "\n"))
	f.Add([]byte(pointWith("output_throughput", "1e305")))
	f.Add([]byte(pointWith("output_throughput", "5e-324")))
	f.Add([]byte(pointWith("burstiness", "Infinity")))
	f.Add([]byte(pointWith("max_concurrency", "null")))
	f.Fuzz(func(t *testing.T, data []byte) {
		bf := parseBench(fuzzRel, data)
		points, invalid, failed := bf.points, bf.invalid, bf.failed
		switch {
		case bf.notResult != "" && len(points)+len(invalid)+len(failed) > 0:
			t.Fatalf("a warning and points or reasons for %q", data)
		case bf.notResult == "" && len(points)+len(invalid) == 0:
			t.Fatalf("no point, no bench.invalid and no warning for %q", data)
		}
		for _, m := range append(append([]string{bf.notResult}, invalid...), failed...) {
			if m != "" && !strings.HasPrefix(m, fuzzRel+":") {
				t.Fatalf("message %q does not begin with the file", m)
			}
		}
		for _, p := range points {
			if p.ID.MaxConcurrency < 0 || !(p.ID.RequestRate >= 0) || math.IsInf(p.ID.RequestRate, 0) ||
				p.NumPrompts < 0 || p.TotalInputTokens < 0 || p.TotalOutputTokens < 0 ||
				(p.ModelID == "" && p.Format != FormatSGLang) || !(p.OutputThroughput >= 0) || math.IsInf(p.OutputThroughput, 0) {
				t.Fatalf("accepted out-of-range point %+v", p.BenchPoint)
			}
			if !strings.HasPrefix(p.Where, fuzzRel) {
				t.Fatalf("point where %q", p.Where)
			}
			raw := p.Raw
			if _, derived := kept(t, p)["errors"].(map[string]any); derived && p.Format == FormatSGLang {
				continue // its requests came from the errors array, now counted
			}
			again := parseBench(fuzzRel, raw)
			if len(again.invalid) > 0 || len(again.points) != 1 || again.points[0].BenchPoint != p.BenchPoint {
				t.Fatalf("kept object %s reads back as %+v, %q; want %+v", raw, again.points, again.invalid, p.BenchPoint)
			}
		}
		if got, want := fmt.Sprintf("%+v", readBench(fuzzRel, iotest.OneByteReader(bytes.NewReader(data)))), fmt.Sprintf("%+v", bf); got != want {
			t.Fatalf("read a byte at a time: %s\nwhole: %s", got, want)
		}
		if len(invalid) == 0 && bf.notResult == "" && !jsonLines(data) && !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
			t.Fatalf("accepted a file encoding/json refuses, with no Python literal in it: %q", data)
		}
	})
}

// jsonLines reports whether data is a sequence of JSON values to
// encoding/json.
func jsonLines(data []byte) bool {
	dec := json.NewDecoder(bytes.NewReader(data))
	for {
		var v any
		if err := dec.Decode(&v); err != nil {
			return err.Error() == "EOF"
		}
	}
}

// FuzzParseMemory holds the memory reader to its contract: exactly one of
// a record and a memory.invalid message naming the file; an accepted
// record's peak is finite and positive and n a positive integer; it is
// JSON to encoding/json too, and its kept object reads back the same.
func FuzzParseMemory(f *testing.F) {
	fuzzSeeds(f, ".json", "../testdata/trees/clean-grid/memory/llama-3.1-8b-instruct", "../testdata/corpus/memory")
	f.Add([]byte(`{"peak_gpu_memory_mib": 71234.0, "peak_host_rss_mib": 5120.5, "n": 312}`))
	f.Add([]byte(`{"peak_gpu_memory_mib": 1e308, "n": 1}`))
	const rel = "memory/m/e/r1.summary.json"
	f.Fuzz(func(t *testing.T, data []byte) {
		m, msg := parseMemory(rel, data)
		if (m == nil) == (msg == "") {
			t.Fatalf("record %+v and message %q: want exactly one", m, msg)
		}
		if m == nil {
			if !strings.HasPrefix(msg, rel+":") {
				t.Fatalf("message %q does not begin with the file", msg)
			}
			return
		}
		if !(m.PeakGPUMemoryMiB > 0) || math.IsInf(m.PeakGPUMemoryMiB, 0) || m.N <= 0 {
			t.Fatalf("accepted %+v", m)
		}
		if !json.Valid(data) {
			t.Fatalf("accepted a file encoding/json refuses: %q", data)
		}
		raw, err := json.Marshal(m.Raw)
		if err != nil {
			t.Fatal(err)
		}
		again, msg := parseMemory(rel, raw)
		if again == nil || again.PeakGPUMemoryMiB != m.PeakGPUMemoryMiB || again.N != m.N || !reflect.DeepEqual(again.Raw, m.Raw) {
			t.Fatalf("kept object %s reads back as %+v, %q", raw, again, msg)
		}
		if _, err := strictjson.ParseObject(data); err != nil {
			t.Fatalf("accepted what strictjson refuses: %v", err)
		}
	})
}
