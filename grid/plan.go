// Package grid runs a whole comparison from a plan (SPEC §11.2): every leg
// of every engine, in an order that cancels linear drift, each leg started
// on a GPU back at its idle temperature, its server in a process group of
// its own under clockgate as child subreaper, sampled in process, each
// bench point marked, stopped until nothing of it is left, and committed
// into the evidence tree by rename. A journal makes a stopped grid resume
// where it stopped.
//
// The plan and the order are pure (Load, Order); the leg's processes are
// behind Procs, whose Linux calls live in procs_linux.go.
package grid

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/pelletier/go-toml/v2"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/ratio"
	"github.com/clockgate/clockgate/sampler"
)

// MinRepeats is the fewest legs per engine a plan may ask for without
// allow_underpowered: with fewer legs per arm no Mann-Whitney test across
// legs can reach alpha 0.05 (SPEC §9.4), so no difference could be called
// significant.
const MinRepeats = 4

// The orders a plan may ask for.
const (
	OrderABBA     = "abba"
	OrderWilliams = "williams"
	OrderRandom   = "random"
)

// DeviceSelectors are the environment variables that choose devices: an
// engine's env may not set them, since the plan's gpus does, once for
// every arm.
var DeviceSelectors = []string{"CUDA_VISIBLE_DEVICES", "HIP_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER"}

// Placeholders are the names a serve or bench argument may hold in braces.
var Placeholders = []string{"model", "port", "base_url", "concurrency", "rate", "result_dir", "result_name", "engine", "n",
	"head", "node", "node_rank", "nnodes", "role"}

// slurmPlaceholders have a value only in a plan with [slurm] (SPEC §12.4):
// the allocation's nodes.
var slurmPlaceholders = map[string]bool{"head": true, "node": true, "node_rank": true, "nnodes": true, "role": true}

// taskPlaceholders have a value only on the node a server's task runs on:
// the bench, which runs where the grid runs, may not use them.
var taskPlaceholders = map[string]bool{"node": true, "node_rank": true, "role": true}

// pointPlaceholders have a value only while a bench point runs: serve may
// not use them.
var pointPlaceholders = map[string]bool{"concurrency": true, "rate": true, "result_dir": true, "result_name": true}

// Plan is a loaded, checked plan.
type Plan struct {
	// Path is the plan file as given; Name its base name (plan.toml), the
	// name errors carry.
	Path, Name string
	// SHA256 is the hex SHA-256 of the plan file's bytes, Data the bytes.
	SHA256 string
	Data   []byte
	// Tree is the evidence tree, relative to the plan file's folder when
	// written relative.
	Tree string
	// Model is what {model} expands to; ModelDir the tree's <model>
	// segment (model_dir, or Model with each / replaced by --).
	Model, ModelDir string
	// GPUs is the gpus key as written; Selection its reading, as --gpu.
	GPUs      string
	Selection sampler.Selection
	Port      int
	Repeats   int
	// AllowUnderpowered allows Repeats below MinRepeats.
	AllowUnderpowered bool
	Order             string
	// Seed is the seed key; HasSeed says it was written.
	Seed     int64
	HasSeed  bool
	Interval time.Duration
	Engines  []Engine
	Bench    Bench
	Cooldown Cooldown
	// Expect is the declared state every leg is recorded with (the expect
	// key, as --expect); nil for none.
	Expect *clocks.Expect
	// Slurm is the [slurm] table: the grid runs each leg across the
	// nodes of the allocation it runs in (SPEC §12.4); nil for a grid on
	// this host.
	Slurm *Slurm
}

// Slurm is a plan's [slurm] table.
type Slurm struct {
	// Nodes is how many nodes the allocation must have at least.
	Nodes int
	// SkewBound is the most two nodes' clocks may disagree (leg init
	// --skew-bound).
	SkewBound time.Duration
}

// DefaultSkewBound is [slurm] skew_bound when the plan sets none: the
// sampler's shortest interval (SPEC §12.3).
const DefaultSkewBound = 100 * time.Millisecond

// Role is one role of an engine on a Slurm allocation: its server runs on
// Nodes nodes, one task each.
type Role struct {
	Name  string
	Nodes int
	Serve []string
	// Ready is how this role's server is known ready; nil: not probed
	// (another role's, or the engine's, ready says the engine is).
	Ready *Ready
}

// Engine is one arm: how its server is started and known ready.
type Engine struct {
	Name  string
	Serve []string
	Env   map[string]string
	Ready Ready
	// Roles are the engine's roles on a Slurm allocation, in plan order;
	// nil for an engine whose serve runs on the first node (or on this
	// host).
	Roles []Role
}

