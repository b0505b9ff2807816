package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/multileg"
)

// multiLeg is a recLeg whose clockgate sees no Slurm node name (the
// tests name hosts with --host) and whose leg is a directory.
func multiLeg(t *testing.T, tools *recTools) (*recLeg, string) {
	t.Helper()
	l := tools.leg(t, map[string]any{"gpus": 1})
	env := l.env[:0:0]
	for _, kv := range l.env {
		if !strings.HasPrefix(kv, slurmNodeEnv+"=") && !strings.HasPrefix(kv, slurmNodeListEnv+"=") {
			env = append(env, kv)
		}
	}
	l.env = env
	return l, l.prefix // TREE/clocks/m/e/r1, as a directory
}

// streamLines reads a stream's lines as JSON objects.
func streamLines(t *testing.T, path string) []map[string]any {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		out = append(out, m)
	}
	return out
}

// TestLegRecordedOnTwoHosts records a multi-host leg by hand (two
// samplers named by --host on this machine): leg init, sample --leg, leg
// wait, mark --leg, SIGINT, leg close; each sample carries mono_s, each
// record time_sync at the window's start and end, each point line its
// host; and check judges the directory: the two hosts read one GPU on
// this machine (clock.host_duplicate).
func TestLegRecordedOnTwoHosts(t *testing.T) {
	tools := newRecTools(t)
	l, dir := multiLeg(t, tools)
	if code, _, stderr := l.run("", "leg", "init", "--out", dir, "--hosts", "h[1-2]", "--role", "prefill=h1", "--role", "decode=h2", "--interval", "200ms"); code != 0 {
		t.Fatalf("leg init: exit %d\n%s", code, stderr)
	}
	m, err := multileg.Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	host, _ := os.Hostname()
	if m.Client != host || m.IntervalS != 0.2 || m.SkewBoundMS != 100 || len(m.Hosts) != 2 || m.Hosts[1] != (multileg.Host{Host: "h2", Role: "decode", Group: "decode"}) {
		t.Fatalf("leg.json: %+v", m)
	}
	s1 := l.start("", "sample", "--leg", dir, "--host", "h1")
	s2 := l.start("", "sample", "--leg", dir, "--host", "h2")
	if code, _, stderr := l.run("", "leg", "wait", "--started", dir, "--timeout", "30s"); code != 0 {
		t.Fatalf("leg wait: exit %d\n%s", code, stderr)
	}
	for _, p := range []string{"1/inf", "2/inf"} {
		if code, _, stderr := l.run("", "mark", "--leg", dir, "--point", p, "--", "sleep", "0.3"); code != 0 {
			t.Fatalf("mark: exit %d\n%s", code, stderr)
		}
	}
	// SIGINT stops a sampler as SIGTERM does: it writes its record.
	for _, p := range []*proc{s1, s2} {
		p.cmd.Process.Signal(syscall.SIGINT)
	}
	for _, p := range []*proc{s1, s2} {
		if code := p.wait(t); code != 0 {
			t.Fatalf("sample: exit %d\n%s", code, p.stderr.String())
		}
	}
	for _, h := range []string{"h1", "h2"} {
		prefix := multileg.Prefix(dir, h)
		lines := streamLines(t, prefix+".samples.jsonl")
		last := -1.0
		for i, s := range lines {
			mono, ok := s["mono_s"].(float64)
			if !ok || !(mono > last) {
				t.Fatalf("%s line %d: mono_s %v after %v: want a rising CLOCK_BOOTTIME", h, i+1, s["mono_s"], last)
			}
			last = mono
		}
		data, err := os.ReadFile(prefix + ".summary.json")
		if err != nil {
			t.Fatal(err)
		}
		rec, err := clocks.ParseRecord(data)
		if err != nil {
			t.Fatal(err)
		}
		if rec.Window.StopReason != clocks.StopSignal {
			t.Fatalf("%s: stop_reason %q, want signal", h, rec.Window.StopReason)
		}
		var raw struct {
			TimeSync *clocks.TimeSyncWindow `json:"time_sync"`
		}
		json.Unmarshal(data, &raw)
		ts := raw.TimeSync
		if ts == nil || ts.Start == nil || ts.End == nil || ts.Start.Kernel == nil || ts.End.Kernel == nil || ts.Start.T >= ts.End.T {
			t.Fatalf("%s: time_sync %s", h, data)
		}
		if _, err := os.Stat(multileg.MemoryPath(dir, h)); err != nil {
			t.Fatal(err)
		}
	}
	points, _ := os.ReadFile(filepath.Join(dir, multileg.PointsName))
	if n := strings.Count(string(points), `"host":"`+host+`"`); n != 4 {
		t.Fatalf("points.jsonl: %d lines name %s, want 4:\n%s", n, host, points)
	}
	code, _, stderr := l.run("", "leg", "close", dir)
	if code != 0 {
		t.Fatalf("leg close: exit %d\n%s", code, stderr)
	}
	mem, err := os.ReadFile(filepath.Join(filepath.Dir(filepath.Dir(filepath.Dir(filepath.Dir(dir)))), "memory", "m", "e", "r1.summary.json"))
	if err != nil || !strings.Contains(string(mem), `"peak_gpu_memory_mib": 142468,`) || !strings.Contains(string(mem), `{"host": "h2", "peak_gpu_memory_mib": 71234,`) {
		t.Fatalf("memory record: %s (%v)", mem, err)
	}
	code, stdout, _ := l.run("", "check", dir)
	if code != ExitFailed || !strings.Contains(stdout, "clock.host_duplicate: GPU ") || !strings.Contains(stdout, " is claimed by hosts h1 and h2: two samplers read one GPU") {
		t.Fatalf("check DIR: exit %d\n%s", code, stdout)
	}
}

