package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/clockgate/clockgate/grid"
)

// The examples of README.md and docs/*.md are run by TestDocsExamples. A
// fenced block preceded by a line
//
//	<!-- run: NAME [OPTION…] -->
//
// is run; the blocks of one page with one NAME are one script, run in
// order in one shell (bash, -e and pipefail), in a fresh directory holding
// a link to each top-level entry of the repository. A block marked
//
//	<!-- run: later NAME [OPTION…] -->
//
// documents a feature not in this build yet: it is parsed and listed as
// pending, and run only when CLOCKGATE_DOCS_LATER=1. Options:
//
//	exit=N       the block exits N (default 0)
//	bg           the block is a server started in another shell: it runs
//	             in the background until the script ends
//	ready=PORT   after a bg block, wait (up to 30 s) until 127.0.0.1:PORT
//	             accepts connections
//	stopbg       before the block, stop the bg blocks still running (SIGINT,
//	             as Ctrl-C in their shell) and wait for them
//	serves       the block starts servers itself (clockgate grid): the
//	             script holds the examples' ports, as one with a bg block
//	bench=S      the fake bench of this script runs S seconds
//	gpus=N       the fake nvidia-smi of this script has N GPUs (default 1)
//	file=PATH    the block is not run: it is written to PATH (a plan)
//	tree=DIR:SCENARIO  before the script, testdata/trees/SCENARIO is
//	             copied to DIR
//	creates=PATH the block must leave PATH behind (repeatable)
//	needs=CMD    the script is skipped, saying so, where CMD is not on PATH
//
// The shell finds first on its PATH: clockgate (this test binary, run as
// the command), nvidia-smi (the fake, sampler/testdata/fakesmi, one GPU,
// busy), vllm and python3 (fakes: `vllm serve` and `python3 -m
// sglang.launch_server` listen on --port, answer /health and /v1/models,
// and are listed by the fake nvidia-smi as computing on GPU 0; `vllm bench
// serve` runs for CLOCKGATE_DOCS_BENCH_S seconds, default 1, and writes a
// vLLM result file as --save-result does). `go run ./cmd/clockgate` in a
// block runs the same binary. record and sample read through the fake
// nvidia-smi (--backend nvidia-smi is added where a block gives no
// --backend) so that a box with a real NVML still runs the fakes, and so
// does grid, whose waits are shortened (docsGridTiming).

const (
	docsFakesEnv = "CLOCKGATE_DOCS_FAKES"
	docsLaterEnv = "CLOCKGATE_DOCS_LATER"
	docsAppsEnv  = "CLOCKGATE_DOCS_APPS"
	docsPyEnv    = "CLOCKGATE_DOCS_PYTHON3"
	docsBenchEnv = "CLOCKGATE_DOCS_BENCH_S"
	docsGPUUUID  = "GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30" // the fake nvidia-smi's GPU 0
	// docsGridTiming shortens a grid's waits on the fakes (grid.TimingEnv):
	// the idle read and the slope window to 1 s, whose fake GPU holds one
	// temperature; the plan's cooldown bounds apply as written.
	docsGridTiming = "idle=1s,slope=1s,poll=100ms,ready=100ms,grace=2s,wait=5s"
)

func init() {
	if os.Getenv(docsFakesEnv) != "1" {
		return
	}
	args := os.Args[1:]
	switch filepath.Base(os.Args[0]) {
	case "clockgate":
		if len(args) > 0 && (args[0] == "record" || args[0] == "sample" || args[0] == "grid") && !hasBackend(args) {
			args = append([]string{args[0], "--backend", "nvidia-smi"}, args[1:]...)
		}
		os.Exit(Main(args, os.Stdin, os.Stdout, os.Stderr))
	case "vllm":
		os.Exit(fakeVLLM(args))
	case "python3":
		if len(args) >= 2 && args[0] == "-m" && args[1] == "sglang.launch_server" {
			os.Exit(fakeServe("sglang::scheduler", args[2:]))
		}
		real := os.Getenv(docsPyEnv)
		if real == "" {
			fmt.Fprintln(os.Stderr, "fake python3: no python3 on this box")
			os.Exit(127)
		}
		err := syscall.Exec(real, append([]string{real}, args...), os.Environ())
		fmt.Fprintln(os.Stderr, "fake python3:", err)
		os.Exit(127)
	}
}