// Ready is how a server is known ready: Path answers 200 twice in a row,
// polled every second, within Timeout. Under [slurm] URL (placeholders
// allowed: http://{head}:{port}/health) may stand for Path. A zero Ready
// (no path, no URL) is none.
type Ready struct {
	Path    string
	URL     string
	Timeout time.Duration
}

// Bench is the bench loop of every leg.
type Bench struct {
	// Points are the points in the plan's order.
	Points  []ratio.PointID
	Command []string
	// Warmup is the point run first and not recorded; HasWarmup says
	// there is one.
	Warmup    ratio.PointID
	HasWarmup bool
	// Format is the client whose result each point writes: FormatVLLM
	// (the default), FormatSGLang, FormatAIPerf or FormatGuideLLM.
	Format string
}

// Cooldown is the idle gate before each leg.
type Cooldown struct {
	AboveIdleC      float64
	MaxSlopeCPerMin float64
	MaxWait         time.Duration
}

// PlanError is a plan refusal: the file's name, the line and column of
// the offending key (0 when the plan cannot name one), and why.
type PlanError struct {
	File      string
	Line, Col int
	Msg       string
}

func (e *PlanError) Error() string {
	switch {
	case e.Line > 0 && e.Col > 0:
		return fmt.Sprintf("%s:%d:%d: %s", e.File, e.Line, e.Col, e.Msg)
	case e.Line > 0:
		return fmt.Sprintf("%s:%d: %s", e.File, e.Line, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.File, e.Msg)
}

type rawPlan struct {
	Tree              *string      `toml:"tree"`
	Model             *string      `toml:"model"`
	ModelDir          *string      `toml:"model_dir"`
	GPUs              *string      `toml:"gpus"`
	Port              *int64       `toml:"port"`
	Repeats           *int64       `toml:"repeats"`
	AllowUnderpowered bool         `toml:"allow_underpowered"`
	Order             *string      `toml:"order"`
	Seed              *int64       `toml:"seed"`
	Interval          *string      `toml:"interval"`
	Engine            []rawEngine  `toml:"engine"`
	Bench             *rawBench    `toml:"bench"`
	Cooldown          *rawCooldown `toml:"cooldown"`
	Slurm             *rawSlurm    `toml:"slurm"`

	// Expect is the declared state (SPEC §12.2).
	Expect map[string]any `toml:"expect"`
}

type rawEngine struct {
	Name  *string           `toml:"name"`
	Serve []string          `toml:"serve"`
	Env   map[string]string `toml:"env"`
	Ready *rawReady         `toml:"ready"`
	Role  []rawRole         `toml:"role"`
}

type rawReady struct {
	Path    *string `toml:"path"`
	URL     *string `toml:"url"`
	Timeout *string `toml:"timeout"`
}

type rawSlurm struct {
	Nodes     *int64  `toml:"nodes"`
	SkewBound *string `toml:"skew_bound"`
}

type rawRole struct {
	Name  *string   `toml:"name"`
	Nodes *int64    `toml:"nodes"`
	Serve []string  `toml:"serve"`
	Ready *rawReady `toml:"ready"`
}

type rawBench struct {
	Points  []string `toml:"points"`
	Command []string `toml:"command"`
	Warmup  *string  `toml:"warmup"`
	Format  *string  `toml:"format"`
}

type rawCooldown struct {
	AboveIdleC      *float64 `toml:"above_idle_c"`
	MaxSlopeCPerMin *float64 `toml:"max_slope_c_per_min"`
	MaxWait         *string  `toml:"max_wait"`
}

// LoadFile reads and checks the plan at path.
func LoadFile(path string) (*Plan, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	p, err := Parse(filepath.Base(path), data)
	if err != nil {
		return nil, err
	}
	p.Path = path
	if !filepath.IsAbs(p.Tree) {
		p.Tree = filepath.Join(filepath.Dir(path), p.Tree)
	}
	return p, nil
}

// Parse checks the plan data, named name in errors. Tree is left as
// written.
func Parse(name string, data []byte) (*Plan, error) {
	loc := newLocator(data)
	fail := func(line, col int, format string, args ...any) error {
		return &PlanError{File: name, Line: line, Col: col, Msg: fmt.Sprintf(format, args...)}
	}
	var raw rawPlan
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, decodeErr(name, loc, err)
	}
	sum := sha256.Sum256(data)
	p := &Plan{Name: name, SHA256: hex.EncodeToString(sum[:]), Data: data, AllowUnderpowered: raw.AllowUnderpowered}
	at := func(table, key string) (int, int) { return loc.key(table, key) }
	missing := func(table, key, why string) error {
		l, c := loc.table(table)
		where := "the plan"
		if table != "" {
			where = "[" + strings.Split(table, "#")[0] + "]"
		}
		return fail(l, c, "%s has no %s: %s", where, key, why)
	}

	if raw.Tree == nil || *raw.Tree == "" {
		return nil, missing("", "tree", "name the evidence tree to write, relative to the plan's folder")
	}
	p.Tree = *raw.Tree
	if raw.Model == nil || *raw.Model == "" {
		return nil, missing("", "model", "name the model, as the engines and the bench are given it")
	}
	p.Model = *raw.Model
	p.ModelDir = strings.ReplaceAll(p.Model, "/", "--")
	if raw.ModelDir != nil {
		p.ModelDir = *raw.ModelDir
		if err := segment(p.ModelDir); err != nil {
			l, c := at("", "model_dir")
			return nil, fail(l, c, "model_dir %q: %v", p.ModelDir, err)
		}
	} else if err := segment(p.ModelDir); err != nil {
		l, c := at("", "model")
		return nil, fail(l, c, "model %q gives the tree's <model> segment %q: %v; set model_dir", p.Model, p.ModelDir, err)
	}
	if raw.GPUs == nil {
		return nil, missing("", "gpus", "name the leg's GPUs as --gpu does (0, 0,1, all, GPU-…)")
	}
	p.GPUs = *raw.GPUs
	sel, err := sampler.ParseGPUFlag(p.GPUs)
	if err != nil {
		l, c := at("", "gpus")
		return nil, fail(l, c, "gpus: %v", err)
	}
	p.Selection = sel
	if raw.Port == nil {
		return nil, missing("", "port", "the port every engine's server listens on")
	}
	if *raw.Port < 1 || *raw.Port > 65535 {
		l, c := at("", "port")
		return nil, fail(l, c, "port %d: want 1 to 65535", *raw.Port)
	}
	p.Port = int(*raw.Port)
	if raw.Repeats == nil {
		return nil, missing("", "repeats", "the number of legs per engine")
	}
	if *raw.Repeats < 1 || *raw.Repeats > 1000 {
		l, c := at("", "repeats")
		return nil, fail(l, c, "repeats %d: want 1 to 1000", *raw.Repeats)
	}
	p.Repeats = int(*raw.Repeats)
	if p.Repeats < MinRepeats && !p.AllowUnderpowered {
		l, c := at("", "repeats")
		return nil, fail(l, c, "repeats %d < %d: with fewer than %d legs per engine no difference can be significant (SPEC §9.4); raise repeats, or set allow_underpowered = true to run it anyway",
			p.Repeats, MinRepeats, MinRepeats)
	}
	if raw.Order == nil {
		return nil, missing("", "order", "abba (two engines), williams (three or more) or random")
	}
	p.Order = *raw.Order
	if raw.Seed != nil {
		p.Seed, p.HasSeed = *raw.Seed, true
	}
	p.Interval = time.Second
	if raw.Interval != nil {
		d, err := time.ParseDuration(*raw.Interval)
		l, c := at("", "interval")
		if err != nil {
			return nil, fail(l, c, "interval %q: not a duration (250ms, 1s)", *raw.Interval)
		}
		if d < sampler.MinInterval {
			return nil, fail(l, c, "interval %v: want at least %v", d, sampler.MinInterval)
		}
		p.Interval = d
	}
	if p.Expect, err = parseExpect(raw.Expect); err != nil {
		l, c := at("", "expect")
		return nil, fail(l, c, "%v", err)
	}

	// [slurm], before the engines: their roles and placeholders need it.
	if raw.Slurm != nil {
		sl := &Slurm{SkewBound: DefaultSkewBound}
		if raw.Slurm.Nodes == nil {
			return nil, missing("slurm", "nodes", "how many nodes the allocation must have at least")
		}
		if *raw.Slurm.Nodes < 1 || *raw.Slurm.Nodes > 4096 {
			l, c := at("slurm", "nodes")
			return nil, fail(l, c, "nodes %d: want 1 to 4096", *raw.Slurm.Nodes)
		}
		sl.Nodes = int(*raw.Slurm.Nodes)
		if raw.Slurm.SkewBound != nil {
			d, err := time.ParseDuration(*raw.Slurm.SkewBound)
			if err != nil || d <= 0 {
				l, c := at("slurm", "skew_bound")
				return nil, fail(l, c, "skew_bound %q: want a positive duration (100ms)", *raw.Slurm.SkewBound)
			}
			sl.SkewBound = d
		}
		p.Slurm = sl
	}
	slurm := p.Slurm != nil

	// Engines.
	if len(raw.Engine) < 2 {
		l, c := loc.table("engine#0")
		return nil, fail(l, c, "%d [[engine]] table(s): a comparison needs at least two engines", len(raw.Engine))
	}
	seen := map[string]int{}
	roleTable := 0 // the [[engine.role]] tables' count, across engines
	for i, re := range raw.Engine {
		tbl := fmt.Sprintf("engine#%d", i)
		if re.Name == nil {
			return nil, missing(tbl, "name", "the tree's <engine> segment")
		}
		e := Engine{Name: *re.Name, Serve: re.Serve, Env: re.Env}
		if err := segment(e.Name); err != nil || e.Name == "grid" {
			if err == nil {
				err = errors.New("reserved")
			}
			l, c := at(tbl, "name")
			return nil, fail(l, c, "engine name %q: %v", e.Name, err)
		}
		if j, dup := seen[e.Name]; dup {
			l, c := at(tbl, "name")
			return nil, fail(l, c, "engine name %q is also engine %d's: each arm needs its own name", e.Name, j+1)
		}
		seen[e.Name] = i
		if len(re.Role) > 0 && !slurm {
			l, c := loc.table(fmt.Sprintf("engine.role#%d", roleTable))
			return nil, fail(l, c, "[[engine.role]] without a [slurm] table: roles run on the nodes of a Slurm allocation; add [slurm] with nodes, or give the engine one serve")
		}
		if len(re.Role) > 0 && re.Serve != nil {
			l, c := at(tbl, "serve")
			return nil, fail(l, c, "serve beside [[engine.role]]: an engine with roles runs each role's serve; move it into a role")
		}
		if len(re.Role) == 0 {
			if len(e.Serve) == 0 || e.Serve[0] == "" {
				if len(e.Serve) == 0 {
					return nil, missing(tbl, "serve", "the server's argv")
				}
				l, c := at(tbl, "serve")
				return nil, fail(l, c, "serve: the program name is empty")
			}
			if err := checkArgs(e.Serve, false, slurm); err != nil {
				l, c := loc.within(tbl, "serve", err.text)
				return nil, fail(l, c, "serve: %s", err.msg)
			}
		}
		keys := make([]string, 0, len(e.Env))
		for k := range e.Env {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			for _, sel := range DeviceSelectors {
				if k == sel {
					l, c := loc.within(tbl, "env", k)
					return nil, fail(l, c, "env sets %s, a device selector: the plan's gpus = %q chooses the GPUs, once for every arm; remove it from env", k, p.GPUs)
				}
			}
		}
		roleNames := map[string]bool{}
		nodes, probed := 0, false
		for _, rr := range re.Role {
			rt := fmt.Sprintf("engine.role#%d", roleTable)
			roleTable++
			if rr.Name == nil {
				return nil, missing(rt, "name", "the role's name (prefill, decode)")
			}
			r := Role{Name: *rr.Name, Serve: rr.Serve}
			if err := segment(r.Name); err != nil {
				l, c := at(rt, "name")
				return nil, fail(l, c, "role name %q: %v", r.Name, err)
			}
			if roleNames[r.Name] {
				l, c := at(rt, "name")
				return nil, fail(l, c, "role name %q is given twice in engine %q: each role needs its own name", r.Name, e.Name)
			}
			roleNames[r.Name] = true
			if rr.Nodes == nil {
				return nil, missing(rt, "nodes", "how many nodes the role's server runs on")
			}
			if *rr.Nodes < 1 {
				l, c := at(rt, "nodes")
				return nil, fail(l, c, "role %s: nodes %d: want at least 1", r.Name, *rr.Nodes)
			}
			r.Nodes = int(*rr.Nodes)
			nodes += r.Nodes
			if len(r.Serve) == 0 {
				return nil, missing(rt, "serve", "the role's server argv")
			}
			if r.Serve[0] == "" {
				l, c := at(rt, "serve")
				return nil, fail(l, c, "serve: the program name is empty")
			}
			if err := checkArgs(r.Serve, false, slurm); err != nil {
				l, c := loc.within(rt, "serve", err.text)
				return nil, fail(l, c, "serve: %s", err.msg)
			}
			if rr.Ready != nil {
				rd, perr := parseReady(rr.Ready, rt, loc, fail, slurm)
				if perr != nil {
					return nil, perr
				}
				r.Ready = &rd
				probed = true
			}
			e.Roles = append(e.Roles, r)
		}
		if slurm && nodes > p.Slurm.Nodes {
			l, c := loc.table(tbl)
			return nil, fail(l, c, "engine %q: its roles need %d nodes, [slurm] nodes = %d: raise nodes (and the allocation), or give the roles fewer", e.Name, nodes, p.Slurm.Nodes)
		}
		if re.Ready == nil && !probed {
			return nil, missing(tbl, "ready", `how the server is known ready: ready = { path = "/health", timeout = "10m" }`)
		}
		if re.Ready != nil {
			rd, perr := parseReady(re.Ready, tbl, loc, fail, slurm)
			if perr != nil {
				return nil, perr
			}
			e.Ready = rd
		}
		p.Engines = append(p.Engines, e)
	}
	switch p.Order {
	case OrderABBA:
		if len(p.Engines) != 2 {
			l, c := at("", "order")
			return nil, fail(l, c, "order abba needs exactly two engines, the plan has %d: use williams", len(p.Engines))
		}
		if p.Repeats%2 != 0 {
			l, c := at("", "repeats")
			return nil, fail(l, c, "repeats %d is odd: abba cancels linear drift only over whole AB BA pairs; make it even", p.Repeats)
		}
	case OrderWilliams:
		if len(p.Engines) < 3 {
			l, c := at("", "order")
			return nil, fail(l, c, "order williams is for three or more engines, the plan has %d: use abba", len(p.Engines))
		}
		if rows := len(williams(len(p.Engines))); p.Repeats%rows != 0 {
			l, c := at("", "repeats")
			return nil, fail(l, c, "repeats %d is not a multiple of %d, the rows of the Williams design for %d engines: each engine follows each other equally often only over whole designs",
				p.Repeats, rows, len(p.Engines))
		}
	case OrderRandom:
	default:
		l, c := at("", "order")
		return nil, fail(l, c, "order %q: want abba, williams or random", p.Order)
	}

	// Bench.
	if raw.Bench == nil {
		l, c := loc.table("")
		return nil, fail(l, c, "the plan has no [bench] table: points and command")
	}
	if len(raw.Bench.Points) == 0 {
		return nil, missing("bench", "points", `the points, as point ids ("8/inf")`)
	}
	dupPoint := map[ratio.PointID]bool{}
	for _, s := range raw.Bench.Points {
		id, err := ratio.ParsePointID(s)
		if err != nil {
			l, c := loc.within("bench", "points", `"`+s+`"`)
			return nil, fail(l, c, "points: %v", err)
		}
		if dupPoint[id] {
			l, c := loc.within("bench", "points", `"`+s+`"`)
			return nil, fail(l, c, "points: %s is listed twice", s)
		}
		dupPoint[id] = true
		p.Bench.Points = append(p.Bench.Points, id)
	}
	if len(raw.Bench.Command) == 0 || raw.Bench.Command[0] == "" {
		return nil, missing("bench", "command", "the bench client's argv")
	}
	p.Bench.Command = raw.Bench.Command
	if err := checkArgs(p.Bench.Command, true, slurm); err != nil {
		l, c := loc.within("bench", "command", err.text)
		return nil, fail(l, c, "command: %s", err.msg)
	}
	if raw.Bench.Warmup != nil {
		id, err := ratio.ParsePointID(*raw.Bench.Warmup)
		if err != nil {
			l, c := at("bench", "warmup")
			return nil, fail(l, c, "warmup: %v", err)
		}
		p.Bench.Warmup, p.Bench.HasWarmup = id, true
	}
	if p.Bench.Format, err = parseBenchFormat(raw.Bench.Format); err != nil {
		l, c := at("bench", "format")
		return nil, fail(l, c, "%v", err)
	}

	// Cooldown.
	if raw.Cooldown == nil {
		l, c := loc.table("")
		return nil, fail(l, c, "the plan has no [cooldown] table: above_idle_c, max_slope_c_per_min and max_wait (a leg starts on a GPU back at its idle temperature, within a bounded wait)")
	}
	cd := raw.Cooldown
	if cd.AboveIdleC == nil {
		return nil, missing("cooldown", "above_idle_c", "how far above the idle temperature a leg may start, in °C")
	}
	if !(*cd.AboveIdleC >= 0) || *cd.AboveIdleC > 100 {
		l, c := at("cooldown", "above_idle_c")
		return nil, fail(l, c, "above_idle_c %v: want 0 to 100 °C", *cd.AboveIdleC)
	}
	if cd.MaxSlopeCPerMin == nil {
		return nil, missing("cooldown", "max_slope_c_per_min", "how fast the temperature may still move when a leg starts, in °C per minute")
	}
	if !(*cd.MaxSlopeCPerMin >= 0) || *cd.MaxSlopeCPerMin > 100 {
		l, c := at("cooldown", "max_slope_c_per_min")
		return nil, fail(l, c, "max_slope_c_per_min %v: want 0 to 100 °C per minute", *cd.MaxSlopeCPerMin)
	}
	if cd.MaxWait == nil {
		return nil, missing("cooldown", "max_wait", "required: the wait for a cool GPU is never unbounded (15m)")
	}
	d, err := time.ParseDuration(*cd.MaxWait)
	if err != nil || d <= 0 {
		l, c := at("cooldown", "max_wait")
		return nil, fail(l, c, "max_wait %q: want a positive duration (15m): the wait for a cool GPU is never unbounded", *cd.MaxWait)
	}
	p.Cooldown = Cooldown{AboveIdleC: *cd.AboveIdleC, MaxSlopeCPerMin: *cd.MaxSlopeCPerMin, MaxWait: d}
	return p, nil
}

