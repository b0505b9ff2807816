package summarize

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/clockgate/clockgate/benchfmt"
	"github.com/clockgate/clockgate/strictjson"
)

// Memory is a leg's memory record.
type Memory struct {
	// PeakGPUMemoryMiB is the peak GPU memory over the leg, in MiB.
	PeakGPUMemoryMiB float64
	// N is the memory sampler's sample count.
	N int
	// Raw is the record with every key as written.
	Raw map[string]any
}

// Hints that end a memory record's message: what to do.
const (
	// hintMemSyntax ends a memory record that is not strict JSON.
	hintMemSyntax = "restore the record from where the memory sampler wrote it, or, if it reads the same there, make the sampler write strict JSON and re-measure the leg"
	// hintMemValue ends a memory record whose keys are wrong.
	hintMemValue = "fix the memory sampler's output and re-measure the leg"
	// hintMemUnread ends a memory record that cannot be opened or read.
	hintMemUnread = "put the memory sampler's record there as a regular file clockgate can read (restore it from where the sampler wrote it), or re-measure the leg"
	// hintMemMissing ends memory.missing.
	hintMemMissing = "run the memory sampler with the leg and put its record there, or re-measure the leg"
)

// lineOf returns the 1-based line of byte offset off in data.
func lineOf(data []byte, off int) int {
	if off > len(data) {
		off = len(data)
	}
	return 1 + bytes.Count(data[:off], []byte("\n"))
}

// parseMemory reads the memory record at rel. The message, when not empty,
// names the file, the key, what was expected and what was found, and ends
// with what to do.
func parseMemory(rel string, data []byte) (*Memory, string) {
	v, err := strictjson.ParseObject(data)
	if err != nil {
		var se *strictjson.Error
		if errors.As(err, &se) {
			return nil, fmt.Sprintf("%s:%d: %s; %s", rel, lineOf(data, se.Offset), se.Msg, hintMemSyntax)
		}
		return nil, fmt.Sprintf("%s: %v; %s", rel, err, hintMemSyntax)
	}
	var bad []string
	m := &Memory{}
	if f, ok := v.Fields["peak_gpu_memory_mib"]; !ok {
		bad = append(bad, "peak_gpu_memory_mib: want a finite number > 0 MiB, found nothing (key missing)")
	} else if f.Kind != strictjson.Number || !(f.Num > 0) {
		bad = append(bad, fmt.Sprintf("peak_gpu_memory_mib: want a finite number > 0 MiB, found %s", f.Describe()))
	} else {
		m.PeakGPUMemoryMiB = f.Num
	}
	if f, ok := v.Fields["n"]; !ok {
		bad = append(bad, fmt.Sprintf("n: want %s, found nothing (key missing)", benchfmt.IntWant(1)))
	} else if n, isInt := f.Int(); !isInt || n <= 0 || n > benchfmt.MaxCount {
		bad = append(bad, fmt.Sprintf("n: want %s, found %s", benchfmt.IntWant(1), f.Describe()))
	} else {
		m.N = int(n)
	}
	// peak_host_rss_mib is reported, never a ratio's quantity: null (or
	// absent) is "not recorded" (an imported leg, a leg naming no process
	// of its own), never a value.
	if f, ok := v.Fields["peak_host_rss_mib"]; ok && f.Kind != strictjson.Null && (f.Kind != strictjson.Number || f.Num < 0) {
		bad = append(bad, fmt.Sprintf("peak_host_rss_mib: want a finite number ≥ 0 MiB, or null where not recorded, found %s", f.Describe()))
	}
	if len(bad) > 0 {
		return nil, fmt.Sprintf("%s: %s; %s", rel, strings.Join(bad, "; "), hintMemValue)
	}
	m.Raw = rawObject(v)
	return m, ""
}

// rawObject converts a strict JSON object to plain values, numbers kept as
// written.
func rawObject(v *strictjson.Value) map[string]any {
	return raw(v).(map[string]any)
}

func raw(v *strictjson.Value) any {
	switch v.Kind {
	case strictjson.Null:
		return nil
	case strictjson.Bool:
		return v.Bool
	case strictjson.Number:
		return json.Number(v.Raw)
	case strictjson.String:
		return v.Str
	case strictjson.Array:
		out := make([]any, len(v.Elems))
		for i, e := range v.Elems {
			out[i] = raw(e)
		}
		return out
	}
	out := make(map[string]any, len(v.Fields))
	for k, f := range v.Fields {
		out[k] = raw(f)
	}
	return out
}
