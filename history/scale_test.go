package history

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/history/histgen"
)

// TestScale1000Grids adds 1,000 generated grids of clean-grid's size
// (two models, two engines, four points: 32 series) to a SQLite history
// from their summary.json and all-runs.json files, as history add reads
// them, then reports every output: within 30 s, the Go heap's peak under
// 256 MiB. CLOCKGATE_BIG=1 (CI) runs it; -short skips it.
func TestScale1000Grids(t *testing.T) {
	if testing.Short() || os.Getenv("CLOCKGATE_BIG") == "" {
		t.Skip("CLOCKGATE_BIG unset: the 1,000-grid scale check is skipped")
	}
	const grids = 1000
	tmpl := cleanGrid(t)
	sc := histgen.Scenario{Grids: grids, Start: start, Seed: 9, NoiseTP: 0.004, NoiseClock: 0.001, BaseClockMHz: 1980,
		Steps: []histgen.Step{{At: 400, Throughput: 0.95, Clock: 0.94}, {At: 700, Arms: fastengine(t), Throughput: 0.95, Clock: 1}}}
	dir := t.TempDir()
	var dirs []string
	for i, g := range tmpl.Grids(sc) {
		sum, all, err := tmpl.Documents(g)
		if err != nil {
			t.Fatal(err)
		}
		d := filepath.Join(dir, fmt.Sprintf("g%04d", i))
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, SummaryFile), sum, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(d, AllRunsFile), all, 0o644); err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
	}
	var peak uint64
	done := make(chan struct{})
	go func() {
		var ms runtime.MemStats
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				runtime.ReadMemStats(&ms)
				if ms.HeapInuse+ms.StackInuse > peak {
					peak = ms.HeapInuse + ms.StackInuse
				}
			}
		}
	}()
	began := time.Now()
	s, err := Open(context.Background(), filepath.Join(dir, "h.sqlite"))
	if err != nil {
		t.Fatal(err)
	}
	for _, d := range dirs {
		g, err := Load(d)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Add(context.Background(), g); err != nil {
			t.Fatal(err)
		}
	}
	added := time.Since(began)
	all, err := s.Grids(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	r := Build(all, DefaultDetection)
	for _, w := range []func(*bytes.Buffer) error{
		func(b *bytes.Buffer) error { return r.Markdown(b) }, func(b *bytes.Buffer) error { return r.HTML(b) },
		func(b *bytes.Buffer) error { return r.CSV(b) }, func(b *bytes.Buffer) error { return r.JSON(b) }} {
		var b bytes.Buffer
		if err := w(&b); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	total := time.Since(began)
	close(done)
	hwm := peakRSS()
	t.Logf("1,000 grids: added in %v, added and reported in %v; peak Go heap and stacks %d MiB, peak resident %d MiB (the whole test process)", added.Round(time.Millisecond), total.Round(time.Millisecond), peak>>20, hwm>>20)
	if hwm > 256<<20 {
		t.Errorf("peak resident memory %d MiB, over 256 MiB", hwm>>20)
	}
	if total > 30*time.Second {
		t.Errorf("added and reported in %v, over 30 s", total)
	}
	if peak > 256<<20 {
		t.Errorf("peak memory %d MiB, over 256 MiB", peak>>20)
	}
	changed := 0
	for _, s := range r.Series {
		changed += len(s.Changes)
	}
	if changed == 0 {
		t.Error("no change found in the scale history's two steps")
	}
}

// peakRSS is the process's peak resident set (VmHWM), or 0 where
// /proc does not say.
func peakRSS() uint64 {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if f := strings.Fields(line); len(f) == 3 && f[0] == "VmHWM:" {
			kb, _ := strconv.ParseUint(f[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}