// parseReady reads a ready table of table tbl: path (a URL path on this
// host, or on the head node under [slurm]) or, under [slurm], url; and
// timeout, never unbounded.
func parseReady(rr *rawReady, tbl string, loc *locator, fail func(int, int, string, ...any) error, slurm bool) (Ready, error) {
	var r Ready
	switch {
	case rr.URL != nil && rr.Path != nil:
		l, c := loc.key(tbl, "ready")
		return r, fail(l, c, "ready has both path and url: give one")
	case rr.URL != nil:
		if !slurm {
			l, c := loc.within(tbl, "ready", "url")
			return r, fail(l, c, "ready.url is for a [slurm] plan (a server on another node): on this host give ready.path (/health)")
		}
		if !strings.HasPrefix(*rr.URL, "http://") && !strings.HasPrefix(*rr.URL, "https://") {
			l, c := loc.within(tbl, "ready", "url")
			return r, fail(l, c, "ready.url %q: want an http:// URL (http://{head}:{port}/health)", *rr.URL)
		}
		if err := checkArgs([]string{*rr.URL}, false, slurm); err != nil {
			l, c := loc.within(tbl, "ready", err.text)
			return r, fail(l, c, "ready.url: %s", err.msg)
		}
		r.URL = *rr.URL
	case rr.Path == nil || !strings.HasPrefix(*rr.Path, "/"):
		l, c := loc.key(tbl, "ready")
		return r, fail(l, c, "ready.path: want a URL path starting with / (/health)")
	default:
		r.Path = *rr.Path
	}
	if rr.Timeout == nil {
		l, c := loc.key(tbl, "ready")
		return r, fail(l, c, "ready.timeout is required: a wait for readiness is never unbounded (10m)")
	}
	d, err := time.ParseDuration(*rr.Timeout)
	if err != nil || d <= 0 {
		l, c := loc.within(tbl, "ready", "timeout")
		return r, fail(l, c, "ready.timeout %q: want a positive duration (10m)", *rr.Timeout)
	}
	r.Timeout = d
	return r, nil
}

