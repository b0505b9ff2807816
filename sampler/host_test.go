package sampler

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// hostOf folds the host stream beside prefix's stream with the busy ticks
// of samples, as the judge does: the record's host block must be it.
func hostOf(t *testing.T, prefix string, samples []*clocks.Sample) *clocks.Host {
	t.Helper()
	ticks := clocks.BusyTicks{}
	for _, s := range samples {
		ticks.Add(s.T, s.UtilizationGPUPct != 0)
	}
	path := clocks.HostStreamPath(StreamPath(prefix))
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h, err := clocks.FoldHostStream(f, path, &ticks)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// burnEnv asks the test binary, started again, to keep that many threads
// busy until killed: a stand-in engine (1) or a CPU burner (several).
const burnEnv = "CLOCKGATE_TEST_BURN_THREADS"

func burnIfAsked() {
	n, err := strconv.Atoi(os.Getenv(burnEnv))
	if err != nil || n < 1 {
		return
	}
	runtime.GOMAXPROCS(n)
	for i := 0; i < n; i++ {
		go func() {
			for x := uint64(1); ; x = x*6364136223846793005 + 1 {
			}
		}()
	}
	select {}
}

// burner starts the test binary, linked as name (its comm), keeping
// threads busy, in a session (and process group) of its own that the test
// kills.
func burner(t *testing.T, name string, threads int) *exec.Cmd {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(t.TempDir(), name)
	if err := os.Symlink(exe, link); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(link)
	cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%d", burnEnv, threads))
	// A session of its own is an autogroup of its own where the kernel
	// groups the scheduler by session: its threads compete with the
	// machine's other sessions, not within the test's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		cmd.Wait()
	})
	return cmd
}

// recordBusyLeg records a busy GPU beside the stand-in engine (the leg's
// command) for readings readings, reading the host under root, and judges
// the leg from its files.
func recordBusyLeg(t *testing.T, engine int, root string, readings int) *clocks.Leg {
	t.Helper()
	cfg := testConfig(t)
	cfg.Interval, cfg.HostRoot = 200*time.Millisecond, root
	stop := make(chan string, 1)
	b := &fakeBackend{}
	b.after = func(n int) {
		if n == readings {
			stop <- clocks.StopSignal
		}
	}
	s, err := New(context.Background(), cfg, opener(b))
	if err != nil {
		t.Fatal(err)
	}
	s.SetCommand(engine)
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	if _, err := s.Run(ctx, stop); err != nil {
		t.Fatal(err)
	}
	return clocks.LoadLeg(clocks.LegFiles{Name: "r1", RecordPath: RecordPath(cfg.Prefix), StreamPath: StreamPath(cfg.Prefix)})
}

// TestHostContentionRealBurner: on this machine's real /proc, a burner of
// busy threads beside a stand-in engine of 2 makes the engine's
// threads wait for a CPU (the machine has 2), and the leg is
// host.contention naming the burner; the record is its host stream's.
func TestHostContentionRealBurner(t *testing.T) {
	if testing.Short() {
		t.Skip("keeps the CPUs busy for 10 s")
	}
	if _, err := os.Stat("/proc/self/task"); err != nil {
		t.Skip("no /proc")
	}
	// The machine is shared and loaded, and its scheduler may share the
	// CPUs by session: the burner runs as 3 sessions of 2 busy threads
	// each, so that its load outweighs any one other process's.
	engine := burner(t, "engine", 2)
	var pids []string
	for i := 0; i < 3; i++ {
		pids = append(pids, fmt.Sprintf("burner (pid %d)", burner(t, "burner", 2).Process.Pid))
	}
	time.Sleep(300 * time.Millisecond)
	l := recordBusyLeg(t, engine.Process.Pid, "/", 50)
	var msg string
	for _, r := range l.Reasons {
		if r.Code == clocks.CodeHostContention {
			msg = r.Message
		}
	}
	h := l.Record.Host
	if h == nil || msg == "" {
		t.Fatalf("no host.contention: reasons %+v, host %+v", l.Reasons, h)
	}
	named := false
	for _, p := range pids {
		named = named || strings.Contains(msg, p)
	}
	if !named || !strings.Contains(msg, "> 5.00%") {
		t.Fatalf("host.contention message %q names none of %s", msg, strings.Join(pids, ", "))
	}
	if h.CPUFreq != nil || h.CPUMHz != nil {
		t.Errorf("this machine has no cpufreq, the record says %+v, cpu_mhz %v", h.CPUFreq, h.CPUMHz)
	}
	t.Logf("own_wait_share %v over %d busy readings, own %v CPU-s; %s", *h.OwnWaitShare, h.BusyReadings, h.OwnCPUS, msg)
}

// TestHostQuietFixtureEstablished: the same leg without the burner, its
// host read from the quiet fixture root, carries no host reason.
func TestHostQuietFixtureEstablished(t *testing.T) {
	engine := burner(t, "engine", 1)
	l := recordBusyLeg(t, engine.Process.Pid, "../host/testdata/cpufreq", 32)
	// A loaded test machine may stretch a gap (clock.coverage): the
	// host's codes are what this test is about.
	wantNoHostCode(t, l.Reasons)
	h := l.Record.Host
	if h.Name != "vm" || h.LogicalCPUs != 2 || h.CPUFreq == nil || strings.Join(h.CPUFreq.Governors, ",") != "powersave" || *h.CPUMHz != 1219.9 {
		t.Fatalf("host block %+v", h)
	}
}

func wantNoHostCode(t *testing.T, reasons []clocks.Reason) {
	t.Helper()
	for _, r := range reasons {
		if strings.HasPrefix(r.Code, "host.") {
			t.Fatalf("%s: %s", r.Code, r.Message)
		}
	}
}
