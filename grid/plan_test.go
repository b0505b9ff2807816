package grid

import (
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"
)

// goodPlan is SPEC §11.2's example plan.
const goodPlan = `tree = "evidence/2026-12-01"
model = "meta-llama/Llama-3.1-8B-Instruct"
gpus = "0"
port = 8000
repeats = 6
order = "abba"
seed = 1
interval = "250ms"

[[engine]]
name = "vllm"
serve = ["vllm", "serve", "{model}", "--port", "{port}"]
env = { VLLM_USE_V1 = "1" }
ready = { path = "/health", timeout = "10m" }

[[engine]]
name = "sglang"
serve = ["python3", "-m", "sglang.launch_server", "--model-path", "{model}", "--port", "{port}"]
ready = { path = "/health", timeout = "10m" }

[bench]
points = ["1/inf", "8/inf", "64/inf"]
command = ["vllm", "bench", "serve", "--base-url", "{base_url}", "--model", "{model}",
  "--max-concurrency", "{concurrency}", "--request-rate", "{rate}",
  "--save-result", "--result-dir", "{result_dir}", "--result-filename", "{result_name}"]
warmup = "8/inf"

[cooldown]
above_idle_c = 2.0
max_slope_c_per_min = 0.5
max_wait = "15m"
`

func TestParseGoodPlan(t *testing.T) {
	p, err := Parse("plan.toml", []byte(goodPlan))
	if err != nil {
		t.Fatal(err)
	}
	if p.ModelDir != "meta-llama--Llama-3.1-8B-Instruct" || p.Model != "meta-llama/Llama-3.1-8B-Instruct" {
		t.Errorf("model %q dir %q", p.Model, p.ModelDir)
	}
	if p.Port != 8000 || p.Repeats != 6 || p.Order != "abba" || !p.HasSeed || p.Seed != 1 || p.Interval != 250*time.Millisecond {
		t.Errorf("plan %+v", p)
	}
	if len(p.Engines) != 2 || p.Engines[0].Env["VLLM_USE_V1"] != "1" || p.Engines[1].Ready.Timeout != 10*time.Minute {
		t.Errorf("engines %+v", p.Engines)
	}
	if len(p.Bench.Points) != 3 || p.Bench.Points[2].Label() != "64/inf" || !p.Bench.HasWarmup || p.Bench.Warmup.Label() != "8/inf" {
		t.Errorf("bench %+v", p.Bench)
	}
	if p.Cooldown != (Cooldown{AboveIdleC: 2, MaxSlopeCPerMin: 0.5, MaxWait: 15 * time.Minute}) {
		t.Errorf("cooldown %+v", p.Cooldown)
	}
	if len(p.SHA256) != 64 {
		t.Errorf("sha %q", p.SHA256)
	}
}

// edit replaces old (which must occur exactly once) in goodPlan.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	if strings.Count(goodPlan, old) != 1 {
		t.Fatalf("%q occurs %d times in the plan", old, strings.Count(goodPlan, old))
	}
	return strings.Replace(goodPlan, old, new, 1)
}

