package grid

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/ratio"
)

// Leg is one leg of the grid, in run order.
type Leg struct {
	// Slot is the leg's place in the run order, from 1.
	Slot int
	// Engine is the engine's name, EngineIndex its place in the plan.
	Engine      string
	EngineIndex int
	// N is the leg's r<N>: the engine's legs counted in run order.
	N int
	// Block is the block the leg runs in, from 1: each block runs every
	// engine once.
	Block int
	// Points are the bench points in the order the leg runs them: the
	// plan's on odd blocks, reversed on even ones.
	Points []ratio.PointID
}

// Name is the leg as the tree names it: <engine>/r<N>.
func (l Leg) Name() string { return l.Engine + "/r" + strconv.Itoa(l.N) }

// UsesSeed reports whether the plan's order depends on the seed.
func (p *Plan) UsesSeed() bool { return p.Order == OrderRandom || p.Order == OrderWilliams }

// Order is the grid's legs in run order: a pure function of the plan and
// the seed (which abba ignores).
//
// abba: blocks AB, BA, AB, … (two engines; linear drift lands equally on
// both arms over each pair of blocks). williams: block b runs row b of a
// Williams design (cycled), whose rows have each engine follow each other
// equally often; the seed assigns engines to the design's symbols.
// random: each block's order drawn from the seed.
func Order(p *Plan, seed int64) []Leg {
	n := len(p.Engines)
	rng := rand.New(rand.NewPCG(uint64(seed), 0x636c6f636b676174))
	var rows [][]int
	switch p.Order {
	case OrderABBA:
		rows = [][]int{{0, 1}, {1, 0}}
	case OrderWilliams:
		perm := rng.Perm(n)
		for _, r := range williams(n) {
			row := make([]int, n)
			for i, s := range r {
				row[i] = perm[s]
			}
			rows = append(rows, row)
		}
	}
	var legs []Leg
	count := make([]int, n)
	for b := 1; b <= p.Repeats; b++ {
		var row []int
		if p.Order == OrderRandom {
			row = rng.Perm(n)
		} else {
			row = rows[(b-1)%len(rows)]
		}
		points := slices.Clone(p.Bench.Points)
		if b%2 == 0 {
			slices.Reverse(points)
		}
		for _, e := range row {
			count[e]++
			legs = append(legs, Leg{Slot: len(legs) + 1, Engine: p.Engines[e].Name, EngineIndex: e, N: count[e], Block: b, Points: points})
		}
	}
	return legs
}

// williams is a Williams design for n treatments: n rows for even n, 2n
// for odd n (each row and its mirror), in which every treatment is
// followed by every other equally often.
func williams(n int) [][]int {
	first := make([]int, n)
	lo, hi := 1, n-1
	for i := 1; i < n; i++ {
		if i%2 == 1 {
			first[i] = lo
			lo++
		} else {
			first[i] = hi
			hi--
		}
	}
	var rows [][]int
	for r := 0; r < n; r++ {
		row := make([]int, n)
		for i, v := range first {
			row[i] = (v + r) % n
		}
		rows = append(rows, row)
	}
	if n%2 == 1 {
		for r := 0; r < n; r++ {
			m := slices.Clone(rows[r])
			slices.Reverse(m)
			rows = append(rows, m)
		}
	}
	return rows
}

// OrderString is the order as the journal and the dry run write it: the
// legs as engine/r<N>, space-separated.
func OrderString(legs []Leg) string {
	s := make([]string, len(legs))
	for i, l := range legs {
		s[i] = l.Name()
	}
	return strings.Join(s, " ")
}

// Vars are a leg's placeholder values; a point's are added by PointVars.
func (p *Plan) Vars(l Leg) map[string]string {
	return map[string]string{
		"model":    p.Model,
		"port":     strconv.Itoa(p.Port),
		"base_url": fmt.Sprintf("http://127.0.0.1:%d", p.Port),
		"engine":   l.Engine,
		"n":        strconv.Itoa(l.N),
	}
}

// PointVars are the placeholder values while point pt runs, its result
// going to dir.
func PointVars(base map[string]string, pt ratio.PointID, dir string) map[string]string {
	v := make(map[string]string, len(base)+4)
	for k, x := range base {
		v[k] = x
	}
	c, r, _ := strings.Cut(pt.Label(), "/")
	v["concurrency"], v["rate"] = c, r
	v["result_dir"] = dir
	v["result_name"] = ResultName(pt)
	return v
}

// ResultName is the file a point's result is saved to: c8-rinf.json.
func ResultName(pt ratio.PointID) string {
	c, r, _ := strings.Cut(pt.Label(), "/")
	return "c" + c + "-r" + r + ".json"
}

// Expand replaces each placeholder in each argument with its value. A
// placeholder expands inside its own argument only: an expanded value is
// never split into several.
func Expand(argv []string, vars map[string]string) []string {
	out := make([]string, len(argv))
	for i, a := range argv {
		out[i] = placeholderRE.ReplaceAllStringFunc(a, func(m string) string {
			if v, ok := vars[m[1:len(m)-1]]; ok {
				return v
			}
			return m
		})
	}
	return out
}
