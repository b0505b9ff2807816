package multileg

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/clockgate/clockgate/atomicfile"
)

// realHostnames are the lists of testdata/scontrol-hostnames.txt and what
// scontrol printed for each (SOURCE.md there).
func realHostnames(t *testing.T) [][2]string {
	data, err := os.ReadFile("testdata/scontrol-hostnames.txt")
	if err != nil {
		t.Fatal(err)
	}
	var out [][2]string
	for _, line := range strings.Split(strings.TrimSpace(string(data)), "\n") {
		list, names, ok := strings.Cut(line, "\t")
		if !ok {
			t.Fatalf("bad line %q", line)
		}
		out = append(out, [2]string{list, names})
	}
	return out
}

// TestExpandHostsAsScontrol: each list expands to what scontrol show
// hostnames printed for it.
func TestExpandHostsAsScontrol(t *testing.T) {
	for _, c := range realHostnames(t) {
		got, err := ExpandHosts(c[0])
		if err != nil {
			t.Errorf("%s: %v", c[0], err)
			continue
		}
		if strings.Join(got, " ") != c[1] {
			t.Errorf("%s: got %q, scontrol printed %q", c[0], strings.Join(got, " "), c[1])
		}
	}
}

// TestExpandHostsLiveScontrol compares with the scontrol on this machine,
// where there is one and a cluster to ask (scripts/slurm.sh start).
func TestExpandHostsLiveScontrol(t *testing.T) {
	conf := os.Getenv("CLOCKGATE_TEST_SLURM")
	if _, err := exec.LookPath("scontrol"); err != nil || conf == "" {
		t.Skip("no scontrol and CLOCKGATE_TEST_SLURM here")
	}
	for _, c := range realHostnames(t) {
		cmd := exec.Command("scontrol", "show", "hostnames", c[0])
		cmd.Env = append(os.Environ(), "SLURM_CONF="+conf)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("scontrol show hostnames %s: %v", c[0], err)
		}
		got, err := ExpandHosts(c[0])
		if err != nil || strings.Join(got, "\n") != strings.TrimSpace(string(out)) {
			t.Errorf("%s: got %q (%v), scontrol prints %q", c[0], got, err, out)
		}
	}
}

func TestExpandHostsRefuses(t *testing.T) {
	for _, c := range []struct{ list, want string }{
		{"", "an empty name"},
		{"a,,b", "an empty name"},
		{"node[1-3", "'[' without ']'"},
		{"node[3-1]", "ends below its start"},
		{"node[a-b]", "want numbers"},
		{"a[1-2]b", "text after the last ']'"},
		{"node[1-3],node2", "node2 listed twice"},
		{"node[1-100000]", "more than 65536"},
	} {
		_, err := ExpandHosts(c.list)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error with %q", c.list, err, c.want)
		}
	}
}

// TestRoles: a host's group is its role; with roles every host has one,
// one only, among the hosts.
func TestRoles(t *testing.T) {
	hosts := []string{"node1", "node2", "node3"}
	got, err := Roles(hosts, []string{"prefill=node1", "decode=node[2-3]"})
	if err != nil {
		t.Fatal(err)
	}
	want := []Host{{Host: "node1", Role: "prefill", Group: "prefill"}, {Host: "node2", Role: "decode", Group: "decode"}, {Host: "node3", Role: "decode", Group: "decode"}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %+v, want %+v", got, want)
	}
	if got, _ := Roles(hosts, nil); !reflect.DeepEqual(got, []Host{{Host: "node1"}, {Host: "node2"}, {Host: "node3"}}) {
		t.Fatalf("no roles: got %+v", got)
	}
	for _, c := range []struct {
		roles []string
		want  string
	}{
		{[]string{"prefill=node1"}, "node2 has no --role"},
		{[]string{"prefill=node1", "decode=node1,node2,node3"}, "node1 already has role prefill"},
		{[]string{"prefill=node9", "decode=node[1-3]"}, "node9 is not among --hosts"},
		{[]string{"prefill"}, "want NAME=HOSTS"},
	} {
		_, err := Roles(hosts, c.roles)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: got %v, want %q", c.roles, err, c.want)
		}
	}
}