func hasBackend(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if a == "--backend" || strings.HasPrefix(a, "--backend=") {
			return true
		}
	}
	return false
}

// fakeVLLM stands in for `vllm serve` and `vllm bench serve`.
func fakeVLLM(args []string) int {
	switch {
	case len(args) >= 1 && args[0] == "serve":
		return fakeServe("vllm", args[1:])
	case len(args) >= 2 && args[0] == "bench" && args[1] == "serve":
		return fakeBench(args[2:])
	}
	fmt.Fprintf(os.Stderr, "fake vllm: only serve and bench serve are faked, not %q\n", args)
	return 2
}

// fakeServe listens on --port (default 8000) and answers as a server that
// is ready, listed by the fake nvidia-smi as a compute process on GPU 0
// until SIGTERM or SIGINT.
func fakeServe(name string, args []string) int {
	port := "8000"
	for i := 0; i < len(args); i++ {
		if args[i] == "--port" && i+1 < len(args) {
			port = args[i+1]
		} else if v, ok := strings.CutPrefix(args[i], "--port="); ok {
			port = v
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:"+port)
	if err != nil {
		fmt.Fprintln(os.Stderr, "fake server:", err)
		return 1
	}
	apps := os.Getenv(docsAppsEnv)
	line := fmt.Sprintf("%d, %s, %s\n", os.Getpid(), name, docsGPUUUID)
	if apps != "" {
		f, err := os.OpenFile(apps, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
		if err == nil {
			f.WriteString(line)
			f.Close()
		}
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/health", func(w http.ResponseWriter, r *http.Request) {})
	mux.HandleFunc("/v1/models", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, `{"object": "list", "data": []}`)
	})
	srv := &http.Server{Handler: mux}
	go srv.Serve(ln)
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGTERM, syscall.SIGINT)
	<-sig
	srv.Shutdown(context.Background())
	if apps != "" {
		if data, err := os.ReadFile(apps); err == nil {
			os.WriteFile(apps, []byte(strings.Replace(string(data), line, "", 1)), 0o644)
		}
	}
	return 0
}

// fakeBench runs `vllm bench serve`'s flags that the docs use and writes
// one result object as vLLM's --save-result does.
func fakeBench(args []string) int {
	valued := map[string]bool{"--model": true, "--max-concurrency": true, "--request-rate": true,
		"--result-dir": true, "--result-filename": true, "--base-url": true, "--port": true,
		"--host": true, "--num-prompts": true, "--backend": true, "--seed": true,
		"--dataset-name": true, "--random-input-len": true, "--random-output-len": true}
	flags := map[string]string{}
	for i := 0; i < len(args); i++ {
		a := args[i]
		k, v, eq := strings.Cut(a, "=")
		switch {
		case valued[k] && eq:
			flags[k] = v
		case valued[a] && i+1 < len(args):
			flags[a] = args[i+1]
			i++
		case a == "--save-result" || a == "--ignore-eos":
			flags[a] = "true"
		default:
			fmt.Fprintf(os.Stderr, "fake vllm bench serve: unexpected argument %q\n", a)
			return 2
		}
	}
	model := flags["--model"]
	if model == "" {
		fmt.Fprintln(os.Stderr, "fake vllm bench serve: --model is required")
		return 2
	}
	secs := 1.0
	if s := os.Getenv(docsBenchEnv); s != "" {
		if f, err := strconv.ParseFloat(s, 64); err == nil {
			secs = f
		}
	}
	prompts := 1000
	if s, ok := flags["--num-prompts"]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "fake vllm bench serve: --num-prompts %q\n", s)
			return 2
		}
		prompts = n
	}
	var conc any // nil: no bound, as vLLM writes it
	cs := "None"
	if s, ok := flags["--max-concurrency"]; ok {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 {
			fmt.Fprintf(os.Stderr, "fake vllm bench serve: --max-concurrency %q\n", s)
			return 2
		}
		conc, cs = n, s
	}
	var rate any = "inf"
	if s, ok := flags["--request-rate"]; ok && s != "inf" {
		f, err := strconv.ParseFloat(s, 64)
		if err != nil || f <= 0 {
			fmt.Fprintf(os.Stderr, "fake vllm bench serve: --request-rate %q\n", s)
			return 2
		}
		rate = f
	}
	start := time.Now()
	time.Sleep(time.Duration(secs * float64(time.Second)))
	dur := time.Since(start).Seconds()
	date := time.Now().Format("20060102-150405")
	out := prompts * 128
	res := map[string]any{
		"date": date, "backend": "vllm", "endpoint_type": "vllm", "label": nil,
		"model_id": model, "tokenizer_id": model, "num_prompts": prompts,
		"request_rate": rate, "burstiness": 1.0, "max_concurrency": conc,
		"duration": dur, "completed": prompts, "failed": 0,
		"total_input_tokens": prompts * 1024, "total_output_tokens": out,
		"request_throughput": float64(prompts) / dur, "request_goodput": nil,
		"output_throughput": float64(out) / dur, "total_token_throughput": float64(prompts*(1024+128)) / dur,
		"mean_ttft_ms": 20.0, "median_ttft_ms": 20.0, "std_ttft_ms": 1.0, "p99_ttft_ms": 25.0,
		"mean_tpot_ms": 10.0, "median_tpot_ms": 10.0, "std_tpot_ms": 0.5, "p99_tpot_ms": 12.0,
	}
	fmt.Printf("============ Serving Benchmark Result (fake) ============\nSuccessful requests: %d\nOutput token throughput (tok/s): %.2f\n", prompts, float64(out)/dur)
	if flags["--save-result"] == "" {
		return 0
	}
	name := flags["--result-filename"]
	if name == "" {
		base := model[strings.LastIndex(model, "/")+1:]
		name = fmt.Sprintf("vllm-%vqps-concurrency%s-%s-%s.json", rate, cs, base, date)
	}
	dir := flags["--result-dir"]
	if dir != "" {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			fmt.Fprintln(os.Stderr, "fake vllm bench serve:", err)
			return 1
		}
	}
	data, _ := json.Marshal(res)
	if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "fake vllm bench serve:", err)
		return 1
	}
	return 0
}