// TestPlanRefusals: every refusal names plan.toml:LINE:COL of the
// offending key and says why.
func TestPlanRefusals(t *testing.T) {
	cases := []struct {
		name, old, new string
		want           string // plan.toml:LINE:COL: prefix
		msg            string
	}{
		{"unknown key", `port = 8000`, "port = 8000\nbogus = 1", "plan.toml:5:1:", "unknown key bogus"},
		{"engine key other arms lack", `name = "sglang"`, "name = \"sglang\"\nport = 9000", "plan.toml:18:1:", "arms may differ in nothing else"},
		{"duplicate key", `repeats = 6`, "repeats = 6\nrepeats = 8", "plan.toml:6:1:", "already"},
		{"wrong type", `port = 8000`, `port = "8000"`, "plan.toml:4:", "port"},
		{"device selector", `env = { VLLM_USE_V1 = "1" }`, `env = { VLLM_USE_V1 = "1", CUDA_VISIBLE_DEVICES = "1" }`, "plan.toml:13:28:", "CUDA_VISIBLE_DEVICES, a device selector"},
		{"device order", `env = { VLLM_USE_V1 = "1" }`, `env = { CUDA_DEVICE_ORDER = "PCI_BUS_ID" }`, "plan.toml:13:9:", "CUDA_DEVICE_ORDER, a device selector"},
		{"odd abba", `repeats = 6`, `repeats = 5`, "plan.toml:5:1:", "repeats 5 is odd"},
		{"underpowered", `repeats = 6`, `repeats = 2`, "plan.toml:5:1:", "repeats 2 < 4"},
		{"unknown placeholder", `"--request-rate", "{rate}"`, `"--request-rate", "{rat}"`, "plan.toml:24:60:", "unknown placeholder {rat}"},
		{"point placeholder in serve", `"--port", "{port}"]
env`, `"--port", "{result_dir}"]
env`, "plan.toml:12:49:", "{result_dir}"},
		{"no max_wait", "max_wait = \"15m\"\n", "", "plan.toml:28:1:", "[cooldown] has no max_wait"},
		{"zero max_wait", `max_wait = "15m"`, `max_wait = "0s"`, "plan.toml:31:1:", "never unbounded"},
		{"no cooldown", "[cooldown]\nabove_idle_c = 2.0\nmax_slope_c_per_min = 0.5\nmax_wait = \"15m\"\n", "", "plan.toml:1:1:", "no [cooldown] table"},
		{"no ready timeout", `ready = { path = "/health", timeout = "10m" }

[bench]`, `ready = { path = "/health" }

[bench]`, "plan.toml:19:1:", "ready.timeout is required"},
		{"abba three engines", "[bench]", "[[engine]]\nname = \"trt\"\nserve = [\"trt\"]\nready = { path = \"/health\", timeout = \"1m\" }\n\n[bench]", "plan.toml:6:1:", "abba needs exactly two engines"},
		{"duplicate engine", `name = "sglang"`, `name = "vllm"`, "plan.toml:17:1:", "also engine 1's"},
		{"bad point", `"64/inf"]`, `"64/info"]`, "plan.toml:22:", "request_rate"},
		{"short interval", `interval = "250ms"`, `interval = "10ms"`, "plan.toml:8:1:", "at least 100ms"},
		{"bad order", `order = "abba"`, `order = "abab"`, "plan.toml:6:1:", `order "abab"`},
		{"model segment", `model = "meta-llama/Llama-3.1-8B-Instruct"`, "model = \"m\"\nmodel_dir = \"a/b\"", "plan.toml:3:1:", "model_dir"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse("plan.toml", []byte(edit(t, c.old, c.new)))
			if err == nil {
				t.Fatal("accepted")
			}
			var pe *PlanError
			if !errors.As(err, &pe) {
				t.Fatalf("%T %v", err, err)
			}
			if !strings.HasPrefix(err.Error(), c.want) || !strings.Contains(err.Error(), c.msg) {
				t.Errorf("got  %v\nwant %s … %s", err, c.want, c.msg)
			}
		})
	}
}

func TestAllowUnderpowered(t *testing.T) {
	p, err := Parse("plan.toml", []byte(edit(t, "repeats = 6", "repeats = 2\nallow_underpowered = true")))
	if err != nil || p.Repeats != 2 {
		t.Fatalf("%v %+v", err, p)
	}
	// The floor is exact: 4 passes without it.
	if _, err := Parse("plan.toml", []byte(edit(t, "repeats = 6", "repeats = 4"))); err != nil {
		t.Fatal(err)
	}
}

func TestModelDirDefault(t *testing.T) {
	p, err := Parse("plan.toml", []byte(edit(t, `model = "meta-llama/Llama-3.1-8B-Instruct"`, `model = "a/b/c"`)))
	if err != nil || p.ModelDir != "a--b--c" {
		t.Fatalf("%v %q", err, p.ModelDir)
	}
	p, err = Parse("plan.toml", []byte(edit(t, `model = "meta-llama/Llama-3.1-8B-Instruct"`, "model = \"a/b\"\nmodel_dir = \"llama\"")))
	if err != nil || p.ModelDir != "llama" || p.Model != "a/b" {
		t.Fatalf("%v %+v", err, p)
	}
}

