package grid

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/clockgate/clockgate/ratio"
)

// gateGrid is a grid of one GPU idle at 40 °C, judged by the plan's
// cooldown (2.0 °C above idle, 0.5 °C/min) over a 30 s window.
func gateGrid(t *testing.T) *grid {
	p := mustPlan(t, goodPlan)
	return &grid{p: p, t: defaultTiming, idle: []float64{40}, uuids: []string{"GPU-a"}, indices: []int{0}, prog: newProgress(io.Discard, false, time.Now)}
}

// flat is n readings a second apart at temperatures given by f(i).
func readings(n int, f func(i int) float64) []reading {
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	rs := make([]reading, n)
	for i := range rs {
		rs[i] = reading{t: t0.Add(time.Duration(i) * time.Second), c: []float64{f(i)}}
	}
	return rs
}

// TestGateTemperatureBoundary: a GPU exactly at idle + above_idle_c
// passes; a tenth of a degree above is refused, the message naming the
// GPU, its temperature, the target and the idle temperature.
func TestGateTemperatureBoundary(t *testing.T) {
	g := gateGrid(t)
	why, tc, _ := g.gateVerdict(readings(31, func(int) float64 { return 42.0 }))
	if why != "" || tc[0] != 42 {
		t.Fatalf("42.0 °C, target 42.0: %q", why)
	}
	why, _, _ = g.gateVerdict(readings(31, func(int) float64 { return 42.1 }))
	if why != "GPU 0 at 42.1 °C, above the target 42.0 °C (idle 40.0 + 2.0)" {
		t.Fatalf("42.1 °C: %q", why)
	}
}

// TestGateSlopeBoundary: a GPU cooling at exactly max_slope passes; a
// faster one is refused, naming the slope and the window; readings that
// do not cover the window yet never pass.
func TestGateSlopeBoundary(t *testing.T) {
	g := gateGrid(t)
	// 0.5 °C/min, within the target all along.
	why, _, sl := g.gateVerdict(readings(31, func(i int) float64 { return 41.5 - 0.5*float64(i)/60 }))
	if why != "" || abs(sl[0]+0.5) > 1e-9 {
		t.Fatalf("-0.5 °C/min: %q %v", why, sl)
	}
	why, _, _ = g.gateVerdict(readings(31, func(i int) float64 { return 41.5 - 0.6*float64(i)/60 }))
	if why != "GPU 0 moving -0.60 °C/min over the last 30s, more than 0.50" {
		t.Fatalf("-0.6 °C/min: %q", why)
	}
	// Warming counts as unsettled too.
	why, _, _ = g.gateVerdict(readings(31, func(i int) float64 { return 40 + 0.6*float64(i)/60 }))
	if !strings.Contains(why, "moving +0.60 °C/min") {
		t.Fatalf("+0.6 °C/min: %q", why)
	}
	// Ten seconds of flat readings do not show a 30 s slope.
	why, _, _ = g.gateVerdict(readings(10, func(int) float64 { return 40 }))
	if why != "the slope needs 30s of readings" {
		t.Fatalf("10 s: %q", why)
	}
	// Only the last window counts: a hot start long ago does not.
	why, _, _ = g.gateVerdict(readings(100, func(i int) float64 {
		if i < 50 {
			return 70
		}
		return 40
	}))
	if why != "" {
		t.Fatalf("cool for the last 50 s: %q", why)
	}
}

func TestMedianAndSlope(t *testing.T) {
	if m := median([]float64{3, 1, 2}); m != 2 {
		t.Errorf("median %v", m)
	}
	if m := median([]float64{4, 1, 3, 2}); m != 2.5 {
		t.Errorf("median %v", m)
	}
	if s := slope(readings(61, func(i int) float64 { return 50 - float64(i)/60 }), 0); abs(s+1) > 1e-9 {
		t.Errorf("slope %v", s)
	}
}

func TestTimingFromEnv(t *testing.T) {
	tm, err := timingFrom("idle=2s,slope=1s,poll=50ms,ready=10ms,grace=3s,wait=4s")
	if err != nil || tm.idleRead != 2*time.Second || tm.slopeWindow != time.Second || tm.gatePoll != 50*time.Millisecond ||
		tm.readyPoll != 10*time.Millisecond || tm.stopGrace != 3*time.Second || tm.stopWait != 4*time.Second {
		t.Fatalf("%v %+v", err, tm)
	}
	if tm, _ := timingFrom(""); tm != defaultTiming || tm.idleRead != 30*time.Second || tm.stopGrace != 30*time.Second || tm.stopWait != 60*time.Second {
		t.Fatalf("default %+v", tm)
	}
	if _, err := timingFrom("idle=x"); err == nil {
		t.Fatal("accepted idle=x")
	}
}