// docBlock is one marked fenced block.
type docBlock struct {
	page, name string
	line       int // the marker's line
	later      bool
	exit       int
	bg         bool
	ready      string
	stopbg     bool
	serves     bool
	bench      string
	gpus       int
	file       string
	trees      []string // DIR:SCENARIO
	creates    []string
	needs      []string
	text       string
}

var runMarker = regexp.MustCompile(`^<!-- run: (.*) -->$`)

// docPages are the pages whose examples run: README.md and docs/*.md.
func docPages(t *testing.T) []string {
	t.Helper()
	pages, err := filepath.Glob("../../docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	return append([]string{"../../README.md"}, pages...)
}

// parseDocBlocks reads the marked blocks of one page; a marker not
// followed by a fenced block, or with an option it does not know, is an
// error naming page and line.
func parseDocBlocks(page string, data []byte) ([]docBlock, error) {
	lines := strings.Split(string(data), "\n")
	rel := strings.TrimPrefix(page, "../../")
	var out []docBlock
	for i := 0; i < len(lines); i++ {
		m := runMarker.FindStringSubmatch(lines[i])
		if m == nil {
			if strings.HasPrefix(lines[i], "<!-- run") {
				return nil, fmt.Errorf("%s:%d: a run marker must read <!-- run: [later] NAME [OPTION…] -->", rel, i+1)
			}
			continue
		}
		b := docBlock{page: rel, line: i + 1}
		f := strings.Fields(m[1])
		if len(f) > 0 && f[0] == "later" {
			b.later, f = true, f[1:]
		}
		if len(f) == 0 || strings.Contains(f[0], "=") {
			return nil, fmt.Errorf("%s:%d: the run marker names no block", rel, i+1)
		}
		b.name = f[0]
		for _, o := range f[1:] {
			k, v, _ := strings.Cut(o, "=")
			switch {
			case o == "bg":
				b.bg = true
			case k == "gpus":
				n, err := strconv.Atoi(v)
				if err != nil || n < 1 {
					return nil, fmt.Errorf("%s:%d: %s: want gpus=N", rel, i+1, o)
				}
				b.gpus = n
			case o == "stopbg":
				b.stopbg = true
			case o == "serves":
				b.serves = true
			case k == "bench":
				if f, err := strconv.ParseFloat(v, 64); err != nil || f <= 0 {
					return nil, fmt.Errorf("%s:%d: %s: want bench=SECONDS", rel, i+1, o)
				}
				b.bench = v
			case k == "exit":
				n, err := strconv.Atoi(v)
				if err != nil {
					return nil, fmt.Errorf("%s:%d: %s: want exit=N", rel, i+1, o)
				}
				b.exit = n
			case k == "ready" && v != "":
				b.ready = v
			case k == "file" && v != "":
				b.file = v
			case k == "tree" && strings.Contains(v, ":"):
				b.trees = append(b.trees, v)
			case k == "creates" && v != "":
				b.creates = append(b.creates, v)
			case k == "needs" && v != "":
				b.needs = append(b.needs, v)
			default:
				return nil, fmt.Errorf("%s:%d: unknown run option %q", rel, i+1, o)
			}
		}
		if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "```") {
			return nil, fmt.Errorf("%s:%d: the run marker is not followed by a fenced block", rel, i+1)
		}
		j := i + 2
		for j < len(lines) && lines[j] != "```" {
			j++
		}
		if j == len(lines) {
			return nil, fmt.Errorf("%s:%d: the fenced block is not closed", rel, i+2)
		}
		b.text = strings.Join(lines[i+2:j], "\n") + "\n"
		if strings.TrimSpace(b.text) == "" {
			return nil, fmt.Errorf("%s:%d: the block is empty", rel, i+1)
		}
		out = append(out, b)
		i = j
	}
	return out, nil
}

