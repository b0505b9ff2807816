//go:build linux

package slurmtest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestNodesAreHosts: one task per node, each on its own UTS name, each
// told its node by $SLURMD_NODENAME, each seeing its node's own boot id
// (a mount over /proc/sys/kernel/random/boot_id), not the machine's.
func TestNodesAreHosts(t *testing.T) {
	c := Need(t)
	out := c.Run(t, "srun", "-N3", "hostname")
	if got := sortedLines(out); !slices.Equal(got, Nodes) {
		t.Fatalf("srun -N3 hostname printed %q, want %q", got, Nodes)
	}
	out = c.Run(t, "srun", "-N3", "sh", "-c",
		`echo "$(hostname) $SLURMD_NODENAME $(cat /proc/sys/kernel/random/boot_id) $(grep -c ' /proc/sys/kernel/random/boot_id ' /proc/self/mountinfo)"`)
	own, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]string{}
	for _, line := range sortedLines(out) {
		f := strings.Fields(line)
		if len(f) != 4 {
			t.Fatalf("a task printed %q, want: hostname, $SLURMD_NODENAME, boot id, mounts over it", line)
		}
		host, node, boot, mounts := f[0], f[1], f[2], f[3]
		if node != host {
			t.Errorf("the task on %s has SLURMD_NODENAME=%q", host, node)
		}
		if want := c.BootID(t, host); boot != want {
			t.Errorf("the task on %s sees boot id %s, want its node's %s", host, boot, want)
		}
		if boot == strings.TrimSpace(string(own)) {
			t.Errorf("the task on %s sees the machine's boot id", host)
		}
		if mounts != "1" {
			t.Errorf("the task on %s sees %s mounts over boot_id in its mountinfo, want 1", host, mounts)
		}
		if other, ok := seen[boot]; ok {
			t.Errorf("%s and %s share the boot id %s", other, host, boot)
		}
		seen[boot] = host
	}
	if len(seen) != len(Nodes) {
		t.Errorf("%d distinct boot ids from %d nodes:\n%s", len(seen), len(Nodes), out)
	}
}

// TestRebootOneNode: scripts/slurm.sh reboot gives one node a new boot id
// and leaves the others' as they were; the cluster runs on all three
// nodes after it.
func TestRebootOneNode(t *testing.T) {
	c := Need(t)
	before := map[string]string{}
	for _, n := range Nodes {
		before[n] = c.BootID(t, n)
	}
	fresh := c.Reboot(t, "node2")
	if fresh == before["node2"] || fresh != c.BootID(t, "node2") {
		t.Fatalf("reboot node2: boot id %s, before %s, its file %s", fresh, before["node2"], c.BootID(t, "node2"))
	}
	out := c.Run(t, "srun", "-N3", "sh", "-c", `echo "$SLURMD_NODENAME $(cat /proc/sys/kernel/random/boot_id)"`)
	for _, line := range sortedLines(out) {
		node, boot, _ := strings.Cut(line, " ")
		want := before[node]
		if node == "node2" {
			want = fresh
		}
		if boot != want {
			t.Errorf("%s: boot id %s after rebooting node2, want %s", node, boot, want)
		}
	}
}

// handler is a task that records the signal it handles: NODE.ready once
// its traps are set, NODE.INT or NODE.TERM from the trap, then exits 0.
const handler = `trap 'echo > "$0.d/$SLURMD_NODENAME.INT"; exit 0' INT
trap 'echo > "$0.d/$SLURMD_NODENAME.TERM"; exit 0' TERM
echo > "$0.d/$SLURMD_NODENAME.ready"
while :; do sleep 0.1; done
`

// taskStep is one srun step over the three nodes running handler.
type taskStep struct {
	cmd  *exec.Cmd
	dir  string // where the tasks write
	name string // the step's job name
}