func TestJournalTornLine(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "journal.jsonl")
	os.WriteFile(path, []byte(`{"event":"grid.start","t":"x"}`+"\n"+`{"event":"leg.id`), 0o644)
	ev, torn, err := ReadJournal(path)
	if err != nil || !torn || len(ev) != 1 {
		t.Fatalf("%v %v %v", ev, torn, err)
	}
	os.WriteFile(path, []byte(`{"event":"grid.start","t":"x"}`+"\n"+`{"event":"leg.id`+"\n"+`{"event":"grid.end","t":"x"}`+"\n"), 0o644)
	if _, _, err := ReadJournal(path); err == nil || !strings.HasPrefix(err.Error(), path+":2: not a journal event") {
		t.Fatalf("%v", err)
	}
	if ev, _, err := ReadJournal(filepath.Join(dir, "none")); ev != nil || err != nil {
		t.Fatal("a missing journal is not an empty grid")
	}
}

// TestResumeRefusals: a journal of another plan, boot, GPU set or driver
// is refused, naming each change.
func TestResumeRefusals(t *testing.T) {
	g := gateGrid(t)
	g.tree = t.TempDir()
	g.bootID, g.driver = "boot-1", "590.44.01"
	start := Event{Event: EvGridStart, PlanSHA256: g.p.SHA256, BootID: "boot-1", GPUUUIDs: []string{"GPU-a"}, Driver: "590.44.01", IdleTempC: []float64{40}}
	if err := g.checkResume([]Event{start}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		edit func(e *Event)
		want string
	}{
		{func(e *Event) { e.PlanSHA256 = "0123456789abcdef" }, "the plan (sha256 " + g.p.SHA256[:12] + ", the journal's 0123456789ab; the tree keeps no grid/plan.toml to compare it with key by key)"},
		{func(e *Event) { e.BootID = "boot-0" }, "the boot (boot-1, the journal's boot-0)"},
		{func(e *Event) { e.GPUUUIDs = []string{"GPU-b"} }, "the GPU set (GPU-a, the journal's GPU-b)"},
		{func(e *Event) { e.Driver = "580.1" }, "the driver (590.44.01, the journal's 580.1)"},
	} {
		e := start
		c.edit(&e)
		err := g.checkResume([]Event{e})
		if err == nil || !strings.Contains(err.Error(), "cannot be resumed: changed since it started: "+c.want) || err.(*ExitError).Code != ExitUsage {
			t.Errorf("%v, want %s", err, c.want)
		}
	}
}

// TestResumeByParsedPlan: resume compares the plan given against the one
// the grid started with (TREE/grid/plan.toml) as parsed: a changed
// comment, layout or spelling resumes, whatever the journal's hash of the
// bytes; a changed value is refused naming each key, old and new.
func TestResumeByParsedPlan(t *testing.T) {
	g := gateGrid(t)
	g.tree = t.TempDir()
	g.bootID, g.driver = "boot-1", "590.44.01"
	g.p.Data = []byte(goodPlan)
	if err := g.keepPlan(); err != nil {
		t.Fatal(err)
	}
	if data, err := os.ReadFile(filepath.Join(g.tree, "grid", "plan.toml")); err != nil || string(data) != goodPlan {
		t.Fatalf("kept plan %q %v", data, err)
	}
	start := Event{Event: EvGridStart, PlanSHA256: g.p.SHA256, BootID: "boot-1", GPUUUIDs: []string{"GPU-a"}, Driver: "590.44.01", IdleTempC: []float64{40}}
	relaid := strings.Replace(goodPlan, "port = 8000", "# the port both servers take\nport    =   8000   # comment", 1)
	relaid = strings.Replace(relaid, "above_idle_c = 2.0", "above_idle_c = 2e0", 1)
	relaid = strings.Replace(relaid, `ready = { path = "/health", timeout = "10m" }`+"\n\n[[engine]]\nname = \"sglang\"",
		"[engine.ready]\npath = \"/health\"\ntimeout = \"10m\"\n\n[[engine]]\nname = \"sglang\"", 1)
	g.p = mustPlan(t, relaid)
	if g.p.SHA256 == start.PlanSHA256 {
		t.Fatal("the relaid plan has the same bytes")
	}
	if err := g.checkResume([]Event{start}); err != nil {
		t.Fatalf("a changed comment and layout refused: %v", err)
	}
	changed := strings.Replace(goodPlan, "port = 8000", "port = 8001", 1)
	changed = strings.Replace(changed, `env = { VLLM_USE_V1 = "1" }`, `env = { VLLM_USE_V1 = "0", VLLM_LOGGING = "1" }`, 1)
	changed = strings.Replace(changed, `"{port}"]`+"\nready", `"{port}", "--tp", "1"]`+"\nready", 1)
	changed = strings.Replace(changed, `max_wait = "15m"`, `max_wait = "900s"`, 1)
	changed = strings.Replace(changed, `warmup = "8/inf"`+"\n", "", 1)
	g.p = mustPlan(t, changed)
	err := g.checkResume([]Event{start})
	want := "changed since it started: the plan (port: 8000, now 8001; " +
		`engine[1].env.VLLM_LOGGING: (not set), now "1"; engine[1].env.VLLM_USE_V1: "1", now "0"; ` +
		`engine[2].serve: ["python3", "-m", "sglang.launch_server", "--model-path", "{model}", "--port", "{port}"], now ["python3", "-m", "sglang.launch_server", "--model-path", "{model}", "--port", "{port}", "--tp", "1"]; ` +
		`bench.warmup: "8/inf", now (not set); it started with ` + filepath.Join(g.tree, "grid", "plan.toml") + ")"
	if err == nil || !strings.Contains(err.Error(), want) || err.(*ExitError).Code != ExitUsage {
		t.Fatalf("%v\nwant %s", err, want)
	}
}

