package multileg

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/atomicfile"
	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/sampler"
	"github.com/clockgate/clockgate/strictjson"
)

// HowToStop says how to stop a leg's samplers under Slurm, for every
// message about a host without its record (SPEC §12.3).
const HowToStop = clocks.HowToStopSamplers

// ErrMissing says a host of leg.json wrote no record.
var ErrMissing = errors.New("a host wrote no record")

// HostMemory is one host's part of the leg's memory record.
type HostMemory struct {
	Host             string
	PeakGPUMemoryMiB float64
	PeakHostRSSMiB   *float64
	N                int
}

// Memory is the leg's memory record: the sum over its hosts of their
// peaks (each host's own peak: an upper bound of any moment's sum), and
// n, the fewest readings of any host.
type Memory struct {
	PeakGPUMemoryMiB float64
	PeakHostRSSMiB   *float64
	N                int
	Hosts            []HostMemory
}

// JSON is the record, keys in SPEC §2.2's order and then hosts.
func (m *Memory) JSON() []byte {
	b := []byte("{\"peak_gpu_memory_mib\": ")
	b = strconv.AppendFloat(b, m.PeakGPUMemoryMiB, 'f', -1, 64)
	if m.PeakHostRSSMiB != nil {
		b = append(b, ", \"peak_host_rss_mib\": "...)
		b = strconv.AppendFloat(b, *m.PeakHostRSSMiB, 'f', -1, 64)
	}
	b = append(b, ", \"n\": "...)
	b = strconv.AppendInt(b, int64(m.N), 10)
	b = append(b, ", \"hosts\": ["...)
	for i, h := range m.Hosts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n  {\"host\": "...)
		b = strictjson.AppendString(b, h.Host)
		b = append(b, ", \"peak_gpu_memory_mib\": "...)
		b = strconv.AppendFloat(b, h.PeakGPUMemoryMiB, 'f', -1, 64)
		if h.PeakHostRSSMiB != nil {
			b = append(b, ", \"peak_host_rss_mib\": "...)
			b = strconv.AppendFloat(b, *h.PeakHostRSSMiB, 'f', -1, 64)
		}
		b = append(b, ", \"n\": "...)
		b = strconv.AppendInt(b, int64(h.N), 10)
		b = append(b, '}')
	}
	return append(b, "]}\n"...)
}

// readHostMemory reads a host's memory record as its sampler writes it.
func readHostMemory(path, host string) (HostMemory, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return HostMemory{}, err
	}
	v, err := strictjson.ParseObject(data)
	if err != nil {
		return HostMemory{}, fmt.Errorf("%s: %v", path, err)
	}
	h := HostMemory{Host: host}
	f, ok := v.Fields["peak_gpu_memory_mib"]
	if !ok || f.Kind != strictjson.Number || !(f.Num > 0) {
		return HostMemory{}, fmt.Errorf("%s: peak_gpu_memory_mib: want a number > 0 MiB", path)
	}
	h.PeakGPUMemoryMiB = f.Num
	n, isInt := int64(0), false
	if f, ok := v.Fields["n"]; ok {
		n, isInt = f.Int()
	}
	if !isInt || n <= 0 {
		return HostMemory{}, fmt.Errorf("%s: n: want an integer > 0", path)
	}
	h.N = int(n)
	// null (or absent) is "not recorded": the sampler writes it so where
	// the leg named no process of its own (SPEC §12.1).
	if f, ok := v.Fields["peak_host_rss_mib"]; ok && f.Kind != strictjson.Null {
		if f.Kind != strictjson.Number || f.Num < 0 {
			return HostMemory{}, fmt.Errorf("%s: peak_host_rss_mib: want a number ≥ 0 MiB, or null where not recorded", path)
		}
		rss := f.Num
		h.PeakHostRSSMiB = &rss
	}
	return h, nil
}

// Close checks that every host of DIR's leg.json wrote its record, and
// writes the leg's memory record to out (sampler.MemoryPath of DIR where
// out is ""). A host without its record, or without its memory record,
// is named; nothing is written then.
func Close(dir, out string) (*Memory, string, error) {
	m, err := Load(dir)
	if err != nil {
		return nil, "", err
	}
	if out == "" {
		var ok bool
		if out, ok = sampler.MemoryPath(dir); !ok {
			return nil, "", fmt.Errorf("%s is not TREE/clocks/<model>/<engine>/r<N>: give --memory-out FILE for the leg's memory record", dir)
		}
	}
	var missing, noMemory []string
	mem := &Memory{}
	allRSS := true
	var rss float64
	for _, h := range m.Hosts {
		prefix := Prefix(dir, h.Host)
		if _, err := os.Stat(sampler.RecordPath(prefix)); err != nil {
			why := "no sampler started"
			if _, err := os.Stat(sampler.StreamPath(prefix)); err == nil {
				why = "its sampler is still running, or was killed"
			}
			missing = append(missing, fmt.Sprintf("%s (%s: %s)", h.Host, rel(dir, sampler.RecordPath(prefix)), why))
			continue
		}
		hm, err := readHostMemory(MemoryPath(dir, h.Host), h.Host)
		if err != nil {
			noMemory = append(noMemory, fmt.Sprintf("%s (%v)", h.Host, err))
			continue
		}
		mem.Hosts = append(mem.Hosts, hm)
		mem.PeakGPUMemoryMiB += hm.PeakGPUMemoryMiB
		if hm.PeakHostRSSMiB == nil {
			allRSS = false
		} else {
			rss += *hm.PeakHostRSSMiB
		}
		if mem.N == 0 || hm.N < mem.N {
			mem.N = hm.N
		}
	}
	if len(missing) > 0 {
		return nil, "", fmt.Errorf("%w: %d of %d hosts have no record: %s; %s, and measure the leg again", ErrMissing, len(missing), len(m.Hosts), strings.Join(missing, ", "), HowToStop)
	}
	if len(noMemory) > 0 {
		return nil, "", fmt.Errorf("no memory record for the leg: %s; the leg will be memory.missing", strings.Join(noMemory, ", "))
	}
	if allRSS {
		mem.PeakHostRSSMiB = &rss
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return nil, "", err
	}
	if err := atomicfile.WriteNew(out, mem.JSON(), 0o644); err != nil {
		return nil, "", fmt.Errorf("%s: %w (leg close writes it once)", out, err)
	}
	return mem, out, nil
}

// rel is path relative to dir where it can be.
func rel(dir, path string) string {
	if r, err := filepath.Rel(dir, path); err == nil {
		return r
	}
	return path
}
