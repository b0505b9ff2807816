package grid

import (
	"errors"
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