// segment refuses what cannot be one path segment of the tree.
func segment(s string) error {
	switch {
	case s == "":
		return errors.New("empty")
	case s == "." || s == "..":
		return errors.New("not a name")
	case strings.ContainsAny(s, "/\\\x00"):
		return errors.New("want one path segment (no /)")
	case strings.HasPrefix(s, "."):
		return errors.New("a hidden name (starting with .)")
	}
	return nil
}

var placeholderRE = regexp.MustCompile(`\{[^{}]*\}`)

type argErr struct{ text, msg string }

// checkArgs refuses an unknown placeholder, or one that has no value
// where it stands (a point's placeholder in serve).
func checkArgs(argv []string, bench, slurm bool) *argErr {
	for _, a := range argv {
		for _, m := range placeholderRE.FindAllString(a, -1) {
			name := m[1 : len(m)-1]
			known := false
			for _, k := range Placeholders {
				known = known || k == name
			}
			if !known {
				return &argErr{m, fmt.Sprintf("unknown placeholder %s in %q: want one of {%s}", m, a, strings.Join(Placeholders, "}, {"))}
			}
			if !bench && pointPlaceholders[name] {
				return &argErr{m, fmt.Sprintf("placeholder %s in %q has no value in serve: it names a bench point (use it in [bench] command)", m, a)}
			}
			if !slurm && slurmPlaceholders[name] {
				return &argErr{m, fmt.Sprintf("placeholder %s in %q has a value only in a plan with [slurm] (the allocation's nodes)", m, a)}
			}
			if bench && taskPlaceholders[name] {
				return &argErr{m, fmt.Sprintf("placeholder %s in %q has no value in [bench] command: the bench runs where the grid runs, on no role's node (use {head})", m, a)}
			}
		}
	}
	return nil
}