// FuzzPlan: any bytes are a plan or a refusal naming the file, never a
// panic.
func FuzzPlan(f *testing.F) {
	f.Add([]byte(goodPlan))
	f.Add([]byte(strings.Replace(goodPlan, "abba", "random", 1)))
	f.Add([]byte("tree = 1\n[[engine]]\n[[engine]]\nname=\"x\"\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		p, err := Parse("plan.toml", data)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "plan.toml") {
				t.Fatalf("error without the file's name: %v", err)
			}
			return
		}
		legs := Order(p, 7)
		if len(legs) != p.Repeats*len(p.Engines) {
			t.Fatalf("%d legs for %d repeats of %d engines", len(legs), p.Repeats, len(p.Engines))
		}
	})
}

// TestPlanTypeErrors: a value of the wrong type is refused naming the
// plan's line and column, the key, what is expected and an example, for
// every typed key; never a Go type.
func TestPlanTypeErrors(t *testing.T) {
	for _, c := range []struct{ from, to, want string }{
		{`tree = "evidence/2026-12-01"`, `tree = 2026`, `plan.toml:1:8: tree: a string is expected, found an integer, e.g. tree = "evidence/2026-12-01"`},
		{`model = "meta-llama/Llama-3.1-8B-Instruct"`, `model = true`, `plan.toml:2:9: model: a string is expected, found a boolean, e.g. model = "meta-llama/Llama-3.1-8B-Instruct"`},
		{`gpus = "0"`, "model_dir = 1\ngpus = \"0\"", `plan.toml:3:13: model_dir: a string is expected, found an integer, e.g. model_dir = "meta-llama--Llama-3.1-8B-Instruct"`},
		{`gpus = "0"`, `gpus = 0`, `plan.toml:3:8: gpus: a string is expected, found an integer, e.g. gpus = "0"`},
		{`port = 8000`, `port = "8000"`, `plan.toml:4:8: port: an integer is expected, found a string, e.g. port = 8000`},
		{`repeats = 6`, `repeats = 6.0`, `plan.toml:5:11: repeats: an integer is expected, found a float, e.g. repeats = 6`},
		{`repeats = 6`, "repeats = 6\nallow_underpowered = \"yes\"", `plan.toml:6:22: allow_underpowered: true or false is expected, found a string, e.g. allow_underpowered = true`},
		{`order = "abba"`, `order = ["abba"]`, `plan.toml:6:9: order: a string is expected, found an array, e.g. order = "abba"`},
		{`seed = 1`, `seed = "1"`, `plan.toml:7:8: seed: an integer is expected, found a string, e.g. seed = 1`},
		{`interval = "250ms"`, `interval = 250`, `plan.toml:8:12: interval: a duration string is expected, found an integer, e.g. interval = "250ms"`},
		{`name = "vllm"`, `name = 1`, `plan.toml:11:8: engine.name: a string is expected, found an integer, e.g. name = "vllm"`},
		{`serve = ["vllm", "serve"`, `serve = [1, "serve"`, `plan.toml:12:10: engine.serve: a list of strings is expected, found an integer, e.g. serve = ["vllm", "serve", "{model}", "--port", "{port}"]`},
		{`env = { VLLM_USE_V1 = "1" }`, `env = { VLLM_USE_V1 = 1 }`, `plan.toml:13:23: engine.env: a table of string values is expected, found an integer, e.g. env = { VLLM_USE_V1 = "1" }`},
		{`ready = { path = "/health", timeout = "10m" }` + "\n\n[[engine]]\nname = \"sglang\"", `ready = "/health"` + "\n\n[[engine]]\nname = \"sglang\"", `plan.toml:14:9: engine.ready: a table is expected, found a string, e.g. ready = { path = "/health", timeout = "10m" }`},
		{`ready = { path = "/health", timeout = "10m" }` + "\n\n[[engine]]\nname = \"sglang\"", `ready = { path = 1, timeout = "10m" }` + "\n\n[[engine]]\nname = \"sglang\"", `plan.toml:14:18: engine.ready.path: a string is expected, found an integer, e.g. ready = { path = "/health", timeout = "10m" }`},
		{`ready = { path = "/health", timeout = "10m" }` + "\n\n[[engine]]\nname = \"sglang\"", `ready = { path = "/health", timeout = 10 }` + "\n\n[[engine]]\nname = \"sglang\"", `plan.toml:14:39: engine.ready.timeout: a duration string is expected, found an integer, e.g. ready = { path = "/health", timeout = "10m" }`},
		{`points = ["1/inf", "8/inf", "64/inf"]`, `points = "1/inf"`, `plan.toml:22:10: bench.points: a list of point ids is expected, found a string, e.g. points = ["1/inf", "8/inf", "64/inf"]`},
		{`command = ["vllm", "bench"`, `command = [["vllm"], "bench"`, `plan.toml:23:1: bench.command: a list of strings is expected, found an array, e.g. command = ["vllm", "bench", "serve", "--base-url", "{base_url}"]`},
		{`warmup = "8/inf"`, `warmup = 8`, `plan.toml:26:10: bench.warmup: a point id string is expected, found an integer, e.g. warmup = "8/inf"`},
		{`above_idle_c = 2.0`, `above_idle_c = "2"`, `plan.toml:29:16: cooldown.above_idle_c: a number is expected, found a string, e.g. above_idle_c = 2.0`},
		{`max_slope_c_per_min = 0.5`, `max_slope_c_per_min = "0.5"`, `plan.toml:30:23: cooldown.max_slope_c_per_min: a number is expected, found a string, e.g. max_slope_c_per_min = 0.5`},
		{`max_wait = "15m"`, `max_wait = 15`, `plan.toml:31:12: cooldown.max_wait: a duration string is expected, found an integer, e.g. max_wait = "15m"`},
	} {
		plan := strings.Replace(goodPlan, c.from, c.to, 1)
		if plan == goodPlan {
			t.Fatalf("%s: not in the plan", c.from)
		}
		_, err := Parse("plan.toml", []byte(plan))
		if err == nil || err.Error() != c.want {
			t.Errorf("%s:\n got %v\nwant %s", c.to, err, c.want)
		}
		if err != nil && (strings.Contains(err.Error(), "grid.raw") || strings.Contains(err.Error(), "struct field") || strings.Contains(err.Error(), "int64")) {
			t.Errorf("%s: a Go type in %v", c.to, err)
		}
	}
}

