package main

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// fakeRun is what -short measures on a healthy build (timings of a run on
// the 2-core VM), with the reader of one layout slowed as given.
func fakeRun(slowLayout string, slow float64, outRSSMiB int64) []result {
	return fakeRunOut(slowLayout, slow, "", 1.2, outRSSMiB)
}

// fakeRunOut is fakeRun with --out taking outRatio times --json on the
// layout outLayout (1.2 on the others).
func fakeRunOut(slowLayout string, slow float64, outLayout string, outRatio float64, outRSSMiB int64) []result {
	ms := func(f float64) time.Duration { return time.Duration(f * float64(time.Millisecond)) }
	var rs []result
	for _, l := range layouts {
		sum := 2.5 * 40.0
		if l.name == slowLayout {
			sum *= slow
		}
		out := 1.2
		if l.name == outLayout {
			out = outRatio
		}
		rs = append(rs,
			result{tree: l.name, what: "--json", layout: true, cat: ms(40), sum: ms(sum), cpu: ms(sum), catCPU: ms(35), rss: 26 << 10},
			result{tree: l.name, what: "--out", layout: true, cat: ms(40), sum: ms(sum * out), cpu: ms(sum * out), catCPU: ms(35), rss: 30 << 10})
	}
	return append(rs,
		result{tree: "2000 legs × 60 samples", what: "--json", cat: ms(500), sum: ms(900), rss: 40 << 10},
		result{tree: "2000 legs × 60 samples", what: "--out", cat: ms(500), sum: ms(1900), rss: outRSSMiB << 10})
}

func TestGuardPassesAHealthyRun(t *testing.T) {
	if bad := shortBounds.check(fakeRun("", 1, 55)); len(bad) > 0 {
		t.Fatalf("a healthy run failed the guard: %q", bad)
	}
}

// TestGuardFailsASlowedReader: the sampler's own layout's reader slowed
// to 7× cat fails the guard, naming the layout, its ratio and the bound;
// so does a reader only just past the bound. Another layout is held to
// the sampler's own by CPU (TestGuardFailsALayoutSlowerThanTheSamplers),
// not by its wall time: the changing key order at 4.01× cat, 1.6× the
// sampler's CPU, passes.
func TestGuardFailsASlowedReader(t *testing.T) {
	own := layouts[0].name
	for _, slow := range []float64{7.0 / 2.5, 4.01 / 2.5} {
		bad := shortBounds.check(fakeRun(own, slow, 55))
		if len(bad) == 0 {
			t.Fatalf("×%.2f: want a failure, got none", slow)
		}
		want, found := own+": --json took", false
		for _, msg := range bad {
			found = found || strings.HasPrefix(msg, want) && strings.HasSuffix(msg, "the bound is 4.00×")
		}
		if !found {
			t.Errorf("×%.2f: messages %q, want one to begin %q and name the bound 4.00×", slow, bad, want)
		}
	}
	// At the bound exactly is within it.
	if bad := shortBounds.check(fakeRun(own, 4.0/2.5, 55)); len(bad) > 0 {
		t.Errorf("the sampler's layout at exactly the bound failed: %q", bad)
	}
	if bad := shortBounds.check(fakeRun("key order changing on every line", 4.01/2.5, 55)); len(bad) > 0 {
		t.Errorf("another layout past 4× cat but within 2× the sampler's CPU failed: %q", bad)
	}
}

// TestGuardFailsMemoryGrowth: --out past the RSS bound fails the guard,
// naming the tree, the command, its peak and the bound.
func TestGuardFailsMemoryGrowth(t *testing.T) {
	bad := shortBounds.check(fakeRun("", 1, 81))
	want := []string{"2000 legs × 60 samples: --out peaked at 81.0 MiB RSS; the bound is 80 MiB"}
	if strings.Join(bad, "\n") != strings.Join(want, "\n") {
		t.Fatalf("got %q, want %q", bad, want)
	}
	if bad := shortBounds.check(fakeRun("", 1, 80)); len(bad) > 0 {
		t.Errorf("a run at exactly the RSS bound failed: %q", bad)
	}
}