// docScript is the blocks of one page with one name, in order.
type docScript struct {
	key    string // page NAME
	blocks []docBlock
}

func (s docScript) listens() bool {
	for _, b := range s.blocks {
		if b.bg || b.serves {
			return true
		}
	}
	return false
}

func (s docScript) gpus() int {
	n := 1
	for _, b := range s.blocks {
		n = max(n, b.gpus)
	}
	return n
}

func (s docScript) later() bool {
	for _, b := range s.blocks {
		if b.later {
			return true
		}
	}
	return false
}

func docScripts(t *testing.T) []docScript {
	t.Helper()
	var scripts []docScript
	idx := map[string]int{}
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		blocks, err := parseDocBlocks(page, data)
		if err != nil {
			t.Fatal(err)
		}
		for _, b := range blocks {
			key := b.page + " " + b.name
			i, ok := idx[key]
			if !ok {
				i = len(scripts)
				idx[key] = i
				scripts = append(scripts, docScript{key: key})
			}
			scripts[i].blocks = append(scripts[i].blocks, b)
		}
	}
	return scripts
}

// TestDocsRunMarkers: the parser refuses what it cannot run, naming the
// line, so a mistyped marker is never a block silently skipped.
func TestDocsRunMarkers(t *testing.T) {
	for _, c := range []struct{ doc, want string }{
		{"x\n<!-- run: a -->\ntext\n", "p.md:2: the run marker is not followed by a fenced block"},
		{"<!-- run: a exits=1 -->\n```sh\ntrue\n```\n", `p.md:1: unknown run option "exits=1"`},
		{"<!-- run: later -->\n```sh\ntrue\n```\n", "p.md:1: the run marker names no block"},
		{"<!-- run a -->\n```sh\ntrue\n```\n", "p.md:1: a run marker must read <!-- run: [later] NAME [OPTION…] -->"},
		{"<!-- run: a -->\n```sh\ntrue\n", "p.md:2: the fenced block is not closed"},
		{"<!-- run: a -->\n```sh\n\n```\n", "p.md:1: the block is empty"},
		{"<!-- run: a bench=0 -->\n```sh\ntrue\n```\n", "p.md:1: bench=0: want bench=SECONDS"},
	} {
		_, err := parseDocBlocks("../../p.md", []byte(c.doc))
		if err == nil || err.Error() != c.want {
			t.Errorf("%q: got %v, want %s", c.doc, err, c.want)
		}
	}
	bs, err := parseDocBlocks("../../p.md", []byte("<!-- run: later g bg ready=8000 exit=3 creates=a tree=e:clean-grid needs=jq file=p.toml stopbg serves bench=2.5 gpus=4 -->\n```toml\nx = 1\n```\n"))
	if err != nil || len(bs) != 1 {
		t.Fatalf("%v %v", bs, err)
	}
	b := bs[0]
	if !b.later || b.name != "g" || !b.bg || b.ready != "8000" || b.exit != 3 || b.file != "p.toml" || !b.stopbg || !b.serves || b.bench != "2.5" || b.gpus != 4 ||
		!slices.Equal(b.creates, []string{"a"}) || !slices.Equal(b.trees, []string{"e:clean-grid"}) || !slices.Equal(b.needs, []string{"jq"}) || b.text != "x = 1\n" {
		t.Errorf("parsed %+v", b)
	}
}

