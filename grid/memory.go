package grid

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/clockgate/clockgate/atomicfile"
)

// memRecorder samples, for the memory record (SPEC §2.2), the GPU memory
// used on the leg's GPUs and the host RSS of the leg's processes, at the
// sampler's interval, while the bench points run.
type memRecorder struct {
	mu       sync.Mutex
	peakGPU  float64
	peakRSS  float64
	n        int
	err      error
	stopc    chan struct{}
	done     chan struct{}
	interval time.Duration
}

// memRecord is the memory record as written.
type memRecord struct {
	PeakGPUMemoryMiB float64 `json:"peak_gpu_memory_mib"`
	PeakHostRSSMiB   float64 `json:"peak_host_rss_mib"`
	N                int     `json:"n"`
}

func (g *grid) startMemory(srv *server) *memRecorder {
	m := &memRecorder{stopc: make(chan struct{}), done: make(chan struct{}), interval: g.p.Interval}
	go func() {
		defer close(m.done)
		t := time.NewTicker(m.interval)
		defer t.Stop()
		for {
			m.take(g, srv)
			select {
			case <-m.stopc:
				return
			case <-t.C:
			}
		}
	}()
	return m
}

// take is one reading: the sum over the leg's GPUs of memory.used, and
// the sum of VmRSS over the leg's processes.
func (m *memRecorder) take(g *grid, srv *server) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	gpu, err := g.gpuMemoryMiB(ctx)
	if err != nil {
		m.mu.Lock()
		if m.err == nil {
			m.err = err
		}
		m.mu.Unlock()
		return
	}
	rss := 0.0
	for _, p := range append(g.snapshot(srv), srv.pid) {
		rss += vmRSSMiB(p)
	}
	m.mu.Lock()
	m.n++
	m.peakGPU = max(m.peakGPU, gpu)
	m.peakRSS = max(m.peakRSS, rss)
	m.mu.Unlock()
}

// gpuMemoryMiB asks nvidia-smi for memory.used on the grid's GPUs.
func (g *grid) gpuMemoryMiB(ctx context.Context) (float64, error) {
	ids := make([]string, len(g.indices))
	for i, x := range g.indices {
		ids[i] = strconv.Itoa(x)
	}
	out, err := exec.CommandContext(ctx, "nvidia-smi", "--query-gpu=memory.used", "--format=csv,noheader,nounits", "-i", strings.Join(ids, ",")).Output()
	if err != nil {
		return 0, fmt.Errorf("nvidia-smi --query-gpu=memory.used: %v", err)
	}
	sum := 0.0
	lines := strings.Fields(strings.TrimSpace(string(out)))
	if len(lines) != len(ids) {
		return 0, fmt.Errorf("nvidia-smi --query-gpu=memory.used gave %d values for %d GPUs: %q", len(lines), len(ids), out)
	}
	for _, l := range lines {
		v, err := strconv.ParseFloat(strings.TrimSpace(l), 64)
		if err != nil || v < 0 {
			return 0, fmt.Errorf("nvidia-smi --query-gpu=memory.used: %q is not a number of MiB", l)
		}
		sum += v
	}
	return sum, nil
}

// vmRSSMiB is a process's resident set in MiB, 0 when it is gone.
func vmRSSMiB(pid int) float64 {
	data, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "status"))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(data), "\n") {
		if rest, ok := strings.CutPrefix(line, "VmRSS:"); ok {
			f := strings.Fields(rest)
			if len(f) >= 1 {
				kb, err := strconv.ParseFloat(f[0], 64)
				if err == nil {
					return kb / 1024
				}
			}
		}
	}
	return 0
}

func (m *memRecorder) stop() *memRecorder {
	close(m.stopc)
	<-m.done
	return m
}

// write writes the memory record at path, never replacing a file. A
// recording without a reading, or with a refused one, writes none: the leg
// is then memory.missing, never a default.
func (m *memRecorder) write(path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return fmt.Errorf("GPU memory could not be read: %v; no memory record written", m.err)
	}
	if m.n == 0 || !(m.peakGPU > 0) {
		return fmt.Errorf("no reading of GPU memory above 0 MiB in %d readings; no memory record written", m.n)
	}
	data, err := json.Marshal(memRecord{PeakGPUMemoryMiB: m.peakGPU, PeakHostRSSMiB: round1(m.peakRSS), N: m.n})
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteNew(path, append(data, '\n'), 0o644)
}

func round1(x float64) float64 { return float64(int64(x*10+0.5)) / 10 }
