package grid

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

func mustPlan(t *testing.T, text string) *Plan {
	t.Helper()
	p, err := Parse("plan.toml", []byte(text))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// threeEngines is goodPlan with a third engine and the given order and
// repeats.
func threeEngines(t *testing.T, order string, repeats int) *Plan {
	text := strings.Replace(goodPlan, "[bench]", "[[engine]]\nname = \"trt\"\nserve = [\"trt\"]\nready = { path = \"/health\", timeout = \"1m\" }\n\n[bench]", 1)
	text = strings.Replace(text, `order = "abba"`, fmt.Sprintf("order = %q", order), 1)
	text = strings.Replace(text, "repeats = 6", fmt.Sprintf("repeats = %d", repeats), 1)
	return mustPlan(t, text)
}

func TestOrderABBA(t *testing.T) {
	p := mustPlan(t, goodPlan)
	legs := Order(p, 1)
	if got := OrderString(legs); got != "vllm/r1 sglang/r1 sglang/r2 vllm/r2 vllm/r3 sglang/r3 sglang/r4 vllm/r4 vllm/r5 sglang/r5 sglang/r6 vllm/r6" {
		t.Errorf("order %s", got)
	}
	for _, l := range legs {
		want := "1/inf 8/inf 64/inf"
		if l.Block%2 == 0 {
			want = "64/inf 8/inf 1/inf"
		}
		var got []string
		for _, pt := range l.Points {
			got = append(got, pt.Label())
		}
		if strings.Join(got, " ") != want {
			t.Errorf("leg %s block %d points %v, want %s", l.Name(), l.Block, got, want)
		}
	}
}

// TestABBACancelsLinearDrift: a drift a + b·t over the run order adds the
// same total to each arm, for any a, b and any even number of repeats; and
// each point, run forward on odd blocks and backward on even ones, sits at
// the same mean position within its legs in both arms.
func TestABBACancelsLinearDrift(t *testing.T) {
	for _, reps := range []int{2, 4, 6, 10, 20} {
		p := mustPlan(t, strings.Replace(strings.Replace(goodPlan, "repeats = 6", fmt.Sprintf("repeats = %d", reps), 1), "order", "allow_underpowered = true\norder", 1))
		legs := Order(p, 0)
		for _, drift := range [][2]float64{{0, 1}, {3.5, -0.25}, {-7, 11}} {
			sum := map[string]float64{}
			for i, l := range legs {
				sum[l.Engine] += drift[0] + drift[1]*float64(i)
			}
			if sum["vllm"] != sum["sglang"] {
				t.Errorf("repeats %d drift %v: vllm %v sglang %v", reps, drift, sum["vllm"], sum["sglang"])
			}
		}
		// Position of each point inside the run: t = slot·points + k.
		pos := map[string]float64{}
		for _, l := range legs {
			for k, pt := range l.Points {
				pos[l.Engine+" "+pt.Label()] += float64((l.Slot-1)*len(l.Points) + k)
			}
		}
		for _, pt := range p.Bench.Points {
			if a, b := pos["vllm "+pt.Label()], pos["sglang "+pt.Label()]; a != b {
				t.Errorf("repeats %d point %s: vllm at %v, sglang at %v", reps, pt.Label(), a, b)
			}
		}
	}
}

func TestOrderRunNumbers(t *testing.T) {
	for _, order := range []string{"williams", "random"} {
		p := threeEngines(t, order, 6)
		count := map[string]int{}
		for _, l := range Order(p, 42) {
			count[l.Engine]++
			if l.N != count[l.Engine] {
				t.Errorf("%s: leg %s is the engine's leg %d", order, l.Name(), count[l.Engine])
			}
		}
		for _, e := range p.Engines {
			if count[e.Name] != 6 {
				t.Errorf("%s: %s has %d legs", order, e.Name, count[e.Name])
			}
		}
	}
}

// TestSeedReplays: a seed gives the same order every time; another seed
// gives another.
func TestSeedReplays(t *testing.T) {
	p := threeEngines(t, "random", 8)
	a, b := Order(p, 12345), Order(p, 12345)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("one seed, two orders")
	}
	differs := false
	for s := int64(0); s < 20 && !differs; s++ {
		differs = OrderString(Order(p, s)) != OrderString(a)
	}
	if !differs {
		t.Fatal("twenty seeds, one order: the seed is not used")
	}
}