// TestDocsExamples runs every marked example of README.md and docs/*.md
// against the fakes (see the top of this file), and lists the pending ones.
func TestDocsExamples(t *testing.T) {
	scripts := docScripts(t)
	runLater := os.Getenv(docsLaterEnv) == "1"
	var run, pending []string
	for _, s := range scripts {
		if s.later() && !runLater {
			pending = append(pending, s.key)
		} else {
			run = append(run, s.key)
		}
	}
	for _, k := range pending {
		t.Logf("pending (marked later, run with %s=1): %s", docsLaterEnv, k)
	}
	// The front door's first command is one of them, whatever else is.
	if !slices.Contains(run, "README.md fresh-machine") {
		t.Fatalf("README.md's fresh-machine example is not run; run: %q", run)
	}
	if len(run) < 5 {
		t.Fatalf("only %d examples run: %q", len(run), run)
	}

	repo, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	tools := newRecTools(t)
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	realPy, _ := exec.LookPath("python3")
	for _, s := range scripts {
		if s.later() && !runLater {
			continue
		}
		t.Run(s.key, func(t *testing.T) {
			// A script that starts a server holds its port: those run one
			// at a time, the others beside them, and one at a time on the
			// machine too (a second test run beside this one waits for the
			// port rather than fail for it).
			if !s.listens() {
				t.Parallel()
			} else {
				holdDocsPortLock(t)
			}
			runDocScript(t, s, repo, docsEnv(t, tools, exe, realPy, s.gpus()))
		})
	}
}

// holdDocsPortLock takes the machine's lock on the ports the examples'
// servers listen on (the README's 8000) until the test ends: an flock on
// a file in the temporary directory, which waits for another process's.
func holdDocsPortLock(t *testing.T) {
	t.Helper()
	f, err := os.OpenFile(filepath.Join(os.TempDir(), "clockgate-docs-ports.lock"), os.O_RDWR|os.O_CREATE, 0o666)
	if err != nil {
		t.Fatal(err)
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() }) // closing releases the lock
}

// docsEnv makes one script's fakes: a directory first on PATH with
// clockgate, vllm and python3 (this test binary) and the fake nvidia-smi,
// whose compute processes are the fake servers running.
func docsEnv(t *testing.T, tools *recTools, exe, realPy string, gpus int) []string {
	t.Helper()
	bin := t.TempDir()
	for _, n := range []string{"clockgate", "vllm", "python3"} {
		if err := os.Symlink(exe, filepath.Join(bin, n)); err != nil {
			t.Fatal(err)
		}
	}
	// The fake nvidia-smi reads fakesmi.json beside its own executable,
	// which a symbolic link would resolve away: a hard link.
	if err := os.Link(tools.fakeSMI, filepath.Join(bin, "nvidia-smi")); err != nil {
		t.Fatal(err)
	}
	apps := filepath.Join(bin, "apps.txt")
	if err := os.WriteFile(apps, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(bin, "fakesmi.json"), []byte(fmt.Sprintf(`{"gpus": %d, "compute_apps": "apps.txt"}`, gpus)), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{docsFakesEnv + "=1", docsAppsEnv + "=" + apps, docsPyEnv + "=" + realPy,
		bootIDFileEnv + "=" + tools.bootFile, "PATH=" + bin + ":" + os.Getenv("PATH"),
		grid.TimingEnv + "=" + docsGridTiming, probeLatencyEnv + "=1ns"}
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "PATH", bootIDFileEnv, "CUDA_VISIBLE_DEVICES", "CUDA_DEVICE_ORDER", docsFakesEnv, recAsMainEnv, grid.TimingEnv, probeLatencyEnv:
			continue
		}
		env = append(env, kv)
	}
	return env
}