// TestManifestWriteOnce: leg.json is written once, reads back strictly, and
// a second Write is refused, the file unchanged.
func TestManifestWriteOnce(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "clocks", "m", "e", "r1")
	d := 5.0
	m := &Manifest{Schema: Schema, IntervalS: 0.5, SkewBoundMS: 100, SkewBoundDeclaredMS: &d, Client: "node1",
		Hosts: []Host{{Host: "node1", Role: "prefill", Group: "prefill"}, {Host: "node2"}}}
	if err := Write(dir, m); err != nil {
		t.Fatal(err)
	}
	back, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, m) {
		t.Fatalf("read back %+v, wrote %+v", back, m)
	}
	before, _ := os.ReadFile(ManifestPath(dir))
	m2 := *m
	m2.Client = "node2"
	if err := Write(dir, &m2); !errors.Is(err, atomicfile.ErrExists) {
		t.Fatalf("second Write: %v, want ErrExists", err)
	}
	if after, _ := os.ReadFile(ManifestPath(dir)); string(after) != string(before) {
		t.Fatal("leg.json was rewritten")
	}
	if !IsDir(dir) || IsDir(filepath.Dir(dir)) {
		t.Fatal("IsDir")
	}
}

func TestParseManifestStrict(t *testing.T) {
	ok := `{"schema": 1, "interval_s": 1, "skew_bound_ms": 100, "client": "c", "hosts": [{"host": "a"}]}`
	if _, err := Parse([]byte(ok)); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ doc, want string }{
		{strings.Replace(ok, `"schema": 1`, `"schema": 2`, 1), "schema: want 1"},
		{strings.Replace(ok, `"client": "c"`, `"client": "c", "extra": 1`, 1), "extra: not a key of leg.json"},
		{strings.Replace(ok, `{"host": "a"}`, `{"host": "a"}, {"host": "a"}`, 1), "a listed twice"},
		{strings.Replace(ok, `{"host": "a"}`, `{"host": "a/b"}`, 1), "without a path separator"},
		{strings.Replace(ok, `{"host": "a"}`, `{"host": "a", "rank": 1}`, 1), "want a string"},
		{strings.Replace(ok, `"interval_s": 1`, `"interval_s": 0.05`, 1), "interval_s: want at least 0.1 s"},
		{strings.Replace(ok, `"skew_bound_ms": 100`, `"skew_bound_ms": 0`, 1), "skew_bound_ms: want a finite number of ms > 0"},
		{strings.Replace(ok, `"hosts": [{"host": "a"}]`, `"hosts": []`, 1), "hosts: want at least one host"},
		{`{"schema": 1, "schema": 1}`, "duplicate"},
	} {
		_, err := Parse([]byte(c.doc))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: got %v, want %q", c.doc, err, c.want)
		}
	}
}

// writeHost writes what host's sampler leaves: its record (where record)
// and its memory record.
func writeHost(t *testing.T, dir, host string, record bool, mem string) {
	t.Helper()
	os.MkdirAll(filepath.Join(dir, HostsDir), 0o755)
	os.WriteFile(Prefix(dir, host)+".samples.jsonl", []byte("{}\n"), 0o644)
	if record {
		os.WriteFile(Prefix(dir, host)+".summary.json", []byte("{}\n"), 0o644)
	}
	if mem != "" {
		os.WriteFile(MemoryPath(dir, host), []byte(mem), 0o644)
	}
}