// TestResumeEditedKeptPlan: a kept plan (TREE/grid/plan.toml) whose
// bytes are not the ones the journal's grid.start hashed is refused (exit
// 2), naming the file, that it is not the plan the journal started with,
// and both hashes: an edited copy and the same edit in the plan given
// would otherwise compare equal and resume a changed plan. A comment
// changed in the kept copy is refused the same: the journal hashed bytes.
func TestResumeEditedKeptPlan(t *testing.T) {
	for _, c := range []struct{ name, from, to string }{
		{"a value", "port = 8000", "port = 8001"},
		{"a comment", "port = 8000", "port = 8000 # edited"},
	} {
		g := gateGrid(t)
		g.tree = t.TempDir()
		g.bootID, g.driver = "boot-1", "590.44.01"
		g.p.Data = []byte(goodPlan)
		start := Event{Event: EvGridStart, PlanSHA256: g.p.SHA256, BootID: "boot-1", GPUUUIDs: []string{"GPU-a"}, Driver: "590.44.01", IdleTempC: []float64{40}}
		edited := strings.Replace(goodPlan, c.from, c.to, 1)
		kept := filepath.Join(g.tree, "grid", "plan.toml")
		os.MkdirAll(filepath.Dir(kept), 0o755)
		if err := os.WriteFile(kept, []byte(edited), 0o644); err != nil {
			t.Fatal(err)
		}
		g.p = mustPlan(t, edited)
		err := g.checkResume([]Event{start})
		want := kept + ": not the plan the journal (" + filepath.Join(g.tree, "grid", "journal.jsonl") + ") started with: its sha256 is " +
			g.p.SHA256 + ", the journal's grid.start has " + start.PlanSHA256 + "; put back the plan the grid started with, or start a new tree"
		if err == nil || err.Error() != want || err.(*ExitError).Code != ExitUsage {
			t.Errorf("%s edited: %v\nwant %s (exit 2)", c.name, err, want)
		}
	}
}

// TestFreshTreeRefusal: legs already in a tree without a journal are not
// this grid's.
func TestFreshTreeRefusal(t *testing.T) {
	g := gateGrid(t)
	g.tree = t.TempDir()
	if err := g.checkFreshTree(); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(g.tree, "clocks", "m"), 0o755)
	if err := g.checkFreshTree(); err == nil || !strings.Contains(err.Error(), "already holds clocks/ and no grid journal") {
		t.Fatal(err)
	}
}

func TestTail(t *testing.T) {
	w := newTail(3)
	for i := 1; i <= 5; i++ {
		w.Write([]byte("line " + string(rune('0'+i)) + "\n"))
	}
	w.Write([]byte("part"))
	if got := w.String(); got != "line 4\nline 5\npart" {
		t.Errorf("%q", got)
	}
}

// TestReadyStreak: a server is ready after ReadyStreak answers of 200 in a
// row; a 503 between them starts the count again.
func TestReadyStreak(t *testing.T) {
	answers := []int{200, 503, 200, 200, 200, 200}
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/health" {
			t.Errorf("path %s", r.URL.Path)
		}
		w.WriteHeader(answers[min(calls, len(answers)-1)])
		calls++
	}))
	defer srv.Close()
	g := gateGrid(t)
	g.t.readyPoll = time.Millisecond
	g.p.Port = srv.Listener.Addr().(*net.TCPAddr).Port
	g.procs = &fakeProcs{listen: []int{4242}}
	s := &server{pid: 4242, exited: make(chan struct{}), tail: newTail(TailLines), seen: map[int]uint64{}}
	if le := g.waitReady(context.Background(), Engine{Ready: Ready{Path: "/health", Timeout: 10 * time.Second}}, s); le != nil {
		t.Fatal(le.cause)
	}
	if calls != 4 {
		t.Errorf("ready after %d probes, want 4 (200, 503, 200, 200)", calls)
	}
	// A server that exits first fails the leg with its last lines.
	close(s.exited)
	s.status = "exited 3"
	s.tail.Write([]byte("boom\n"))
	le := g.waitReady(context.Background(), Engine{Ready: Ready{Path: "/health", Timeout: 10 * time.Second}}, s)
	if le == nil || le.phase != PhaseReady || le.cause != "the server exited 3 before it was ready; its last 20 lines:\nboom" {
		t.Fatalf("%+v", le)
	}
}