// TestQuickLayoutIsAppendLayout: the fast rewrite of a generator's line is
// byte for byte strictjson's, in every layout.
func TestQuickLayoutIsAppendLayout(t *testing.T) {
	line := []byte(`{"t":"2026-08-12T10:03:00.472Z","boot_id":"13dc5579-455c-45c8-8e4d-d09c457fa826","gpu_index":0,"gpu_uuid":"GPU-5f3c","gpu_name":"NVIDIA GB10","driver_version":"580.159.03","sm_clock_mhz":2480,"clocks_max_sm_mhz":3003,"clocks_applications_graphics_mhz":null,"throttle_reasons_active":"0x0000000000000000","persistence_mode":"Enabled","pstate":"P0","utilization_gpu_pct":96,"temperature_gpu_c":51.5,"power_draw_w":37.79}`)
	v, err := strictjson.ParseObject(line)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	n := 0
	for _, l := range layouts {
		if l.layout == nil {
			continue
		}
		for range 5 {
			lay := l.layout(rng)
			got, ok := quickLayout(line, lay)
			if want := strictjson.AppendLayout(nil, v, lay); !ok || !bytes.Equal(got, want) {
				t.Errorf("%s (ok %v):\n got %s\nwant %s", l.name, ok, got, want)
			}
			n++
		}
	}
	if n < 15 {
		t.Fatalf("%d layouts compared", n)
	}
	if _, ok := quickLayout([]byte(`{"a":{"b":1}}`), strictjson.Layout{}); ok {
		t.Error("a nested object was rewritten the quick way")
	}
}

// TestGuardFailsASlowOut: --out past its bound against --json on one
// layout fails the guard, naming the layout, both times, the ratio and the
// bound; at the bound exactly it passes; the memory tree, not a layout,
// is not bounded so.
func TestGuardFailsASlowOut(t *testing.T) {
	b := shortBounds.MaxOutRatio
	if b <= 1 {
		t.Fatalf("-short's --out bound is %v", b)
	}
	// 2.01: the bound is 2×, 19% above the highest measured (1.68×).
	for _, over := range []float64{b + 0.01, 2.01, 2 * b} {
		bad := shortBounds.check(fakeRunOut("", 1, "CRLF line ends", over, 55))
		if len(bad) != 1 {
			t.Fatalf("--out at %.2f× --json: want one failure, got %q", over, bad)
		}
		want := fmt.Sprintf("CRLF line ends: --out used %.3f s of CPU, %.2f× --json's 0.100 s; the bound is %.2f×", 0.1*over, over, b)
		if bad[0] != want {
			t.Errorf("got %q, want %q", bad[0], want)
		}
	}
	if bad := shortBounds.check(fakeRunOut("", 1, "CRLF line ends", b, 55)); len(bad) > 0 {
		t.Errorf("--out at exactly the bound failed: %q", bad)
	}
	rs := fakeRun("", 1, 55)
	rs[len(rs)-1].sum = 10 * rs[len(rs)-2].sum
	if bad := shortBounds.check(rs); len(bad) > 0 {
		t.Errorf("the memory tree's --out was bounded against its --json: %q", bad)
	}
}

// TestGuardFailsALayoutSlowerThanTheSamplers: a layout whose --json uses
// more CPU than the bound times the sampler's own layout's fails the
// guard, whatever its wall time against cat, naming the layout, both CPU
// times, the ratio and the bound; at the bound exactly it passes.
func TestGuardFailsALayoutSlowerThanTheSamplers(t *testing.T) {
	b := shortBounds.MaxLayoutRatio
	if b <= 1 {
		t.Fatalf("-short's layout bound is %v", b)
	}
	// 2.01: the bound is 2×, 18% above the highest measured (1.70×).
	for _, over := range []float64{b + 0.01, 2.01, 3} {
		rs := fakeRun("", 1, 55)
		rs[8].cpu = time.Duration(over * float64(rs[0].cpu)) // the changing key order's --json
		bad := shortBounds.check(rs)
		want := fmt.Sprintf("key order changing on every line: --json used %.3f s of CPU, %.2f× the sampler's own layout's 0.100 s; the bound is %.2f×",
			rs[8].cpu.Seconds(), over, b)
		if len(bad) != 1 || bad[0] != want {
			t.Errorf("×%.2f: got %q, want %q", over, bad, want)
		}
	}
	rs := fakeRun("", 1, 55)
	rs[8].cpu = time.Duration(b * float64(rs[0].cpu))
	if bad := shortBounds.check(rs); len(bad) > 0 {
		t.Errorf("a layout at exactly the bound failed: %q", bad)
	}
}