// clockgateGoRun is how the docs run clockgate from a checkout.
var clockgateGoRun = regexp.MustCompile(`\bgo run \./cmd/clockgate\b`)

func runDocScript(t *testing.T, s docScript, repo string, env []string) {
	// The directory stands for a checkout: a link to each of the
	// repository's top-level entries, so `go build ./sampler/…` and
	// `testdata/trees/…` work, and whatever a block writes lands beside
	// them, never in the repository.
	dir := t.TempDir()
	top, err := os.ReadDir(repo)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range top {
		if e.Name() == ".git" {
			continue
		}
		if err := os.Symlink(filepath.Join(repo, e.Name()), filepath.Join(dir, e.Name())); err != nil {
			t.Fatal(err)
		}
	}
	var sh strings.Builder
	// A bg block runs as a job of its own (set -m: its own process group,
	// SIGINT not ignored), as a server started in another terminal; its
	// group is named in the file bgpids, and stopped at the end whatever
	// happened, by the script and, should the script be killed, by the
	// test.
	sh.WriteString("set -eo pipefail\nset -m\nbgpids=()\n" +
		"trap 'for p in \"${bgpids[@]}\"; do kill -TERM -- -\"$p\" 2>/dev/null || true; done' EXIT\n")
	for i, b := range s.blocks {
		for _, need := range b.needs {
			if _, err := exec.LookPath(need); err != nil {
				t.Skipf("%s:%d needs %s, which is not on PATH", b.page, b.line, need)
			}
		}
		if b.ready != "" {
			// The example's server needs its port; a listener already
			// there would answer in its place.
			ln, err := net.Listen("tcp", "127.0.0.1:"+b.ready)
			if err != nil {
				t.Fatalf("%s:%d: the example's server needs port %s: %v", b.page, b.line, b.ready, err)
			}
			ln.Close()
		}
		for _, tr := range b.trees {
			to, scenario, _ := strings.Cut(tr, ":")
			if err := os.CopyFS(filepath.Join(dir, to), os.DirFS(filepath.Join(repo, "testdata", "trees", scenario))); err != nil {
				t.Fatalf("%s:%d: tree=%s: %v", b.page, b.line, tr, err)
			}
		}
		if b.file != "" {
			if err := os.WriteFile(filepath.Join(dir, b.file), []byte(b.text), 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		text := clockgateGoRun.ReplaceAllString(b.text, "clockgate")
		fmt.Fprintf(&sh, "echo '### block %d (%s:%d)' >&2\n", i+1, b.page, b.line)
		if b.bench != "" {
			fmt.Fprintf(&sh, "export %s=%s\n", docsBenchEnv, b.bench)
		}
		if b.stopbg {
			sh.WriteString("for p in \"${bgpids[@]}\"; do kill -INT -- -\"$p\" 2>/dev/null || true; wait \"$p\" || true; done\nbgpids=()\n")
		}
		switch {
		case b.bg:
			fmt.Fprintf(&sh, "{\n%s} >bg%d.log 2>&1 &\nbgpids+=($!)\necho $! >>bgpids\n", text, i+1)
			if b.ready != "" {
				fmt.Fprintf(&sh, "for _ in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/%[1]s) 2>/dev/null && break; sleep 0.1; done\n"+
					"(exec 3<>/dev/tcp/127.0.0.1/%[1]s) 2>/dev/null || { echo 'nothing listens on port %[1]s' >&2; exit 96; }\n", b.ready)
			}
		case b.exit != 0:
			fmt.Fprintf(&sh, "set +e\n(\n%s)\nrc=$?\nset -e\n[ $rc -eq %d ] || { echo \"%s:%d exited $rc, want %d\" >&2; exit 97; }\n",
				text, b.exit, b.page, b.line, b.exit)
		default:
			sh.WriteString(text)
		}
		for _, c := range b.creates {
			fmt.Fprintf(&sh, "[ -e %q ] || { echo '%s:%d did not create %s' >&2; exit 98; }\n", c, b.page, b.line, c)
		}
	}
	// At the end, the servers are stopped, and so is every other job a
	// block left running (a sampler started with &), as the user's shell
	// would be closed: each is waited for, so nothing writes into the
	// directory after the test.
	sh.WriteString("for p in \"${bgpids[@]}\"; do kill -TERM -- -\"$p\" 2>/dev/null || true; wait \"$p\" || true; done\nbgpids=()\n" +
		"for p in $(jobs -p); do kill -TERM -- -\"$p\" 2>/dev/null || true; wait \"$p\" || true; done\n")

	cmd := exec.Command("bash", "-c", sh.String())
	cmd.Dir = dir
	cmd.Env = env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 5 * time.Second
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err = <-done:
	case <-time.After(3 * time.Minute):
		killGroup(cmd.Process.Pid)
		err = <-done
		t.Errorf("%s: still running after 3 minutes", s.key)
	}
	killGroup(cmd.Process.Pid)
	if data, rerr := os.ReadFile(filepath.Join(dir, "bgpids")); rerr == nil {
		for _, f := range strings.Fields(string(data)) {
			if pgid, perr := strconv.Atoi(f); perr == nil && pgid > 1 {
				killGroup(pgid)
			}
		}
	}
	if err != nil {
		t.Errorf("%s: %v\nscript:\n%s\noutput:\n%s", s.key, err, sh.String(), tail(out.String(), 60))
	}
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = append([]string{"…"}, lines[len(lines)-n:]...)
	}
	return strings.Join(lines, "\n")
}