// TestLegSampleRefusals: sample --leg refuses (exit 2, nothing written) a
// host leg.json does not list, a host whose files exist, and --out,
// --interval or --memory-out beside --leg.
func TestLegSampleRefusals(t *testing.T) {
	tools := newRecTools(t)
	l, dir := multiLeg(t, tools)
	if code, _, stderr := l.run("", "leg", "init", "--out", dir, "--hosts", "h1,h2"); code != 0 {
		t.Fatalf("leg init: exit %d\n%s", code, stderr)
	}
	hosts := filepath.Join(dir, multileg.HostsDir)
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--host", "h9"}, "this host, h9, is not among leg.json's hosts (h1, h2)"},
		{[]string{"--host", "h1", "--out", dir + "/x"}, "--leg DIR and --out PREFIX: give one"},
		{[]string{"--host", "h1", "--interval", "2s"}, "the interval is leg.json's"},
		{[]string{"--host", "h1", "--memory-out", dir + "/m.json"}, "drop --memory-out"},
	} {
		code, _, stderr := l.run("", append([]string{"sample", "--leg", dir}, c.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d, want 2 with %q:\n%s", c.args, code, c.want, stderr)
		}
		if entries, _ := os.ReadDir(hosts); len(entries) > 0 {
			t.Fatalf("%v wrote %v", c.args, entries)
		}
	}
	os.MkdirAll(hosts, 0o755)
	os.WriteFile(multileg.MemoryPath(dir, "h2"), []byte("{}"), 0o644)
	code, _, stderr := l.run("", "sample", "--leg", dir, "--host", "h2")
	if code != ExitUsage || !strings.Contains(stderr, "h2 already has files ("+multileg.MemoryPath(dir, "h2")+")") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if _, err := os.Stat(multileg.Prefix(dir, "h2") + ".samples.jsonl"); err == nil {
		t.Fatal("a stream was written")
	}
	// $SLURMD_NODENAME names the host before --host.
	l.env = append(l.env, slurmNodeEnv+"=h7")
	code, _, stderr = l.run("", "sample", "--leg", dir, "--host", "h1")
	if code != ExitUsage || !strings.Contains(stderr, "this host, h7, is not among") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
}

// TestLegWaitNamesHosts: leg wait gives up at --timeout, exit 1, naming
// the hosts with no reading.
func TestLegWaitNamesHosts(t *testing.T) {
	tools := newRecTools(t)
	l, dir := multiLeg(t, tools)
	l.run("", "leg", "init", "--out", dir, "--hosts", "node[1-3]")
	os.MkdirAll(filepath.Join(dir, multileg.HostsDir), 0o755)
	os.WriteFile(multileg.Prefix(dir, "node2")+".samples.jsonl", []byte("{}\n"), 0o644)
	os.WriteFile(multileg.Prefix(dir, "node3")+".samples.jsonl", []byte("{\"t\":"), 0o644) // no whole reading yet
	code, _, stderr := l.run("", "leg", "wait", "--started", dir, "--timeout", "300ms")
	if code != ExitFailed || !strings.Contains(stderr, "2 of 3 hosts have no reading in "+filepath.Join(dir, "hosts")+": node1, node3;") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	os.WriteFile(multileg.Prefix(dir, "node1")+".samples.jsonl", []byte("{}\n"), 0o644)
	os.WriteFile(multileg.Prefix(dir, "node3")+".samples.jsonl", []byte("{}\n"), 0o644)
	if code, _, stderr := l.run("", "leg", "wait", "--started", dir, "--timeout", "5s"); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
}

// TestLegInitAndMarkRefusals: leg init writes leg.json once, reads
// $SLURM_JOB_NODELIST by default; mark --leg runs on the client only.
func TestLegInitAndMarkRefusals(t *testing.T) {
	tools := newRecTools(t)
	l, dir := multiLeg(t, tools)
	code, _, stderr := l.run("", "leg", "init", "--out", dir)
	if code != ExitUsage || !strings.Contains(stderr, "no hosts: pass --hosts LIST") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	env := l.env
	l.env = append(env, slurmNodeListEnv+"=node[1-3]", slurmNodeEnv+"=node1")
	if code, _, stderr := l.run("", "leg", "init", "--out", dir, "--role", "prefill=node1", "--role", "decode=node[2-3]", "--skew-bound-declared", "2ms"); code != 0 {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	m, _ := multileg.Load(dir)
	if m.Client != "node1" || len(m.Hosts) != 3 || m.SkewBoundDeclaredMS == nil || *m.SkewBoundDeclaredMS != 2 {
		t.Fatalf("%+v", m)
	}
	code, _, stderr = l.run("", "leg", "init", "--out", dir, "--hosts", "x")
	if code != ExitUsage || !strings.Contains(stderr, "leg.json already exists") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	l.env = append(env, slurmNodeEnv+"=node2")
	code, _, stderr = l.run("", "mark", "--leg", dir, "--point", "1/inf", "--", "true")
	if code != ExitUsage || !strings.Contains(stderr, "this host, node2, is not the leg's client (node1") {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, multileg.PointsName)); err == nil {
		t.Fatal("points.jsonl written")
	}
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"--hosts", "node[1-3", "--out", dir + "2"}, "'[' without ']'"},
		{[]string{"--hosts", "a,b", "--role", "x=a", "--out", dir + "2"}, "b has no --role"},
		{[]string{"--hosts", "a", "--skew-bound", "0s", "--out", dir + "2"}, "--skew-bound 0s: want a positive duration"},
	} {
		code, _, stderr := l.run("", append([]string{"leg", "init"}, c.args...)...)
		if code != ExitUsage || !strings.Contains(stderr, c.want) {
			t.Errorf("%v: exit %d:\n%s", c.args, code, stderr)
		}
	}
}