// typeErrRE reads go-toml's type mismatch: the TOML kind found and the
// field it was decoded into.
var typeErrRE = regexp.MustCompile(`^cannot decode TOML (\w+) into struct field grid\.(\w+\.\w+) of type `)

// keyType is a plan key as a type error names it: what its value is and
// an example.
type keyType struct{ key, want, example string }

// keyTypes are the plan's keys by the field they decode into.
var keyTypes = map[string]keyType{
	"rawPlan.Tree":                {"tree", "a string", `tree = "evidence/2026-12-01"`},
	"rawPlan.Model":               {"model", "a string", `model = "meta-llama/Llama-3.1-8B-Instruct"`},
	"rawPlan.ModelDir":            {"model_dir", "a string", `model_dir = "meta-llama--Llama-3.1-8B-Instruct"`},
	"rawPlan.GPUs":                {"gpus", "a string", `gpus = "0"`},
	"rawPlan.Port":                {"port", "an integer", `port = 8000`},
	"rawPlan.Repeats":             {"repeats", "an integer", `repeats = 6`},
	"rawPlan.AllowUnderpowered":   {"allow_underpowered", "true or false", `allow_underpowered = true`},
	"rawPlan.Order":               {"order", "a string", `order = "abba"`},
	"rawPlan.Seed":                {"seed", "an integer", `seed = 1`},
	"rawPlan.Interval":            {"interval", "a duration string", `interval = "250ms"`},
	"rawPlan.Engine":              {"engine", "an array of tables, one [[engine]] per arm", `[[engine]]`},
	"rawPlan.Bench":               {"bench", "a table", `[bench]`},
	"rawPlan.Cooldown":            {"cooldown", "a table", `[cooldown]`},
	"rawPlan.Expect":              {"expect", "a table of declarations", `expect = { sm_clock_mhz = 1830, power_limit_w = 700 }`},
	"rawEngine.Name":              {"engine.name", "a string", `name = "vllm"`},
	"rawEngine.Serve":             {"engine.serve", "a list of strings", `serve = ["vllm", "serve", "{model}", "--port", "{port}"]`},
	"rawEngine.Env":               {"engine.env", "a table of string values", `env = { VLLM_USE_V1 = "1" }`},
	"rawEngine.Ready":             {"engine.ready", "a table", `ready = { path = "/health", timeout = "10m" }`},
	"rawReady.Path":               {"engine.ready.path", "a string", `ready = { path = "/health", timeout = "10m" }`},
	"rawReady.Timeout":            {"engine.ready.timeout", "a duration string", `ready = { path = "/health", timeout = "10m" }`},
	"rawReady.URL":                {"engine.ready.url", "a string", `ready = { url = "http://{head}:{port}/health", timeout = "20m" }`},
	"rawPlan.Slurm":               {"slurm", "a table", `[slurm]`},
	"rawSlurm.Nodes":              {"slurm.nodes", "an integer", `nodes = 3`},
	"rawSlurm.SkewBound":          {"slurm.skew_bound", "a duration string", `skew_bound = "100ms"`},
	"rawEngine.Role":              {"engine.role", "an array of tables, one [[engine.role]] per role", `[[engine.role]]`},
	"rawRole.Name":                {"engine.role.name", "a string", `name = "prefill"`},
	"rawRole.Nodes":               {"engine.role.nodes", "an integer", `nodes = 1`},
	"rawRole.Serve":               {"engine.role.serve", "a list of strings", `serve = ["vllm", "serve", "{model}", "--port", "{port}"]`},
	"rawRole.Ready":               {"engine.role.ready", "a table", `ready = { url = "http://{head}:{port}/health", timeout = "20m" }`},
	"rawBench.Points":             {"bench.points", "a list of point ids", `points = ["1/inf", "8/inf", "64/inf"]`},
	"rawBench.Command":            {"bench.command", "a list of strings", `command = ["vllm", "bench", "serve", "--base-url", "{base_url}"]`},
	"rawBench.Warmup":             {"bench.warmup", "a point id string", `warmup = "8/inf"`},
	"rawBench.Format":             {"bench.format", "a string", `format = "aiperf"`},
	"rawCooldown.AboveIdleC":      {"cooldown.above_idle_c", "a number", `above_idle_c = 2.0`},
	"rawCooldown.MaxSlopeCPerMin": {"cooldown.max_slope_c_per_min", "a number", `max_slope_c_per_min = 0.5`},
	"rawCooldown.MaxWait":         {"cooldown.max_wait", "a duration string", `max_wait = "15m"`},
}

