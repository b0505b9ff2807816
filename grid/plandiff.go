package grid

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/atomicfile"
)

// KeptPlanRel is where a grid keeps, under its tree, the plan it started
// with: a resume compares the plan it is given against it, key by key.
const KeptPlanRel = "grid/plan.toml"

// planValue is one key of a parsed plan and its value, written as in a
// plan ("250ms" for a duration, ["a", "b"] for a list).
type planValue struct{ key, value string }

// none is the value of a key a plan does not set.
const none = "(not set)"

func quote(s string) string { return strconv.Quote(s) }

func quoteList(xs []string) string {
	q := make([]string, len(xs))
	for i, x := range xs {
		q[i] = quote(x)
	}
	return "[" + strings.Join(q, ", ") + "]"
}

func dur(d time.Duration) string { return quote(d.String()) }

func num(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// values lists every key of the plan as parsed, in the plan's order. The
// tree is not among them: the kept plan is inside the tree resumed.
func (p *Plan) values() []planValue {
	seed := none
	if p.HasSeed {
		seed = strconv.FormatInt(p.Seed, 10)
	}
	v := []planValue{
		{"model", quote(p.Model)},
		{"model_dir", quote(p.ModelDir)},
		{"gpus", quote(p.GPUs)},
		{"port", strconv.Itoa(p.Port)},
		{"repeats", strconv.Itoa(p.Repeats)},
		{"allow_underpowered", strconv.FormatBool(p.AllowUnderpowered)},
		{"order", quote(p.Order)},
		{"seed", seed},
		{"interval", dur(p.Interval)},
		{"expect", cmp.Or(expectText(p.Expect), none)},
	}
	for i, e := range p.Engines {
		k := fmt.Sprintf("engine[%d].", i+1)
		v = append(v, planValue{k + "name", quote(e.Name)}, planValue{k + "serve", quoteList(e.Serve)})
		keys := make([]string, 0, len(e.Env))
		for name := range e.Env {
			keys = append(keys, name)
		}
		sort.Strings(keys)
		for _, name := range keys {
			v = append(v, planValue{k + "env." + name, quote(e.Env[name])})
		}
		v = append(v, planValue{k + "ready.path", quote(e.Ready.Path)}, planValue{k + "ready.timeout", dur(e.Ready.Timeout)})
		v = append(v, planValue{k + "ready.url", cmp.Or(e.Ready.URL, none)})
		for j, r := range e.Roles {
			rk := fmt.Sprintf("%srole[%d].", k, j+1)
			v = append(v, planValue{rk + "name", quote(r.Name)}, planValue{rk + "nodes", strconv.Itoa(r.Nodes)}, planValue{rk + "serve", quoteList(r.Serve)})
			rp, ru, rt := none, none, none
			if r.Ready != nil {
				rp, ru, rt = cmp.Or(r.Ready.Path, none), cmp.Or(r.Ready.URL, none), dur(r.Ready.Timeout)
			}
			v = append(v, planValue{rk + "ready.path", rp}, planValue{rk + "ready.url", ru}, planValue{rk + "ready.timeout", rt})
		}
	}
	slurmNodes, skew := none, none
	if p.Slurm != nil {
		slurmNodes, skew = strconv.Itoa(p.Slurm.Nodes), dur(p.Slurm.SkewBound)
	}
	v = append(v, planValue{"slurm.nodes", slurmNodes}, planValue{"slurm.skew_bound", skew})
	points := make([]string, len(p.Bench.Points))
	for i, pt := range p.Bench.Points {
		points[i] = pt.Label()
	}
	warmup := none
	if p.Bench.HasWarmup {
		warmup = quote(p.Bench.Warmup.Label())
	}
	return append(v,
		planValue{"bench.points", quoteList(points)},
		planValue{"bench.command", quoteList(p.Bench.Command)},
		planValue{"bench.warmup", warmup},
		planValue{"bench.format", quote(p.Bench.Format)},
		planValue{"cooldown.above_idle_c", num(p.Cooldown.AboveIdleC)},
		planValue{"cooldown.max_slope_c_per_min", num(p.Cooldown.MaxSlopeCPerMin)},
		planValue{"cooldown.max_wait", dur(p.Cooldown.MaxWait)},
	)
}

// PlanChanges names each key whose parsed value differs between the plan
// a grid started with (was) and the plan given now (now), with both
// values: "port: 8000, now 8001". Comments, layout, the order of keys and
// how a value is spelled (1.0 or 1e0) change nothing.
func PlanChanges(was, now *Plan) []string {
	old := map[string]string{}
	for _, kv := range was.values() {
		old[kv.key] = kv.value
	}
	// In the order of the plan given now, then the keys only the old one
	// had (an engine removed), in its order.
	cur := map[string]string{}
	var order []string
	for _, kv := range now.values() {
		cur[kv.key] = kv.value
		order = append(order, kv.key)
	}
	for _, kv := range was.values() {
		if _, ok := cur[kv.key]; !ok {
			order = append(order, kv.key)
		}
	}
	var out []string
	for _, k := range order {
		a, ok := old[k]
		if !ok {
			a = none
		}
		b, ok := cur[k]
		if !ok {
			b = none
		}
		if a != b {
			out = append(out, fmt.Sprintf("%s: %s, now %s", k, a, b))
		}
	}
	return out
}

// keepPlan writes the plan the grid starts with to TREE/grid/plan.toml,
// atomically.
func (g *grid) keepPlan() error {
	path := filepath.Join(g.tree, filepath.FromSlash(KeptPlanRel))
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteFile(path, g.p.Data, 0o644)
}

// keptPlan reads the plan the grid started with; nil when the tree keeps
// none (a grid started before plans were kept). A kept plan whose bytes
// are not the ones the journal's grid.start hashed (startSHA256) is
// refused: an edited copy would let a changed plan resume.
func (g *grid) keptPlan(startSHA256 string) (*Plan, error) {
	path := filepath.Join(g.tree, filepath.FromSlash(KeptPlanRel))
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != startSHA256 {
		return nil, fmt.Errorf("not the plan the journal (%s) started with: its sha256 is %s, the journal's grid.start has %s; put back the plan the grid started with, or start a new tree",
			filepath.Join(g.tree, filepath.FromSlash(JournalRel)), hex.EncodeToString(sum[:]), startSHA256)
	}
	p, err := Parse(path, data)
	if err != nil {
		return nil, fmt.Errorf("the plan the grid started with no longer loads: %v", err)
	}
	return p, nil
}