// TestCloseSums: the leg's memory record sums the hosts' peaks (RSS only
// where every host has one) and lists each host's part.
func TestCloseSums(t *testing.T) {
	tree := t.TempDir()
	dir := filepath.Join(tree, "clocks", "m", "e", "r2")
	if err := Write(dir, &Manifest{Schema: Schema, IntervalS: 1, SkewBoundMS: 100, Client: "c", Hosts: []Host{{Host: "a"}, {Host: "b"}}}); err != nil {
		t.Fatal(err)
	}
	writeHost(t, dir, "a", true, `{"peak_gpu_memory_mib":100.5,"peak_host_rss_mib":10,"n":7}`)
	writeHost(t, dir, "b", true, `{"peak_gpu_memory_mib":200,"peak_host_rss_mib":20.25,"n":5}`)
	_, path, err := Close(dir, "")
	if err != nil {
		t.Fatal(err)
	}
	if want := filepath.Join(tree, "memory", "m", "e", "r2.summary.json"); path != want {
		t.Fatalf("wrote %s, want %s", path, want)
	}
	data, _ := os.ReadFile(path)
	want := `{"peak_gpu_memory_mib": 300.5, "peak_host_rss_mib": 30.25, "n": 5, "hosts": [
  {"host": "a", "peak_gpu_memory_mib": 100.5, "peak_host_rss_mib": 10, "n": 7},
  {"host": "b", "peak_gpu_memory_mib": 200, "peak_host_rss_mib": 20.25, "n": 5}]}
`
	if string(data) != want {
		t.Fatalf("got\n%s\nwant\n%s", data, want)
	}
	if _, _, err := Close(dir, ""); !errors.Is(err, atomicfile.ErrExists) {
		t.Fatalf("second close: %v, want ErrExists", err)
	}
	// Without one host's RSS there is no leg RSS: a part is not a sum.
	os.Remove(path)
	os.WriteFile(MemoryPath(dir, "b"), []byte(`{"peak_gpu_memory_mib":200,"n":5}`), 0o644)
	mem, _, err := Close(dir, "")
	if err != nil || mem.PeakHostRSSMiB != nil {
		t.Fatalf("got %+v, %v; want no peak_host_rss_mib", mem, err)
	}
	// The sampler writes a host RSS it did not record as null (SPEC
	// §12.1): read as not recorded, as the key's absence is.
	os.Remove(path)
	os.WriteFile(MemoryPath(dir, "b"), []byte(`{"peak_gpu_memory_mib":200,"peak_host_rss_mib":null,"n":5}`), 0o644)
	mem, _, err = Close(dir, "")
	if err != nil || mem.PeakHostRSSMiB != nil || mem.PeakGPUMemoryMiB != 300.5 {
		t.Fatalf("null host RSS: got %+v, %v; want GPU 300.5 and no peak_host_rss_mib", mem, err)
	}
}

// TestCloseNamesMissing: a host without its record is named, with how to
// stop samplers under Slurm, and nothing is written.
func TestCloseNamesMissing(t *testing.T) {
	tree := t.TempDir()
	dir := filepath.Join(tree, "clocks", "m", "e", "r1")
	Write(dir, &Manifest{Schema: Schema, IntervalS: 1, SkewBoundMS: 100, Client: "c", Hosts: []Host{{Host: "a"}, {Host: "b"}, {Host: "c"}}})
	writeHost(t, dir, "a", true, `{"peak_gpu_memory_mib":1,"n":1}`)
	writeHost(t, dir, "b", false, "")
	_, _, err := Close(dir, "")
	if !errors.Is(err, ErrMissing) {
		t.Fatalf("got %v, want ErrMissing", err)
	}
	for _, want := range []string{"2 of 3 hosts have no record", "b (hosts/b.summary.json: its sampler is still running, or was killed)", "c (hosts/c.summary.json: no sampler started)", "SIGINT to `srun --disable-status`", "scancel --signal=INT JOBID.STEPID", "never SIGTERM to srun"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q lacks %q", err, want)
		}
	}
	if _, err := os.Stat(filepath.Join(tree, "memory")); err == nil {
		t.Fatal("a memory record was written")
	}
	// A host with its record but no memory record is named too.
	writeHost(t, dir, "b", true, "")
	writeHost(t, dir, "c", true, `{"peak_gpu_memory_mib":1,"n":1}`)
	if _, _, err := Close(dir, ""); err == nil || !strings.Contains(err.Error(), "no memory record for the leg: b (") {
		t.Fatalf("got %v", err)
	}
}
