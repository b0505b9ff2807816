package main

import (
	"bytes"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/clockgate/clockgate/clocks"
)

// The real captures under testdata/smi-real convert, with the stand-ins
// their SOURCE.md names, to exactly the committed r1.samples.jsonl, and
// the facts SOURCE.md states are what the converter measures.
func TestConvertRealCaptures(t *testing.T) {
	h100 := func(boot string) Options {
		return Options{BootID: boot, GPU: -1, TZ: "-07:00", GPUName: "NVIDIA H100 80GB HBM3", Driver: "550.163.01",
			Persistence: "Enabled", PState: "P0", ClocksMaxSM: 1980, AppsClock: "null", Throttle: "0x0000000000000000"}
	}
	a100 := h100("standin-boot-a100-validate-tp1-s20260712")
	a100.GPUName, a100.ClocksMaxSM = "NVIDIA A100-SXM4-80GB", 1410
	type fact struct {
		rows, busy, smMin, smMax int
		smMedian, spread         float64
		maxPower, medianPower    float64
		tempMin, tempMax         float64
		limitW                   float64 // NaN: none recorded
	}
	cases := []struct {
		dir      string
		o        Options
		rows     int
		recorded bool // reason bits and event counters are in the capture
		facts    []fact
	}{
		{"h100-vllm-qwen3-8b-tp1", h100("standin-boot-h100-validate-tp1-s20260712"), 265, false,
			[]fact{{265, 205, 1530, 1830, 1830, 16.39, 464.71, 415.24, 51, 63, math.NaN()}}},
		{"a100-vllm-qwen3-8b-tp1", a100, 378, false,
			[]fact{{378, 328, 1395, 1410, 1410, 1.06, 520.88, 295.04, 38, 60, math.NaN()}}},
		{"h100-vllm-qwen3-30b-tp2-window", h100("standin-boot-h100-validate-tp2-s20260720"), 158, false,
			[]fact{{79, 74, 1830, 1830, 1830, 0, 381.84, 323.25, 45, 50, math.NaN()}, {79, 74, 1830, 1830, 1830, 0, 386.23, 323.23, 39, 45, math.NaN()}}},
		{"h100-590-query-gpu-idle-load", Options{BootID: "standin-boot-h100-590-capture", GPU: -1, TZ: "UTC"}, 2, true,
			[]fact{{2, 1, 1980, 1980, 1980, 0, 631.95, 631.95, 59, 59, 700}}},
	}
	near := func(a, b float64) bool { return math.Abs(a-b) < 0.005 }
	for _, c := range cases {
		t.Run(c.dir, func(t *testing.T) {
			dir := filepath.Join("..", "..", "testdata", "smi-real", c.dir)
			f, err := os.Open(filepath.Join(dir, "capture.csv"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			res, err := Convert(f, "capture.csv", c.o)
			if err != nil {
				t.Fatalf("Convert: %v", err)
			}
			want, err := os.ReadFile(filepath.Join(dir, "r1.samples.jsonl"))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(res.Stream, want) {
				t.Errorf("conversion differs from the committed r1.samples.jsonl")
			}
			fold, err := clocks.FoldStream(bytes.NewReader(want))
			if err != nil {
				t.Fatalf("the stream reader refuses r1.samples.jsonl: %v", err)
			}
			if len(fold.GPUs) != len(c.facts) {
				t.Fatalf("the stream reader folds %d GPUs, want %d", len(fold.GPUs), len(c.facts))
			}
			if res.Rows != c.rows || len(res.GPUs) != len(c.facts) {
				t.Fatalf("rows %d, GPUs %d; want %d, %d", res.Rows, len(res.GPUs), c.rows, len(c.facts))
			}
			for i, w := range c.facts {
				g := res.GPUs[i]
				if g.Rows != w.rows || g.Busy != w.busy || g.SMMin != w.smMin || g.SMMax != w.smMax ||
					!near(g.SMMedian, w.smMedian) || !near(g.SpreadPct, w.spread) {
					t.Errorf("gpu %d: rows %d busy %d SM %d/%v/%d spread %.2f%%; want %+v",
						g.Index, g.Rows, g.Busy, g.SMMin, g.SMMedian, g.SMMax, g.SpreadPct, w)
				}
				if !near(g.MaxPowerW, w.maxPower) || !near(g.MedianBusyPowerW, w.medianPower) ||
					g.TempMin != w.tempMin || g.TempMax != w.tempMax {
					t.Errorf("gpu %d: power max %.2f median %.2f temp %v–%v; want %+v",
						g.Index, g.MaxPowerW, g.MedianBusyPowerW, g.TempMin, g.TempMax, w)
				}
				if g.ReasonsKnown != c.recorded || g.Counters != c.recorded {
					t.Errorf("gpu %d: reasons %v counters %v; want %v", g.Index, g.ReasonsKnown, g.Counters, c.recorded)
				}
				if math.IsNaN(w.limitW) != math.IsNaN(g.LimitW) || !math.IsNaN(w.limitW) && !near(g.LimitW, w.limitW) {
					t.Errorf("gpu %d: limit %v; want %v", g.Index, g.LimitW, w.limitW)
				}
			}
		})
	}
}