// readmeMaxLines bounds README.md: it is a front door (what clockgate is,
// install, a first grid end to end, the report, where to read on), and the
// reference lives in docs/ (SPEC §11.1: under 400 lines).
const readmeMaxLines = 400

// TestReadmeIsAFrontDoor: README.md stays under readmeMaxLines lines.
func TestReadmeIsAFrontDoor(t *testing.T) {
	data, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(data), "\n"); n >= readmeMaxLines {
		t.Errorf("README.md has %d lines, not under %d: move reference text to docs/ and link it", n, readmeMaxLines)
	}
}

// TestDocsLinksResolve: every relative link of README.md and docs/*.md
// names a file that exists and, with #anchor, a heading of that page (as
// GitHub makes its anchor); every docs page is linked from README.md.
func TestDocsLinksResolve(t *testing.T) {
	anchors := map[string]map[string]bool{}
	anchorsOf := func(path string) map[string]bool {
		if a, ok := anchors[path]; ok {
			return a
		}
		data, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		a := headingAnchors(string(data))
		anchors[path] = a
		return a
	}
	linked := map[string]bool{}
	n := 0
	for _, page := range docPages(t) {
		data, err := os.ReadFile(page)
		if err != nil {
			t.Fatal(err)
		}
		rel := strings.TrimPrefix(page, "../../")
		for _, l := range markdownLinks(string(data)) {
			if strings.Contains(l.target, "://") || strings.HasPrefix(l.target, "mailto:") {
				continue
			}
			n++
			file, anchor, _ := strings.Cut(l.target, "#")
			path := page
			if file != "" {
				path = filepath.Join(filepath.Dir(page), file)
			}
			if _, err := os.Stat(path); err != nil {
				t.Errorf("%s:%d: link %q: %v", rel, l.line, l.target, err)
				continue
			}
			if rel == "README.md" {
				linked[filepath.Clean(path)] = true
			}
			if anchor != "" {
				if !strings.HasSuffix(path, ".md") {
					t.Errorf("%s:%d: link %q: an anchor into a file that is not a page", rel, l.line, l.target)
				} else if !anchorsOf(path)[anchor] {
					t.Errorf("%s:%d: link %q: %s has no heading with anchor #%s", rel, l.line, l.target, strings.TrimPrefix(path, "../../"), anchor)
				}
			}
		}
	}
	if n < 20 {
		t.Errorf("found %d relative links; the link reader is broken", n)
	}
	for _, page := range docPages(t)[1:] {
		if !linked[filepath.Clean(page)] {
			t.Errorf("README.md does not link %s", strings.TrimPrefix(page, "../../"))
		}
	}
}

