package summarize_test

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/summarize"
)

// verdicts is everything a summary decides: the gate, each ratio's
// verdict and reasons, each leg's reasons, in order, as text.
func verdicts(s *summarize.Summary) string {
	var b strings.Builder
	fmt.Fprintf(&b, "gate_pass %v\n", s.GatePass)
	for _, c := range s.Comparisons {
		for _, r := range []struct {
			fam     string
			ok      bool
			reasons []clocks.Reason
		}{{"THROUGHPUT", c.Throughput.BindingEligible, c.Throughput.Reasons}, {"MEMORY", c.Memory.BindingEligible, c.Memory.Reasons}} {
			fmt.Fprintf(&b, "%s %s/%s %s binding %v established %v\n", c.Model, c.Ours, c.Baseline, r.fam, r.ok, c.Throughput.Clock.Established)
			for _, rs := range r.reasons {
				fmt.Fprintf(&b, "  %s\n", rs.Text())
			}
		}
	}
	for _, l := range s.Legs {
		for _, r := range l.Reasons {
			fmt.Fprintf(&b, "%s %s %s: %s\n", l.Model, l.Engine, l.Name(), r.Text())
		}
	}
	return b.String()
}

// rewritePower rewrites every clock stream of the tree at root, setting
// each sample's power_draw_w to power(engine, sample index, old value)
// (nil: not sampled). Records carry no power, so each stays the one its
// stream recomputes to.
func rewritePower(t *testing.T, root string, power func(engine string, i int, old *float64) *float64) {
	t.Helper()
	err := filepath.WalkDir(filepath.Join(root, "clocks"), func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, ".samples.jsonl") {
			return err
		}
		engine := filepath.Base(filepath.Dir(p))
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rd := clocks.NewReader(bytes.NewReader(data), p)
		var out []byte
		for i := 0; rd.Scan(); i++ {
			s := rd.Row().Sample()
			s.PowerDrawW = power(engine, i, s.PowerDrawW)
			out = append(s.AppendJSON(out), '\n')
		}
		if err := rd.Err(); err != nil {
			return err
		}
		return os.WriteFile(p, out, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestPowerIsNeverAGateTerm changes the power draw of every sample of one
// arm, of both, removes it, or scatters it wildly: each arm's reported
// median power follows, and not one verdict, reason or leg reason moves,
// in a tree that is ESTABLISHED (power, the two arms in different power
// states) and in one that is not (tp4-offset, several GPUs per leg).
func TestPowerIsNeverAGateTerm(t *testing.T) {
	f := func(x float64) *float64 { return &x }
	mutations := []struct {
		name string
		// power is the new power of a sample of engine; ours and base the
		// median busy power each arm must then report (nil: none).
		power      func(engine string, i int, old *float64) *float64
		ours, base *float64
	}{
		{"baseline arm at 1000 W", func(e string, _ int, old *float64) *float64 {
			if e == "vllm" {
				return f(1000)
			}
			return old
		}, nil, f(1000)},
		{"ours arm not sampled", func(e string, _ int, old *float64) *float64 {
			if e == "vllm" {
				return old
			}
			return nil
		}, nil, nil},
		{"neither arm sampled", func(string, int, *float64) *float64 { return nil }, nil, nil},
		{"both arms at 0 W", func(string, int, *float64) *float64 { return f(0) }, f(0), f(0)},
		{"ours arm at 1000 W, the baseline at 0.5 W", func(e string, _ int, _ *float64) *float64 {
			if e == "vllm" {
				return f(0.5)
			}
			return f(1000)
		}, f(1000), f(0.5)},
		{"scattered from 0 to 1500 W", func(_ string, i int, _ *float64) *float64 { return f(float64(i * 7919 % 1501)) }, nil, nil},
	}
	for _, tree := range []string{"power", "tp4-offset"} {
		orig, err := summarize.Summarize(filepath.Join(treesDir, tree), summarize.Options{Baseline: "vllm"})
		if err != nil {
			t.Fatal(err)
		}
		want := verdicts(orig)
		ob := orig.Comparisons[0].Throughput.Clock
		if ob.Ours.PowerW == nil || ob.Baseline.PowerW == nil {
			t.Fatalf("%s: both arms must have sampled power for the test to mean anything", tree)
		}
		for _, m := range mutations {
			t.Run(tree+"/"+m.name, func(t *testing.T) {
				root := filepath.Join(t.TempDir(), tree)
				if err := os.CopyFS(root, os.DirFS(filepath.Join(treesDir, tree))); err != nil {
					t.Fatal(err)
				}
				rewritePower(t, root, m.power)
				s, err := summarize.Summarize(root, summarize.Options{Baseline: "vllm"})
				if err != nil {
					t.Fatal(err)
				}
				b := s.Comparisons[0].Throughput.Clock
				// The rewrite took: the reported power is the new one.
				for _, side := range []struct {
					name      string
					got, want *float64
					was       *float64
				}{{"ours", b.Ours.PowerW, m.ours, ob.Ours.PowerW}, {"baseline", b.Baseline.PowerW, m.base, ob.Baseline.PowerW}} {
					switch {
					case m.name == "scattered from 0 to 1500 W":
						if side.got == nil || *side.got == *side.was {
							t.Errorf("%s power %v; want it moved from %v", side.name, side.got, *side.was)
						}
					case m.name == "ours arm not sampled" && side.name == "baseline":
						if side.got == nil || *side.got != *side.was {
							t.Errorf("baseline power %v; want it unchanged, %v", side.got, *side.was)
						}
					case m.name == "baseline arm at 1000 W" && side.name == "ours":
						if side.got == nil || *side.got != *side.was {
							t.Errorf("ours power %v; want it unchanged, %v", side.got, *side.was)
						}
					case (side.got == nil) != (side.want == nil) || side.got != nil && *side.got != *side.want:
						t.Errorf("%s power %v, want %v", side.name, side.got, side.want)
					}
				}
				if got := verdicts(s); got != want {
					t.Errorf("changing power changed the verdicts:\n--- before\n%s--- after\n%s", want, got)
				}
			})
		}
	}
}