// TestWilliamsBalance: over a whole design every engine follows every
// other equally often, and runs equally often in each position of a block.
func TestWilliamsBalance(t *testing.T) {
	for n := 2; n <= 7; n++ {
		rows := williams(n)
		follows := map[[2]int]int{}
		place := map[[2]int]int{}
		for _, r := range rows {
			for i := range r {
				place[[2]int{i, r[i]}]++
				if i > 0 {
					follows[[2]int{r[i-1], r[i]}]++
				}
			}
		}
		want := -1
		for a := 0; a < n; a++ {
			for b := 0; b < n; b++ {
				if a == b {
					continue
				}
				if want < 0 {
					want = follows[[2]int{a, b}]
				}
				if follows[[2]int{a, b}] != want || want == 0 {
					t.Errorf("n=%d: %d follows %d %d times, want %d", n, b, a, follows[[2]int{a, b}], want)
				}
			}
			for i := 0; i < n; i++ {
				if place[[2]int{i, a}] != len(rows)/n {
					t.Errorf("n=%d: %d runs in place %d %d times", n, a, i, place[[2]int{i, a}])
				}
			}
		}
	}
	// The grid's order keeps the balance: legs of one block.
	p := threeEngines(t, "williams", 6)
	legs := Order(p, 3)
	follows := map[string]int{}
	for i := 1; i < len(legs); i++ {
		if legs[i].Block == legs[i-1].Block {
			follows[legs[i-1].Engine+">"+legs[i].Engine]++
		}
	}
	if len(follows) != 6 {
		t.Fatalf("pairs %v", follows)
	}
	for k, v := range follows {
		if v != 2 {
			t.Errorf("%s %d times", k, v)
		}
	}
}

func TestWilliamsRefusesPartialDesign(t *testing.T) {
	text := strings.Replace(goodPlan, "[bench]", "[[engine]]\nname = \"trt\"\nserve = [\"trt\"]\nready = { path = \"/health\", timeout = \"1m\" }\n\n[bench]", 1)
	text = strings.Replace(text, `order = "abba"`, `order = "williams"`, 1)
	text = strings.Replace(text, "repeats = 6", "repeats = 4", 1)
	_, err := Parse("plan.toml", []byte(text))
	if err == nil || !strings.HasPrefix(err.Error(), "plan.toml:5:1: repeats 4 is not a multiple of 6") {
		t.Fatal(err)
	}
	_, err = Parse("plan.toml", []byte(strings.Replace(goodPlan, `order = "abba"`, `order = "williams"`, 1)))
	if err == nil || !strings.HasPrefix(err.Error(), "plan.toml:6:1: order williams is for three or more engines") {
		t.Fatal(err)
	}
}

func TestExpand(t *testing.T) {
	p := mustPlan(t, goodPlan)
	l := Order(p, 0)[1]
	v := PointVars(p.Vars(l), p.Bench.Points[1], "/t/bench")
	got := Expand(append([]string{"--port={port}", "{concurrency}/{rate}", "{n}{engine}", "{result_dir}/{result_name}", "{model}"}, "{base_url}"), v)
	want := []string{"--port=8000", "8/inf", "1sglang", "/t/bench/c8-rinf.json", "meta-llama/Llama-3.1-8B-Instruct", "http://127.0.0.1:8000"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%q", got)
	}
	// A value with spaces stays one argument.
	if got := Expand([]string{"{model}"}, map[string]string{"model": "a b"}); len(got) != 1 || got[0] != "a b" {
		t.Errorf("%q", got)
	}
}
