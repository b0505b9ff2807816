package benchfmt

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"
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
		bf := Parse(fuzzRel, data)
		points, invalid, failed := bf.Points, bf.Invalid, bf.Failed
		switch {
		case bf.NotResult != "" && len(points)+len(invalid)+len(failed) > 0:
			t.Fatalf("a warning and points or reasons for %q", data)
		case bf.NotResult == "" && len(points)+len(invalid) == 0:
			t.Fatalf("no point, no bench.invalid and no warning for %q", data)
		}
		for _, m := range append(append([]string{bf.NotResult}, invalid...), failed...) {
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
			again := Parse(fuzzRel, raw)
			if len(again.Invalid) > 0 || len(again.Points) != 1 || again.Points[0].BenchPoint != p.BenchPoint {
				t.Fatalf("kept object %s reads back as %+v, %q; want %+v", raw, again.Points, again.Invalid, p.BenchPoint)
			}
		}
		if got, want := fmt.Sprintf("%+v", Read(fuzzRel, iotest.OneByteReader(bytes.NewReader(data)))), fmt.Sprintf("%+v", bf); got != want {
			t.Fatalf("read a byte at a time: %s\nwhole: %s", got, want)
		}
		if len(invalid) == 0 && bf.NotResult == "" && !jsonLines(data) && !bytes.Contains(data, []byte("NaN")) && !bytes.Contains(data, []byte("Infinity")) {
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