// decodeErr turns a go-toml error into a PlanError at its position.
func decodeErr(name string, loc *locator, err error) error {
	var de *toml.DecodeError
	var se *toml.StrictMissingError
	switch {
	case errors.As(err, &se) && len(se.Errors) > 0:
		e := se.Errors[0]
		l, c := e.Position()
		key := strings.Join(e.Key(), ".")
		why := "not a plan key"
		if len(e.Key()) > 0 && e.Key()[0] == "engine" {
			why = "an [[engine]] holds only name, serve, env, ready and [[engine.role]] (name, nodes, serve, ready): arms may differ in nothing else (model, gpus, port, interval and [bench] exist once, for every arm)"
		}
		return &PlanError{File: name, Line: l, Col: c, Msg: fmt.Sprintf("unknown key %s: %s", key, why)}
	case errors.As(err, &de):
		l, c := de.Position()
		msg := strings.TrimPrefix(de.Error(), "toml: ")
		if m := typeErrRE.FindStringSubmatch(msg); m != nil {
			// A value of the wrong type: named by its key, with what is
			// expected and an example, never by a Go type.
			found := "a " + m[1]
			if strings.ContainsRune("aeiou", rune(m[1][0])) {
				found = "an " + m[1]
			}
			if k, ok := keyTypes[m[2]]; ok {
				if l <= 1 && c <= 1 && !strings.HasPrefix(k.key, "engine") {
					// go-toml gave no position (a nested array): the key's.
					tbl, key, found := strings.Cut(k.key, ".")
					if !found {
						tbl, key = "", k.key
					}
					l, c = loc.key(tbl, key)
				}
				return &PlanError{File: name, Line: l, Col: c, Msg: fmt.Sprintf("%s: %s is expected, found %s, e.g. %s", k.key, k.want, found, k.example)}
			}
			key := strings.Join(de.Key(), ".")
			return &PlanError{File: name, Line: l, Col: c, Msg: fmt.Sprintf("%s: a value of another type is expected, found %s (docs/grid.md shows each key)", key, found)}
		}
		if k := de.Key(); len(k) > 0 {
			msg = strings.Join(k, ".") + ": " + msg
		}
		return &PlanError{File: name, Line: l, Col: c, Msg: msg}
	}
	return &PlanError{File: name, Msg: err.Error()}
}