// TestEveryPlanKeyKnown: every key a plan may hold has a type error's
// name and example, and is compared on resume (tree aside: the kept plan
// is inside the tree resumed). A key added to the plan without both fails
// here.
// slurmPlan is goodPlan's engines on a Slurm allocation: prefill on one
// node, decode on two (SPEC §12.4).
var slurmPlan = strings.Replace(strings.Replace(strings.Replace(goodPlan, `order = "abba"`, `order = "williams"`, 1), "[[engine]]", `[slurm]
nodes = 3
skew_bound = "50ms"

[[engine]]`, 1), `[bench]`, `[[engine]]
name = "disagg"
ready = { url = "http://{head}:{port}/health", timeout = "20m" }
[[engine.role]]
name = "prefill"
nodes = 1
serve = ["vllm", "serve", "{model}", "--port", "{port}", "--node-rank", "{node_rank}"]
[[engine.role]]
name = "decode"
nodes = 2
serve = ["vllm", "serve", "{model}", "--data-parallel-address", "{head}", "--role={role}", "--nnodes", "{nnodes}", "--host", "{node}"]
ready = { path = "/health", timeout = "20m" }

[bench]`, 1)

func TestEveryPlanKeyKnown(t *testing.T) {
	p, err := Parse("plan.toml", []byte(goodPlan))
	if err != nil {
		t.Fatal(err)
	}
	sp, err := Parse("plan.toml", []byte(slurmPlan))
	if err != nil {
		t.Fatal(err)
	}
	slurmKeys := map[string]bool{}
	for _, kv := range sp.values() {
		slurmKeys[kv.key] = true
	}
	for _, s := range []struct {
		v      any
		prefix string
	}{{rawSlurm{}, "slurm."}, {rawRole{}, "engine[3].role[1]."}} {
		typ := reflect.TypeOf(s.v)
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			tag := f.Tag.Get("toml")
			if _, ok := keyTypes[typ.Name()+"."+f.Name]; !ok {
				t.Errorf("%s.%s (%s): no entry in keyTypes", typ.Name(), f.Name, tag)
			}
			found := false
			for k := range slurmKeys {
				found = found || strings.HasPrefix(k, s.prefix+tag)
			}
			if !found {
				t.Errorf("%s%s: not compared on resume (Plan.values)", s.prefix, tag)
			}
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	compared := map[string]bool{}
	for _, kv := range p.values() {
		compared[kv.key] = true
	}
	prefixed := func(prefix string) bool {
		for k := range compared {
			if strings.HasPrefix(k, prefix) {
				return true
			}
		}
		return false
	}
	for _, s := range []struct {
		v      any
		prefix string
	}{
		{rawPlan{}, ""}, {rawEngine{}, "engine[1]."}, {rawReady{}, "engine[1].ready."}, {rawBench{}, "bench."}, {rawCooldown{}, "cooldown."},
	} {
		typ := reflect.TypeOf(s.v)
		for i := 0; i < typ.NumField(); i++ {
			f := typ.Field(i)
			tag := f.Tag.Get("toml")
			if _, ok := keyTypes[typ.Name()+"."+f.Name]; !ok {
				t.Errorf("%s.%s (%s): no entry in keyTypes", typ.Name(), f.Name, tag)
			}
			switch {
			case s.prefix == "" && (tag == "tree" || tag == "engine" || tag == "bench" || tag == "cooldown"):
			case s.prefix == "engine[1]." && (tag == "ready" || tag == "role"):
			case !prefixed(s.prefix + tag):
				t.Errorf("%s%s: not compared on resume (Plan.values)", s.prefix, tag)
			}
		}
	}
}

// TestParseSlurmPlan: [slurm] and the roles are read, in plan order,
// with their nodes, serve and ready.
func TestParseSlurmPlan(t *testing.T) {
	p, err := Parse("plan.toml", []byte(slurmPlan))
	if err != nil {
		t.Fatal(err)
	}
	if p.Slurm == nil || p.Slurm.Nodes != 3 || p.Slurm.SkewBound != 50*time.Millisecond {
		t.Fatalf("slurm %+v", p.Slurm)
	}
	e := p.Engines[2]
	if len(e.Roles) != 2 || e.Roles[0].Name != "prefill" || e.Roles[0].Nodes != 1 || e.Roles[1].Name != "decode" || e.Roles[1].Nodes != 2 ||
		e.Roles[0].Ready != nil || e.Roles[1].Ready == nil || e.Roles[1].Ready.Path != "/health" || e.Ready.URL != "http://{head}:{port}/health" {
		t.Fatalf("engine %+v", e)
	}
	pl := Placement(e, []string{"n1", "n2", "n3"})
	if len(pl) != 2 || strings.Join(pl[0].nodes, ",") != "n1" || strings.Join(pl[1].nodes, ",") != "n2,n3" {
		t.Errorf("placement %+v", pl)
	}
	if pl := Placement(p.Engines[0], []string{"n1", "n2", "n3"}); len(pl) != 1 || pl[0].Name != "serve" || strings.Join(pl[0].nodes, ",") != "n1" {
		t.Errorf("an engine without roles: %+v", pl)
	}
}

// TestSlurmPlanRefusals: each refusal of [slurm] and [[engine.role]],
// at its line, with its message.
func TestSlurmPlanRefusals(t *testing.T) {
	for _, c := range []struct {
		name, from, to, want string
	}{
		{"roles need more nodes", "nodes = 2\nserve", "nodes = 3\nserve", `plan.toml:25:1: engine "disagg": its roles need 4 nodes, [slurm] nodes = 3`},
		{"no slurm nodes", "nodes = 3\nskew", "skew", "[slurm] has no nodes"},
		{"role nodes 0", "nodes = 1\nserve", "nodes = 0\nserve", "role prefill: nodes 0: want at least 1"},
		{"bad skew", `skew_bound = "50ms"`, `skew_bound = "soon"`, `skew_bound "soon": want a positive duration`},
		{"node in bench", `"--base-url", "{base_url}"`, `"--base-url", "{node}"`, "placeholder {node} in \"{node}\" has no value in [bench] command"},
		{"serve beside roles", "name = \"disagg\"\n", "name = \"disagg\"\nserve = [\"x\"]\n", "serve beside [[engine.role]]"},
		{"duplicate role", `name = "decode"`, `name = "prefill"`, `role name "prefill" is given twice in engine "disagg"`},
		{"no role serve", "serve = [\"vllm\", \"serve\", \"{model}\", \"--port\", \"{port}\", \"--node-rank\"", "xserve = [\"vllm\", \"serve\", \"{model}\", \"--port\", \"{port}\", \"--node-rank\"", "unknown key engine.role.xserve"},
		{"ready path and url", `ready = { path = "/health", timeout = "20m" }`, `ready = { path = "/health", url = "http://x/", timeout = "20m" }`, "ready has both path and url"},
	} {
		t.Run(c.name, func(t *testing.T) {
			text := strings.Replace(slurmPlan, c.from, c.to, 1)
			if text == slurmPlan {
				t.Fatalf("%q is not in the plan", c.from)
			}
			_, err := Parse("plan.toml", []byte(text))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	// Without [slurm]: roles, the Slurm placeholders and ready.url are
	// refused.
	for _, c := range []struct{ from, to, want string }{
		{`serve = ["vllm", "serve", "{model}", "--port", "{port}"]`, `serve = ["vllm", "serve", "{model}", "--port", "{port}", "{head}"]`, "placeholder {head} in \"{head}\" has a value only in a plan with [slurm]"},
		{`ready = { path = "/health", timeout = "10m" }`, `ready = { url = "http://h/health", timeout = "10m" }`, "ready.url is for a [slurm] plan"},
		{"[bench]", "[[engine.role]]\nname = \"r\"\nnodes = 1\nserve = [\"x\"]\n\n[bench]", "[[engine.role]] without a [slurm] table"},
	} {
		text := strings.Replace(goodPlan, c.from, c.to, 1)
		if _, err := Parse("plan.toml", []byte(text)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("got %v, want %q", err, c.want)
		}
	}
}

// TestFindAllocation: outside an allocation a [slurm] plan is refused
// naming SLURM_JOB_ID; an allocation with fewer nodes than the plan
// needs is refused before anything runs, naming its nodes and the need.
func TestFindAllocation(t *testing.T) {
	p, err := Parse("plan.toml", []byte(slurmPlan))
	if err != nil {
		t.Fatal(err)
	}
	env := func(m map[string]string) func(string) string { return func(k string) string { return m[k] } }
	_, err = FindAllocation(p, env(nil))
	if ee, ok := err.(*ExitError); !ok || ee.Code != ExitUsage || !strings.Contains(err.Error(), "plan.toml has [slurm] and SLURM_JOB_ID is not set: this is not inside a Slurm allocation") {
		t.Errorf("outside: %v", err)
	}
	_, err = FindAllocation(p, env(map[string]string{"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "node[1-2]"}))
	if ee, ok := err.(*ExitError); !ok || ee.Code != ExitUsage || !strings.Contains(err.Error(), "the allocation (job 7) has 2 node(s), node1,node2; the plan needs 3 ([slurm] nodes = 3; engine disagg's roles need 3)") {
		t.Errorf("too few: %v", err)
	}
	a, err := FindAllocation(p, env(map[string]string{"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "node[1-4]"}))
	if err != nil || a.JobID != "7" || strings.Join(a.Nodes, ",") != "node1,node2,node3,node4" {
		t.Errorf("%+v %v", a, err)
	}
}

// TestDryRunSlurm: a [slurm] plan's dry run shows each role on its nodes
// (NODE1… outside an allocation), {head} expanded, {node} and
// {node_rank} as written (they take their value on each node).
func TestDryRunSlurm(t *testing.T) {
	t.Setenv("SLURM_JOB_ID", "")
	p, err := Parse("plan.toml", []byte(slurmPlan))
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	DryRun(&b, p, 1, "")
	for _, want := range []string{
		"  role prefill on NODE1: serve: vllm serve meta-llama/Llama-3.1-8B-Instruct --port 8000 --node-rank '{node_rank}'\n",
		"  role decode on NODE2,NODE3: serve: vllm serve meta-llama/Llama-3.1-8B-Instruct --data-parallel-address NODE1 --role=decode --nnodes 2 --host '{node}'\n",
		"  role decode ready: GET http://NODE1:8000/health, 200 twice in a row within 20m0s\n",
		"  ready: GET http://NODE1:8000/health, 200 twice in a row within 20m0s\n",
		"--base-url http://NODE1:8000 ",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("no %q in\n%s", want, b.String())
		}
	}
}