// startTasks starts `srun -N3 ARGS… handler` and waits until each task has
// set its traps.
func startTasks(t *testing.T, c *Cluster, args ...string) *taskStep {
	t.Helper()
	script := filepath.Join(t.TempDir(), "handler.sh")
	if err := os.WriteFile(script, []byte(handler), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(script+".d", 0o755); err != nil {
		t.Fatal(err)
	}
	name := fmt.Sprintf("cg-%s-%d", t.Name(), time.Now().UnixNano())
	all := append([]string{"-N3", "--ntasks-per-node=1", "--job-name=" + name}, args...)
	cmd := c.Command("srun", append(all, "bash", script)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	s := &taskStep{cmd: cmd, dir: script + ".d", name: name}
	t.Cleanup(func() {
		if cmd.ProcessState == nil {
			cmd.Process.Kill()
			cmd.Wait()
		}
		c.Command("scancel", "--name="+name).Run()
	})
	deadline := time.Now().Add(20 * time.Second)
	for len(s.files(".ready")) < len(Nodes) {
		if time.Now().After(deadline) {
			t.Fatalf("after 20 s, tasks ready on %v only", s.files(".ready"))
		}
		time.Sleep(50 * time.Millisecond)
	}
	return s
}

// files lists the nodes that wrote NODE+suffix.
func (s *taskStep) files(suffix string) []string {
	var nodes []string
	for _, n := range Nodes {
		if _, err := os.Stat(filepath.Join(s.dir, n+suffix)); err == nil {
			nodes = append(nodes, n)
		}
	}
	return nodes
}

// wait waits up to 30 s for srun and returns its exit status.
func (s *taskStep) wait(t *testing.T) int {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		var exit *exec.ExitError
		if errors.As(err, &exit) {
			return exit.ExitCode()
		}
		if err != nil {
			t.Fatal(err)
		}
		return 0
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		t.Fatal("srun still running 30 s after the signal")
		return -1
	}
}

// TestSIGINTToSrunReachesEveryTask: SIGINT to `srun --disable-status` is
// forwarded as SIGINT to every task, whose handler runs; srun exits 0.
func TestSIGINTToSrunReachesEveryTask(t *testing.T) {
	c := Need(t)
	s := startTasks(t, c, "--disable-status")
	s.cmd.Process.Signal(syscall.SIGINT)
	if code := s.wait(t); code != 0 {
		t.Errorf("srun --disable-status exited %d after SIGINT, want 0", code)
	}
	if got := s.files(".INT"); !slices.Equal(got, Nodes) {
		t.Errorf("SIGINT handlers ran on %v, want %v", got, Nodes)
	}
	if got := s.files(".TERM"); len(got) != 0 {
		t.Errorf("SIGTERM handlers ran on %v, want none", got)
	}
}

// TestSIGINTToSrunWithStatusIsNotForwarded: without --disable-status,
// one SIGINT to srun only prints the step's status: no task sees it (the
// reason the sampler's step is started with --disable-status).
func TestSIGINTToSrunWithStatusIsNotForwarded(t *testing.T) {
	c := Need(t)
	s := startTasks(t, c)
	s.cmd.Process.Signal(syscall.SIGINT)
	time.Sleep(1500 * time.Millisecond)
	if s.cmd.ProcessState != nil {
		t.Fatal("srun ended on one SIGINT without --disable-status")
	}
	if got := append(s.files(".INT"), s.files(".TERM")...); len(got) != 0 {
		t.Errorf("handlers ran on %v after one SIGINT to srun without --disable-status, want none", got)
	}
	c.Run(t, "scancel", "--signal=INT", stepID(t, c, s.name))
	if code := s.wait(t); code != 0 {
		t.Errorf("srun exited %d, want 0", code)
	}
}

// TestSIGTERMToSrunKillsEveryTask: SIGTERM to srun (even with
// --disable-status) becomes SIGKILL for every task: no handler runs and
// srun exits 137 (Slurm 22.05).
func TestSIGTERMToSrunKillsEveryTask(t *testing.T) {
	c := Need(t)
	s := startTasks(t, c, "--disable-status")
	s.cmd.Process.Signal(syscall.SIGTERM)
	if code := s.wait(t); code != 137 {
		t.Errorf("srun exited %d after SIGTERM, want 137 (its tasks killed)", code)
	}
	if got := append(s.files(".INT"), s.files(".TERM")...); len(got) != 0 {
		t.Errorf("handlers ran on %v after SIGTERM to srun, want none (SIGKILL)", got)
	}
}

// TestScancelSignalINTReachesEveryTask: `scancel --signal=INT JOB.STEP`
// delivers SIGINT to every task of the step; srun exits 0.
func TestScancelSignalINTReachesEveryTask(t *testing.T) {
	c := Need(t)
	s := startTasks(t, c)
	id := stepID(t, c, s.name)
	c.Run(t, "scancel", "--signal=INT", id)
	if code := s.wait(t); code != 0 {
		t.Errorf("srun exited %d after scancel --signal=INT %s, want 0", code, id)
	}
	if got := s.files(".INT"); !slices.Equal(got, Nodes) {
		t.Errorf("SIGINT handlers ran on %v, want %v", got, Nodes)
	}
}

// stepID is JOB.STEP of the one step of the job named name.
func stepID(t *testing.T, c *Cluster, name string) string {
	t.Helper()
	out := c.Run(t, "squeue", "-h", "--steps", "--name="+name, "-o", "%i")
	var ids []string
	for _, id := range strings.Fields(out) {
		if job, step, ok := strings.Cut(id, "."); ok && isNumber(job) && isNumber(step) {
			ids = append(ids, id)
		}
	}
	if len(ids) != 1 {
		t.Fatalf("squeue --steps --name=%s: %q, want one JOB.STEP", name, out)
	}
	return ids[0]
}

func isNumber(s string) bool {
	_, err := strconv.Atoi(s)
	return err == nil
}

// TestKernelSynchronisedUnderChrony: scripts/chrony.sh's chronyd makes the
// kernel synchronised (adjtimex), and chronyc answers with a normal leap
// status and a zero offset.
func TestKernelSynchronisedUnderChrony(t *testing.T) {
	s := Synchronised(t)
	if !s.Synchronised || s.State == timeError || s.Status&staUnsync != 0 {
		t.Fatalf("kernel under chronyd: %+v, want synchronised", s)
	}
	out, err := exec.Command("chronyc", "-c", "tracking").Output()
	if err != nil {
		t.Fatalf("chronyc -c tracking: %v", err)
	}
	f := strings.Split(strings.TrimSpace(string(out)), ",")
	if len(f) != 14 || f[13] != "Normal" {
		t.Fatalf("chronyc -c tracking: %q, want 14 fields ending in the leap status Normal", out)
	}
	if off, err := strconv.ParseFloat(f[4], 64); err != nil || off > 0.001 || off < -0.001 {
		t.Errorf("chronyc -c tracking: offset %q s, want within 1 ms of 0 (zero offsets fed)", f[4])
	}
}

// TestKernelResynchronisedAfterAReset: a kernel reset to unsynchronised
// while chronyd runs (what a hypervisor's pause and clock step does) is
// synchronised again at chronyd's next update, within syncWait.
func TestKernelResynchronisedAfterAReset(t *testing.T) {
	dir := chronyDir(t)
	hold(t, filepath.Join(dir, "..", filepath.Base(dir)+".lock"), syscall.LOCK_EX)
	if s, err := waitSync(true, syncWait); err != nil || !s.Synchronised {
		t.Fatalf("kernel under chronyd before the reset: %+v, %v", s, err)
	}
	// chronyfeed restore marks the kernel unsynchronised, as at a reset.
	if out, err := exec.Command(filepath.Join(dir, "chronyfeed"), "restore", filepath.Join(dir, "kernel.saved")).CombinedOutput(); err != nil {
		t.Fatalf("chronyfeed restore: %v\n%s", err, out)
	}
	start := time.Now()
	if s, err := KernelSync(); err != nil || s.Synchronised {
		t.Fatalf("kernel right after the reset: %+v, %v; want unsynchronised", s, err)
	}
	s, err := waitSync(true, syncWait)
	if err != nil || !s.Synchronised {
		t.Fatalf("kernel %v after the reset: %+v, %v; want synchronised again by chronyd", syncWait, s, err)
	}
	t.Logf("synchronised again %v after the reset", time.Since(start).Round(time.Millisecond))
}

// TestKernelUnsynchronisedWithoutChrony: with scripts/chrony.sh's chronyd
// stopped the kernel is unsynchronised again (the machine's own clock),
// and chronyc has no daemon to ask.
func TestKernelUnsynchronisedWithoutChrony(t *testing.T) {
	s := Unsynchronised(t)
	if s.Synchronised || s.Status&staUnsync == 0 {
		t.Fatalf("kernel without chronyd: %+v, want unsynchronised", s)
	}
	if out, err := exec.Command("chronyc", "-c", "tracking").CombinedOutput(); err == nil {
		t.Errorf("chronyc -c tracking answered without chronyd: %q", out)
	}
}

// TestFakeSMIPerNode: on the cluster, each node's fake nvidia-smi is its
// own GPU: its own uuid, and fakesmi.node2.json makes node2's slower and
// hot; each node logs its own calls.
func TestFakeSMIPerNode(t *testing.T) {
	c := Need(t)
	dir := fakeSMI(t)
	writeFile(t, filepath.Join(dir, "fakesmi.node2.json"), `{"gpu_values": {"0": {"clocks.sm": "1410", "temperature.gpu": "91"}}}`)
	out := c.Run(t, "srun", "-N3", "sh", "-c",
		`echo "$SLURMD_NODENAME, $("$0" --query-gpu=uuid,clocks.sm,temperature.gpu --format=csv,noheader,nounits)"`,
		filepath.Join(dir, "nvidia-smi"))
	uuids := map[string]bool{}
	for _, line := range sortedLines(out) {
		f := strings.Split(line, ", ")
		if len(f) != 4 {
			t.Fatalf("a node printed %q", line)
		}
		node, uuid, clock, temp := f[0], f[1], f[2], f[3]
		if uuid != nodeUUID(node, 0) {
			t.Errorf("%s: uuid %s, want %s", node, uuid, nodeUUID(node, 0))
		}
		uuids[uuid] = true
		want := []string{"1980", "45"}
		if node == "node2" {
			want = []string{"1410", "91"}
		}
		if clock != want[0] || temp != want[1] {
			t.Errorf("%s: clocks.sm %s temperature %s, want %v", node, clock, temp, want)
		}
		if _, err := os.Stat(filepath.Join(dir, "fakesmi."+node+".log")); err != nil {
			t.Errorf("%s: no log of its own: %v", node, err)
		}
	}
	if len(uuids) != len(Nodes) {
		t.Errorf("%d distinct uuids from %d nodes:\n%s", len(uuids), len(Nodes), out)
	}
}

// TestFakeSMIWithoutNode: the fake off Slurm is as before, node files
// present or not; with SLURMD_NODENAME it reads its node's file over
// fakesmi.json. No cluster needed.
func TestFakeSMIWithoutNode(t *testing.T) {
	dir := fakeSMI(t)
	writeFile(t, filepath.Join(dir, "fakesmi.json"), `{"gpus": 2}`)
	writeFile(t, filepath.Join(dir, "fakesmi.node2.json"), `{"gpu_values": {"1": {"clocks.sm": "1410"}}}`)
	query := func(node string) string {
		cmd := exec.Command(filepath.Join(dir, "nvidia-smi"), "--query-gpu=index,uuid,clocks.sm", "--format=csv,noheader,nounits")
		cmd.Env = append(os.Environ(), "SLURMD_NODENAME="+node)
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("fake nvidia-smi with SLURMD_NODENAME=%q: %v", node, err)
		}
		return string(out)
	}
	if got, want := query(""), "0, GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30, 1980\n1, GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31, 1980\n"; got != want {
		t.Errorf("off Slurm:\n%s\nwant\n%s", got, want)
	}
	if got, want := query("node2"), fmt.Sprintf("0, %s, 1980\n1, %s, 1410\n", nodeUUID("node2", 0), nodeUUID("node2", 1)); got != want {
		t.Errorf("on node2:\n%s\nwant\n%s", got, want)
	}
	if got, want := query("node3"), fmt.Sprintf("0, %s, 1980\n1, %s, 1980\n", nodeUUID("node3", 0), nodeUUID("node3", 1)); got != want {
		t.Errorf("on node3:\n%s\nwant\n%s", got, want)
	}
	for _, f := range []string{"fakesmi.log", "fakesmi.node2.log", "fakesmi.node3.log"} {
		data, err := os.ReadFile(filepath.Join(dir, f))
		if err != nil || strings.Count(string(data), "\n") != 1 {
			t.Errorf("%s: %q, %v; want one call", f, data, err)
		}
	}
}

// nodeUUID is the uuid the fake gives GPU i on node: the node name's
// FNV-1a hash and the index in its last group.
func nodeUUID(node string, i int) string {
	h := uint32(2166136261)
	for _, b := range []byte(node) {
		h ^= uint32(b)
		h *= 16777619
	}
	return fmt.Sprintf("GPU-7f3a9c2e-5b1d-4e8f-a6c4-%08x%04x", h, i)
}

// fakeSMI builds the fake nvidia-smi into a directory of its own.
func fakeSMI(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command("go", "build", "-o", filepath.Join(dir, "nvidia-smi"), "./sampler/testdata/fakesmi")
	cmd.Dir = Root(t)
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("building the fake nvidia-smi: %v\n%s", err, out)
	}
	return dir
}

func writeFile(t *testing.T, path, text string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func sortedLines(s string) []string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	slices.Sort(lines)
	return lines
}