// locator finds where a key is written in a plan, for refusals that come
// after decoding: a table is "" (the top level), "bench", "cooldown" or
// "engine#K" (the K-th [[engine]], from 0).
type locator struct {
	lines []string
	// start is each table's header line (0-based; the top level starts
	// at 0), end the line after its last.
	start, end map[string]int
}

var headerRE = regexp.MustCompile(`^\s*\[\[?\s*([A-Za-z0-9_.-]+)\s*\]\]?`)

func newLocator(data []byte) *locator {
	l := &locator{lines: strings.Split(string(data), "\n"), start: map[string]int{"": 0}, end: map[string]int{}}
	cur, counts := "", map[string]int{}
	for i, line := range l.lines {
		m := headerRE.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		l.end[cur] = i
		name := m[1]
		if strings.HasPrefix(strings.TrimSpace(line), "[[") {
			k := counts[name]
			counts[name] = k + 1
			name = fmt.Sprintf("%s#%d", name, k)
		}
		cur = name
		l.start[cur] = i
	}
	l.end[cur] = len(l.lines)
	return l
}

// table is the line of a table's header (1-based), or 1.
func (l *locator) table(t string) (int, int) {
	s, ok := l.start[t]
	if !ok || t == "" {
		return 1, 1
	}
	return s + 1, 1
}

// key is the line and column where key is assigned in table t, else the
// table's own line.
func (l *locator) key(t, key string) (int, int) {
	s, ok := l.start[t]
	if !ok {
		return l.table(t)
	}
	re := regexp.MustCompile(`^(\s*)("?)` + regexp.QuoteMeta(key) + `("?)\s*=`)
	for i := s; i < l.end[t]; i++ {
		if m := re.FindStringSubmatchIndex(l.lines[i]); m != nil {
			return i + 1, m[3] - m[2] + 1
		}
	}
	return l.table(t)
}

// within is where text first appears from key's line in table t to the
// table's end: an argument of a multi-line array, a key of an inline
// table.
func (l *locator) within(t, key, text string) (int, int) {
	kl, kc := l.key(t, key)
	for i := kl - 1; i >= 0 && i < l.end[t]; i++ {
		line := l.lines[i]
		from := 0
		if i == kl-1 {
			from = kc - 1
		}
		if from <= len(line) {
			if k := strings.Index(line[from:], text); k >= 0 {
				return i + 1, from + k + 1
			}
		}
	}
	return kl, kc
}
