package summarize

import (
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

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