// TestReadyOwnListener: an answer counts only from a listener of the
// leg's server tree. Another process's listener fails the leg at its
// first 200, naming it; a listener that cannot be named never makes the
// server ready.
func TestReadyOwnListener(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {}))
	defer srv.Close()
	g := gateGrid(t)
	g.t.readyPoll = time.Millisecond
	g.p.Port = srv.Listener.Addr().(*net.TCPAddr).Port
	eng := Engine{Ready: Ready{Path: "/health", Timeout: 50 * time.Millisecond}}
	newServer := func() *server {
		s := &server{pid: 4242, exited: make(chan struct{}), tail: newTail(TailLines), seen: map[int]uint64{}}
		s.tail.Write([]byte("loading\n"))
		return s
	}
	// A worker of the server (its tree) holds the socket: ready.
	fp := &fakeProcs{table: map[int]ProcStat{4243: {State: 'S', PPID: 4242, PGID: 4242, StartTicks: 1}}, listen: []int{4243}}
	g.procs = fp
	if le := g.waitReady(context.Background(), eng, newServer()); le != nil {
		t.Fatalf("the server's worker's listener: %s", le.cause)
	}
	// Another process: the leg fails at once, naming it.
	fp.listen, fp.comm = []int{4242, 777}, map[int]string{777: "python3"}
	le := g.waitReady(context.Background(), eng, newServer())
	want := fmt.Sprintf("port %d answered by pid 777 (python3), not this leg's server (while the server was starting): another process serves the port; stop it, or choose another port; the server's last 20 lines:\nloading", g.p.Port)
	if le == nil || le.phase != PhaseReady || le.cause != want {
		t.Fatalf("%+v, want %q", le, want)
	}
	// The server dead, another process answering: named too.
	s := newServer()
	s.status = "exited 97"
	close(s.exited)
	fp.listen = []int{777}
	le = g.waitReady(context.Background(), eng, s)
	if le == nil || !strings.HasPrefix(le.cause, fmt.Sprintf("port %d answered by pid 777 (python3), not this leg's server (after the server exited 97)", g.p.Port)) {
		t.Fatalf("%+v", le)
	}
	// No listener can be named: never ready, and the timeout says why.
	fp.listen, fp.listenErr = nil, errors.New("no process holds it")
	le = g.waitReady(context.Background(), eng, newServer())
	if le == nil || !strings.Contains(le.cause, "(last: 200 from a listener that cannot be named: no process holds it)") {
		t.Fatalf("%+v", le)
	}
}

// TestCheckResult: a point's result must be one readable bench point of
// the point's concurrency.
func TestCheckResult(t *testing.T) {
	dir := t.TempDir()
	real, err := os.ReadFile(filepath.Join("..", "testdata", "bench-real", "vllm-0.25", "bench_serve_v0.25.1.json"))
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "c2-rinf.json")
	os.WriteFile(path, real, 0o644)
	pt2 := mustPoint(t, "2/inf")
	if err := checkResult(path, pt2); err != nil {
		t.Fatalf("the real vLLM 0.25 result (max_concurrency 2): %v", err)
	}
	if err := checkResult(path, mustPoint(t, "4/inf")); err == nil || !strings.Contains(err.Error(), "c2-rinf.json is a point of max_concurrency 2, not 4/inf's") {
		t.Fatalf("%v", err)
	}
	os.WriteFile(path, append(append(real, '\n'), real...), 0o644)
	if err := checkResult(path, pt2); err == nil || !strings.Contains(err.Error(), "not a readable bench point") && !strings.Contains(err.Error(), "holds 2 bench points") {
		t.Fatalf("two objects: %v", err)
	}
	os.WriteFile(path, []byte(`{"completed": 8, oops`), 0o644)
	if err := checkResult(path, pt2); err == nil || !strings.Contains(err.Error(), "not a readable bench point") {
		t.Fatalf("garbage: %v", err)
	}
	if err := checkResult(filepath.Join(dir, "none.json"), pt2); err == nil || !strings.Contains(err.Error(), "the bench wrote no result at") {
		t.Fatalf("missing: %v", err)
	}
}

func mustPoint(t *testing.T, s string) ratio.PointID {
	id, err := ratio.ParsePointID(s)
	if err != nil {
		t.Fatal(err)
	}
	return id
}