type mdLink struct {
	line   int
	target string
}

var (
	mdLinkRe   = regexp.MustCompile(`\]\(([^()\s]+)\)`)
	inlineCode = regexp.MustCompile("`[^`]*`")
)

// markdownLinks returns the targets of inline links and images outside
// fenced blocks and code spans.
func markdownLinks(doc string) []mdLink {
	var out []mdLink
	fenced := false
	sc := bufio.NewScanner(strings.NewReader(doc))
	sc.Buffer(nil, 1<<20)
	for i := 1; sc.Scan(); i++ {
		line := sc.Text()
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced {
			continue
		}
		line = inlineCode.ReplaceAllString(line, "")
		for _, m := range mdLinkRe.FindAllStringSubmatch(line, -1) {
			out = append(out, mdLink{line: i, target: m[1]})
		}
	}
	return out
}

// headingAnchors gives the anchors GitHub makes for a page's headings:
// the heading's text lowercased, every character that is not a letter, a
// digit, a space, '-' or '_' removed, spaces made '-'; a repeated anchor
// gains -1, -2, ….
func headingAnchors(doc string) map[string]bool {
	out := map[string]bool{}
	seen := map[string]int{}
	fenced := false
	for _, line := range strings.Split(doc, "\n") {
		if strings.HasPrefix(strings.TrimSpace(line), "```") {
			fenced = !fenced
			continue
		}
		if fenced || !strings.HasPrefix(line, "#") {
			continue
		}
		text := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(text, " ") {
			continue
		}
		a := githubSlug(strings.TrimSpace(text))
		if k := seen[a]; k > 0 {
			out[fmt.Sprintf("%s-%d", a, k)] = true
		} else {
			out[a] = true
		}
		seen[a]++
	}
	return out
}

var mdLinkText = regexp.MustCompile(`\[([^\]]*)\]\([^)]*\)`)

func githubSlug(heading string) string {
	heading = mdLinkText.ReplaceAllString(heading, "$1")
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicodeLetterOrDigit(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

func unicodeLetterOrDigit(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }

// TestGitHubSlug: the anchors GitHub gives the headings these pages link.
func TestGitHubSlug(t *testing.T) {
	for h, want := range map[string]string{
		"Power-managed clocks (datacenter GPUs under load)": "power-managed-clocks-datacenter-gpus-under-load",
		"Is the difference real? Significance across legs":  "is-the-difference-real-significance-across-legs",
		"The one-liner: `record`":                           "the-one-liner-record",
		"AMD Instinct GPUs (amd-smi)":                       "amd-instinct-gpus-amd-smi",
		"Leg: the clock record and its stream":              "leg-the-clock-record-and-its-stream",
		"Real captures as streams: `scripts/smi2stream`":    "real-captures-as-streams-scriptssmi2stream",
		"See [this](x.md) — ok":                             "see-this--ok",
	} {
		if got := githubSlug(h); got != want {
			t.Errorf("%q: got %q, want %q", h, got, want)
		}
	}
	a := headingAnchors("# A\n```\n# B\n```\n## A\n#not\n")
	if !a["a"] || !a["a-1"] || a["b"] || a["not"] || len(a) != 2 {
		t.Errorf("anchors %v", a)
	}
	ls := markdownLinks("see [x](a.md#b) and `[y](c.md)`\n```\n[z](d.md)\n```\n![p](e.png)\n")
	if len(ls) != 2 || ls[0].target != "a.md#b" || ls[1].target != "e.png" || ls[1].line != 5 {
		t.Errorf("links %+v", ls)
	}
}
