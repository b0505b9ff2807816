package sampler

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// smiLine is the line the fake prints for GPU i with its default values,
// for the new driver's full query (noheader,nounits).
func smiLine(i int) string {
	return fmt.Sprintf("%d, GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a3%d, NVIDIA H100 80GB HBM3, 590.44.01, 1980, 1980, [Requested functionality has been deprecated], 0x0000000000000000, Enabled, P0, 100, 45, 312.45, 2619, 71234", i, i)
}

func smiLines(indices ...int) string {
	var b strings.Builder
	for _, i := range indices {
		b.WriteString(smiLine(i) + "\n")
	}
	return b.String()
}

func newSMISel(t *testing.T, cfg smiConfig, sel Selection, logf func(string, ...any)) (*SMI, string, error) {
	t.Helper()
	path := installFakeSMI(t, cfg)
	if logf == nil {
		logf = t.Logf
	}
	s, err := NewSMI(context.Background(), SMIOptions{Path: path, GPUs: sel, QueryTimeout: 5 * time.Second, Logf: logf})
	return s, path, err
}

// TestSamplerSMIOneCallPerTick measures what reading 8 GPUs costs: one
// nvidia-smi process per reading, not eight, each asking -i 0,…,7, and 8
// samples per reading, one per GPU, sorted, all at the reading's time, each
// with its GPU's values.
func TestSamplerSMIOneCallPerTick(t *testing.T) {
	t.Parallel()
	const gpus, reads = 8, 5
	cfg := smiConfig{GPUs: gpus, GPUValues: map[string]map[string]string{}}
	for i := 0; i < gpus; i++ {
		cfg.GPUValues[strconv.Itoa(i)] = map[string]string{"clocks.sm": strconv.Itoa(1980 - 15*i), "utilization.gpu": strconv.Itoa(90 + i)}
	}
	s, path, err := newSMISel(t, cfg, GPUIndices(0, 1, 2, 3, 4, 5, 6, 7), nil)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(smiCalls(t, path)); n != 1 {
		t.Fatalf("%d calls to open 8 GPUs by index, want the one probe:\n%s", n, strings.Join(smiCalls(t, path), "\n"))
	}
	tm := time.Date(2026, 8, 12, 10, 15, 3, 123e6, time.UTC)
	for r := 1; r <= reads; r++ {
		rows, err := s.Read(context.Background(), tm, testBoot)
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) != gpus {
			t.Fatalf("reading %d: %d samples", r, len(rows))
		}
		for i, smp := range rows {
			if smp.GPUIndex != i || smp.T != "2026-08-12T10:15:03.123Z" || smp.SMClockMHz != 1980-15*i || smp.UtilizationGPUPct != 90+i ||
				smp.GPUUUID != fmt.Sprintf("GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a3%d", i) {
				t.Errorf("reading %d row %d: %s", r, i, smp.AppendJSON(nil))
			}
		}
		if calls := len(smiCalls(t, path)); calls != 1+r {
			t.Fatalf("after %d readings of %d GPUs: %d nvidia-smi calls, want %d (the probe and one per reading)", r, gpus, calls, 1+r)
		}
	}
	for _, c := range smiCalls(t, path) {
		if !strings.HasSuffix(c, " -i 0,1,2,3,4,5,6,7") {
			t.Errorf("call %q does not ask for the 8 GPUs at once", c)
		}
	}
	t.Logf("measured: %d readings of %d GPUs cost %d nvidia-smi processes after the probe (%.0f per reading), %d samples per reading",
		reads, gpus, len(smiCalls(t, path))-1, float64(len(smiCalls(t, path))-1)/reads, gpus)
	assertReadOnly(t, path)
}

// TestSamplerSMIRunsEightGPUs records a window of 8 GPUs through the fake
// nvidia-smi, as 'sample --gpu all' does: one listing, one probe, then one
// call per tick; the stream holds 8 rows per tick and the record is what
// the stream folds to.
func TestSamplerSMIRunsEightGPUs(t *testing.T) {
	t.Parallel()
	path := installFakeSMI(t, smiConfig{GPUs: 8})
	cfg := testConfig(t)
	var status []string
	var mu sync.Mutex
	logf := func(f string, a ...any) {
		mu.Lock()
		status = append(status, fmt.Sprintf(f, a...))
		mu.Unlock()
	}
	cfg.Logf = logf
	open := func(ctx context.Context) (Backend, error) {
		return Open(ctx, Options{Kind: KindSMI, SMIPath: path, GPUs: mustFlag(t, "all"), Logf: logf})
	}
	s, err := New(context.Background(), cfg, open)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan string, 1)
	go func() {
		for {
			data, _ := os.ReadFile(StreamPath(cfg.Prefix))
			if bytes.Count(data, []byte("\n")) >= 8*4 {
				stop <- clocks.StopSignal
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	res, err := runWithTimeout(t, s, context.Background(), stop)
	if err != nil {
		t.Fatal(err)
	}
	fold, samples := readStream(t, StreamPath(cfg.Prefix))
	if res.Ticks < 4 || res.Samples != 8*res.Ticks || len(samples) != res.Samples || JoinIndices(res.GPUs) != "0,1,2,3,4,5,6,7" {
		t.Fatalf("ticks %d, samples %d, stream %d rows, GPUs %v", res.Ticks, res.Samples, len(samples), res.GPUs)
	}
	for k := 0; k < res.Ticks; k++ {
		for i := 0; i < 8; i++ {
			if r := samples[8*k+i]; r.GPUIndex != i || r.T != samples[8*k].T {
				t.Errorf("tick %d row %d: %s", k, i, r.AppendJSON(nil))
			}
		}
	}
	want, err := fold.Record(0.1, clocks.StopSignal)
	if err != nil {
		t.Fatal(err)
	}
	withHostZone(want)
	want.Host = hostOf(t, cfg.Prefix, samples)
	got, _ := json.Marshal(readRecordFile(t, cfg))
	if exp, _ := json.Marshal(want); !bytes.Equal(got, exp) {
		t.Errorf("record %s\nstream folds to %s", got, exp)
	}
	calls := smiCalls(t, path)
	if calls[0] != "--query-gpu=index,uuid,name --format=csv,noheader,nounits" {
		t.Errorf("first call %q, want the listing", calls[0])
	}
	// The listing, the probe, one call per tick, and at most the one the
	// stop cut short; beside them, the compute processes' listing.
	var gpuCalls []string
	for _, c := range calls {
		if !strings.HasPrefix(c, "--query-compute-apps=") {
			gpuCalls = append(gpuCalls, c)
		}
	}
	if apps := len(calls) - len(gpuCalls); apps != 1 {
		t.Errorf("%d compute-apps calls, want 1: this fake refuses the first, so the last is not asked", apps)
	}
	calls = gpuCalls
	if n := len(calls) - 2; n != res.Ticks && n != res.Ticks+1 {
		t.Errorf("%d reading calls for %d ticks:\n%s", n, res.Ticks, strings.Join(calls, "\n"))
	}
	t.Logf("measured: %d ticks of 8 GPUs, %d nvidia-smi calls after the listing and the probe, %d stream rows (%d per tick)",
		res.Ticks, len(calls)-2, len(samples), len(samples)/res.Ticks)
	if !contains(status, "GPUs 0,1,2,3,4,5,6,7 chosen by --gpu all") ||
		!contains(status, fmt.Sprintf("stopped (signal) after %d ticks × 8 GPUs = %d samples (%d busy, 0 idle); wrote %s", res.Ticks, res.Samples, res.Samples, RecordPath(cfg.Prefix))) {
		t.Errorf("status lines:\n%s", strings.Join(status, "\n"))
	}
	assertReadOnly(t, path)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// TestSamplerSMIMultiGPURefusals: a reading of several GPUs is taken whole
// or refused, and the refusal names the GPU: a value one GPU cannot give, a
// GPU that did not answer, one that answered twice, one not asked for.
func TestSamplerSMIMultiGPURefusals(t *testing.T) {
	t.Parallel()
	const who = "nvidia-smi -i 0,1,2,3"
	cases := []struct {
		name string
		cfg  smiConfig
		want string
	}{
		{"N/A on GPU 2", smiConfig{GPUs: 4, Plan: []smiStep{{}, {GPUValues: map[string]map[string]string{"2": {"clocks.sm": "[N/A]"}}}}},
			who + `: GPU 2: clocks.sm: nvidia-smi printed "[N/A]": no value (not available on this GPU or driver); the driver cannot give clocks.sm, which every sample needs: ` + smiDriverAdvice},
		{"GPU 3 in MIG mode", smiConfig{GPUs: 4, Plan: []smiStep{{}, {GPUValues: map[string]map[string]string{"3": {"utilization.gpu": "[N/A]"}}}}},
			who + `: GPU 3: utilization.gpu: nvidia-smi printed "[N/A]": no value (not available on this GPU or driver); this GPU reports no utilization, as a MIG-enabled GPU does: ` + migAdvice},
		{"a GPU missing", smiConfig{GPUs: 4, Plan: []smiStep{{}, {Raw: smiLines(0, 1, 3)}}},
			who + " printed 3 lines, want 4, one per GPU: no line for GPU 2 (GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a32)"},
		{"three GPUs missing", smiConfig{GPUs: 4, Plan: []smiStep{{}, {Raw: smiLines(2)}}},
			who + " printed 1 line, want 4, one per GPU: no line for GPU 0 (GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30), GPU 1 (GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31), GPU 3 (GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a33)"},
		{"a GPU missing, another not asked for", smiConfig{GPUs: 6, Plan: []smiStep{{}, {Raw: smiLines(0, 1, 3, 5, 4)}}},
			who + " printed 5 lines, want 4, one per GPU: no line for GPU 2 (GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a32); a line for GPU 4, which it was not asked for; a line for GPU 5, which it was not asked for"},
		{"a GPU twice, one more line", smiConfig{GPUs: 4, Plan: []smiStep{{}, {Raw: smiLines(0, 1, 1, 2, 3)}}},
			who + " printed 5 lines, want 4, one per GPU: 2 lines for GPU 1"},
		{"GPUs missing, a line without an index", smiConfig{GPUs: 4, Plan: []smiStep{{}, {Raw: smiLines(0, 1) + strings.Replace(smiLine(3), "3, ", "x, ", 1) + "\n"}}},
			who + " printed 3 lines, want 4, one per GPU: no line for GPU 2 (GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a32), GPU 3 (GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a33); a line without a GPU index"},
		{"a GPU twice", smiConfig{GPUs: 4, Plan: []smiStep{{}, {Raw: smiLines(0, 1, 1, 3)}}},
			who + " answered twice for GPU 1 and not for GPU 2 (GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a32)"},
		{"a GPU not asked for", smiConfig{GPUs: 6, Plan: []smiStep{{}, {Raw: smiLines(0, 1, 2, 5)}}},
			who + " answered for GPU 5, which it was not asked for"},
		{"every GPU answers", smiConfig{GPUs: 6, Plan: []smiStep{{}, {}}, IgnoreI: false}, ""},
		{"a line without an index", smiConfig{GPUs: 4, Plan: []smiStep{{}, {Raw: smiLines(0, 1, 2) + strings.Replace(smiLine(3), "3, ", "x, ", 1) + "\n"}}},
			who + `: index: nvidia-smi printed "x": want a GPU index, a non-negative integer`},
		{"exit", smiConfig{GPUs: 4, Plan: []smiStep{{}, {Exit: 15, Msg: "Unable to determine the device handle for GPU0000:2A:00.0: Unknown Error"}}},
			who + ` exited with status 15: "Unable to determine the device handle for GPU0000:2A:00.0: Unknown Error"`},
	}
	for _, c := range cases {
		if c.want == "" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, path, err := newSMISel(t, c.cfg, GPUIndices(0, 1, 2, 3), nil)
			if err != nil {
				t.Fatal(err)
			}
			_, err = s.Read(context.Background(), time.Now(), testBoot)
			if err == nil || err.Error() != c.want {
				t.Fatalf("Read error = %v\nwant %s", err, c.want)
			}
			assertReadOnly(t, path)
		})
	}
	// A fake that ignores -i answers for all six GPUs: refused, never read
	// as the four asked for.
	t.Run("every GPU answers", func(t *testing.T) {
		t.Parallel()
		_, _, err := newSMISel(t, smiConfig{GPUs: 6, IgnoreI: true}, GPUIndices(0, 1, 2, 3), nil)
		if err == nil || err.Error() != who+" printed 6 lines, want 4, one per GPU: a line for GPU 4, which it was not asked for; a line for GPU 5, which it was not asked for" {
			t.Fatalf("err = %v", err)
		}
	})
}

// TestSamplerSMIRowsOutOfOrder: nvidia-smi need not answer -i in index
// order; the rows are stored sorted by index, each with its own GPU's
// values, never in the order printed.
func TestSamplerSMIRowsOutOfOrder(t *testing.T) {
	t.Parallel()
	vals := map[string]map[string]string{}
	for i := 0; i < 4; i++ {
		vals[strconv.Itoa(i)] = map[string]string{"clocks.sm": strconv.Itoa(1900 + 10*i)}
	}
	for _, c := range []struct {
		name  string
		order []int
		sel   []int
	}{
		{"reversed", []int{3, 2, 1, 0}, []int{0, 1, 2, 3}},
		{"shuffled", []int{2, 0, 3, 1}, []int{0, 1, 2, 3}},
		{"two of four, reversed", []int{3, 1}, []int{1, 3}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s, path, err := newSMISel(t, smiConfig{GPUs: 4, GPUValues: vals, Order: c.order}, GPUIndices(c.sel...), nil)
			if err != nil {
				t.Fatal(err)
			}
			for n := 0; n < 2; n++ {
				rows, err := s.Read(context.Background(), time.Now(), testBoot)
				if err != nil {
					t.Fatal(err)
				}
				if len(rows) != len(c.sel) {
					t.Fatalf("%d rows for GPUs %v", len(rows), c.sel)
				}
				for k, r := range rows {
					g := c.sel[k]
					if r.GPUIndex != g || r.SMClockMHz != 1900+10*g || r.GPUUUID != fmt.Sprintf("GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a3%d", g) {
						t.Errorf("row %d: %s; want GPU %d's", k, r.AppendJSON(nil), g)
					}
				}
			}
			// The fake did print them out of order.
			out, err := exec.Command(path, "--query-gpu=index", "--format=csv,noheader,nounits", "-i", JoinIndices(c.sel)).Output()
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Fields(string(out)); strings.Join(got, ",") == JoinIndices(c.sel) {
				t.Fatalf("the fake printed %v, in index order", got)
			}
		})
	}
}

// TestSamplerSMIMissingGPUAtStart: a probe that leaves a GPU out names it,
// with its UUID where the listing gave it (--gpu all), by index alone
// where nothing has named its UUID yet.
func TestSamplerSMIMissingGPUAtStart(t *testing.T) {
	t.Parallel()
	all, err := ParseGPUFlag("all")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name string
		sel  Selection
		want string
	}{
		{"by index", GPUIndices(0, 1, 2, 3), "nvidia-smi -i 0,1,2,3 printed 3 lines, want 4, one per GPU: no line for GPU 2"},
		{"all", all, "nvidia-smi -i 0,1,2,3 printed 3 lines, want 4, one per GPU: no line for GPU 2 (GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a32)"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, path, err := newSMISel(t, smiConfig{GPUs: 4, Plan: []smiStep{{Raw: smiLines(0, 1, 3)}}}, c.sel, nil)
			if err == nil || err.Error() != c.want {
				t.Fatalf("err = %v\nwant %s", err, c.want)
			}
			assertReadOnly(t, path)
		})
	}
}

// TestSamplerSMIMultiGPUAtStart: the probe of several GPUs drops an optional
// field one GPU cannot give (naming it) and refuses a required one.
func TestSamplerSMIMultiGPUAtStart(t *testing.T) {
	t.Parallel()
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	s, _, err := newSMISel(t, smiConfig{GPUs: 4, Power: true, Module: true, Vbios: true, PCIe: true, Plan: []smiStep{{GPUValues: map[string]map[string]string{"1": {"power.draw": "[N/A]"}}}, {}}}, GPUIndices(0, 1, 2, 3), logf)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.Dropped(), ",") != "power.draw" || strings.Contains(strings.Join(s.Fields(), ","), "power.draw") {
		t.Errorf("dropped %v, fields %v", s.Dropped(), s.Fields())
	}
	if !contains(logged, `nvidia-smi: optional field power.draw dropped: GPU 1: power.draw: nvidia-smi printed "[N/A]": no value (not available on this GPU or driver)`) {
		t.Errorf("log:\n%s", strings.Join(logged, "\n"))
	}
	rows, err := s.Read(context.Background(), time.Now(), testBoot)
	if err != nil || len(rows) != 4 {
		t.Fatalf("%d rows, %v", len(rows), err)
	}
	for _, r := range rows {
		if r.PowerDrawW != nil || r.TemperatureGPUC == nil {
			t.Errorf("row %s", r.AppendJSON(nil))
		}
	}
	if got := s.Name(); !strings.Contains(got, " GPUs 0,1,2,3, throttle field clocks_event_reasons.active, optional temperature.gpu clocks.mem") {
		t.Errorf("name %q", got)
	}

	_, _, err = newSMISel(t, smiConfig{GPUs: 4, Plan: []smiStep{{GPUValues: map[string]map[string]string{"2": {"clocks.max.sm": "[N/A]"}}}}}, GPUIndices(0, 1, 2, 3), nil)
	want := `nvidia-smi -i 0,1,2,3: GPU 2: clocks.max.sm: nvidia-smi printed "[N/A]": no value (not available on this GPU or driver); the driver cannot give clocks.max.sm, which every sample needs: ` + smiDriverAdvice
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v\nwant %s", err, want)
	}
}

// TestSamplerSMISelection: the GPUs are resolved against the box at start,
// with one listing call only where the selection needs it, and a selection
// the box cannot satisfy is ErrSelect.
func TestSamplerSMISelection(t *testing.T) {
	t.Parallel()
	real3090, _ := realList(t, "list-L-4x3090.txt")
	uuids := map[string]map[string]string{}
	for _, g := range real3090 {
		uuids[strconv.Itoa(g.Index)] = map[string]string{"uuid": g.UUID, "name": g.Name}
	}
	t.Run("UUIDs from a real box", func(t *testing.T) {
		t.Parallel()
		var logged []string
		logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
		s, path, err := newSMISel(t, smiConfig{GPUs: 4, GPUValues: uuids}, mustFlag(t, "GPU-2639988f,GPU-e1924eea-b9bb-d537-39f2-b345087fa145"), logf)
		if err != nil {
			t.Fatal(err)
		}
		rows, err := s.Read(context.Background(), time.Now(), testBoot)
		if err != nil || len(rows) != 2 || rows[0].GPUUUID != real3090[0].UUID || rows[1].GPUUUID != real3090[3].UUID || rows[1].GPUName != "NVIDIA GeForce RTX 3090" {
			t.Fatalf("rows %v, %v", rows, err)
		}
		calls := smiCalls(t, path)
		if len(calls) != 3 || calls[0] != "--query-gpu=index,uuid,name --format=csv,noheader,nounits" || !strings.HasSuffix(calls[1], " -i 0,3") {
			t.Errorf("calls:\n%s", strings.Join(calls, "\n"))
		}
		if !contains(logged, "GPUs 0,3 chosen by --gpu GPU-2639988f,GPU-e1924eea-b9bb-d537-39f2-b345087fa145 (GPU-2639988f is GPU 3, GPU-e1924eea-b9bb-d537-39f2-b345087fa145 is GPU 0)") {
			t.Errorf("log:\n%s", strings.Join(logged, "\n"))
		}
		if len(s.Listed()) != 4 {
			t.Errorf("listed %v", s.Listed())
		}
		assertReadOnly(t, path)
	})
	t.Run("CUDA_VISIBLE_DEVICES", func(t *testing.T) {
		t.Parallel()
		s, _, err := newSMISel(t, smiConfig{GPUs: 4}, mustEnv(t, map[string]string{EnvCUDAVisibleDevices: "3,1"}), nil)
		if err != nil || JoinIndices(s.GPUs()) != "1,3" {
			t.Fatalf("%v, %v", s, err)
		}
	})
	refusals := []struct {
		name string
		cfg  smiConfig
		sel  Selection
		want string
		sel2 bool // ErrSelect
	}{
		{"unknown index, no listing", smiConfig{GPUs: 2}, GPUIndices(0, 5),
			`nvidia-smi -i 0,5 exited with status 6: "No devices were found": nvidia-smi knows no GPU by one of the indices 0,5; nvidia-smi -L lists the GPUs`, true},
		{"unknown UUID", smiConfig{GPUs: 2}, mustFlag(t, "GPU-e1924eea"),
			"--gpu GPU-e1924eea: no GPU on this box has UUID GPU-e1924eea (or one starting with it): the driver lists GPU 0 GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a30 (NVIDIA H100 80GB HBM3), 1 GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a31 (NVIDIA H100 80GB HBM3)", true},
		{"listing fails", smiConfig{GPUs: 2, List: &smiStep{Exit: 9, Msg: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."}}, mustFlag(t, "all"),
			`nvidia-smi --query-gpu=index,uuid,name (listing the GPUs) exited with status 9: "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver."`, false},
		{"listing unreadable", smiConfig{GPUs: 2, List: &smiStep{Raw: "0, GPU-a\n"}}, mustFlag(t, "all"),
			"nvidia-smi --query-gpu=index,uuid,name (listing the GPUs): line 1: 2 values for 3 columns (index, uuid, name)", false},
	}
	for _, c := range refusals {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			_, path, err := newSMISel(t, c.cfg, c.sel, nil)
			if err == nil || err.Error() != c.want || errors.Is(err, ErrSelect) != c.sel2 {
				t.Fatalf("err = %v (ErrSelect %v)\nwant %s (ErrSelect %v)", err, errors.Is(err, ErrSelect), c.want, c.sel2)
			}
			assertReadOnly(t, path)
		})
	}
	t.Run("listing hangs", func(t *testing.T) {
		t.Parallel()
		path := installFakeSMI(t, smiConfig{GPUs: 2, List: &smiStep{SleepMS: 20000, Spawn: true}})
		start := time.Now()
		_, err := NewSMI(context.Background(), SMIOptions{Path: path, GPUs: mustFlag(t, "all"), QueryTimeout: 300 * time.Millisecond})
		if err == nil || err.Error() != "nvidia-smi --query-gpu=index,uuid,name (listing the GPUs) did not answer within 300ms; its process group was killed (the startup probe; nothing was sampled)" {
			t.Fatalf("err = %v", err)
		}
		if el := time.Since(start); el > 2*time.Second {
			t.Errorf("a hung listing held the start %v", el)
		}
		waitGone(t, spawnedPIDs(t, path))
	})
}

// TestFakeSMIRefusesUnknownIndicesAsRealOneDoes holds the fake to what real
// nvidia-smi printed for an -i naming no GPU (testdata/real-smi).
func TestFakeSMIRefusesUnknownIndicesAsRealOneDoes(t *testing.T) {
	t.Parallel()
	want, err := os.ReadFile(filepath.Join("testdata", "real-smi", "no-devices.txt"))
	if err != nil {
		t.Fatal(err)
	}
	path := installFakeSMI(t, smiConfig{GPUs: 2})
	for _, ids := range []string{"42", "random,string", "0,2", "1,-1"} {
		cmd := exec.Command(path, "--query-gpu=index", "--format=csv,noheader,nounits", "-i", ids)
		out, err := cmd.Output()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 6 || string(out) != string(want) {
			t.Errorf("-i %s: exit %v, output %q; want status 6 and %q", ids, err, out, want)
		}
	}
	out, err := exec.Command(path, "--query-gpu=index", "--format=csv,noheader,nounits", "-i", "1,0").Output()
	if err != nil || string(out) != "0\n1\n" {
		t.Errorf("-i 1,0: %q, %v", out, err)
	}
}

// TestSamplerNVMLSeveralGPUs reads four GPUs in one pass over their
// handles, each with its own values, and counts the pass: each device is
// read once per reading.
func TestSamplerNVMLSeveralGPUs(t *testing.T) {
	g := newFakeNVML()
	g.count = 8
	g.smBy[2], g.utilBy[5] = 1965, 0
	var logged []string
	logf := func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }
	n, err := NewNVML(g, mustFlag(t, "all"), time.Second, logf)
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	if !contains(logged, "GPUs 0,1,2,3,4,5,6,7 chosen by --gpu all") || n.Name() != "NVML GPUs 0,1,2,3,4,5,6,7, throttle field clocks_event_reasons.active, optional temperature.gpu power.draw clocks.mem enforced.power.limit memory.used" {
		t.Errorf("name %q, log:\n%s", n.Name(), strings.Join(logged, "\n"))
	}
	g.set(func(g *fakeNVML) { g.smReads = map[int]int{} })
	const reads = 5
	tm := time.Date(2026, 8, 12, 10, 15, 3, 123e6, time.UTC)
	for r := 0; r < reads; r++ {
		rows, err := n.Read(context.Background(), tm, testBoot)
		if err != nil || len(rows) != 8 {
			t.Fatalf("%d rows, %v", len(rows), err)
		}
		for i, row := range rows {
			sm, util := 1980, 100
			if i == 2 {
				sm = 1965
			}
			if i == 5 {
				util = 0
			}
			if row.GPUIndex != i || row.GPUUUID != fakeUUID(i) || row.SMClockMHz != sm || row.UtilizationGPUPct != util || row.T != "2026-08-12T10:15:03.123Z" {
				t.Errorf("row %d: %s", i, row.AppendJSON(nil))
			}
		}
	}
	for i := 0; i < 8; i++ {
		if g.smReads[i] != reads {
			t.Errorf("GPU %d's SM clock read %d times in %d readings", i, g.smReads[i], reads)
		}
	}
	t.Logf("measured: %d NVML readings of 8 GPUs read each GPU's SM clock %d times", reads, g.smReads[0])
}

func TestSamplerNVMLSeveralGPUsRefusals(t *testing.T) {
	t.Run("GPU 2 lost mid-run", func(t *testing.T) {
		g := newFakeNVML()
		g.count = 4
		n, err := NewNVML(g, GPUIndices(0, 1, 2, 3), time.Second, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		g.set(func(g *fakeNVML) { g.smRetBy[2] = nvmlErrorGPUIsLost })
		_, err = n.Read(context.Background(), time.Now(), testBoot)
		if err == nil || err.Error() != "NVML GPU 2: clocks.sm: nvmlDeviceGetClockInfo(SM) returned ERROR_GPU_IS_LOST" {
			t.Fatalf("err = %v", err)
		}
		n.Close()
	})
	t.Run("GPU 2 hangs", func(t *testing.T) {
		g := newFakeNVML()
		g.count = 3
		n, err := NewNVML(g, GPUIndices(0, 1, 2), 200*time.Millisecond, t.Logf)
		if err != nil {
			t.Fatal(err)
		}
		defer close(g.release)
		g.set(func(g *fakeNVML) { g.hangBy[2] = true })
		if _, err := n.Read(context.Background(), time.Now(), testBoot); err == nil || err.Error() != "NVML GPU 2 did not answer within 200ms" {
			t.Fatalf("err = %v", err)
		}
		if _, err := n.Read(context.Background(), time.Now(), testBoot); err == nil || err.Error() != "NVML GPU 2: an earlier reading never returned" {
			t.Errorf("second read: %v", err)
		}
		n.Close()
		if g.shutdowns() != 0 {
			t.Error("nvmlShutdown called under a hung call")
		}
	})
	cases := []struct {
		name string
		edit func(*fakeNVML)
		sel  Selection
		want string
		is   bool
	}{
		{"unknown index", func(g *fakeNVML) { g.count = 2 }, GPUIndices(0, 5),
			"NVML: nvmlDeviceGetHandleByIndex_v2(5): ERROR_INVALID_ARGUMENT: NVML knows no GPU 5; nvidia-smi -L lists the GPUs", true},
		{"count fails", func(g *fakeNVML) { g.countRet = nvmlErrorUnknown }, mustFlag(t, "all"),
			"NVML: listing the GPUs: nvmlDeviceGetCount_v2: ERROR_UNKNOWN", false},
		{"ambiguous prefix", func(g *fakeNVML) { g.count = 3 }, mustFlag(t, "GPU-7f3a"),
			"--gpu GPU-7f3a: UUID prefix GPU-7f3a names 3 GPUs (GPU 0 GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a37, GPU 1 GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a38, GPU 2 GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a39): give enough of the UUID to name one", true},
		{"no GPU", func(g *fakeNVML) { g.count = 0 }, mustFlag(t, "all"), "--gpu all: the driver lists no GPU", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			g := newFakeNVML()
			c.edit(g)
			_, err := NewNVML(g, c.sel, time.Second, t.Logf)
			if err == nil || err.Error() != c.want || errors.Is(err, ErrSelect) != c.is {
				t.Fatalf("err = %v\nwant %s (ErrSelect %v)", err, c.want, c.is)
			}
			if g.shutdowns() != 1 {
				t.Errorf("nvmlShutdown called %d times after a failed open", g.shutdowns())
			}
		})
	}
	t.Run("by UUID", func(t *testing.T) {
		g := newFakeNVML()
		g.count = 4
		n, err := NewNVML(g, mustFlag(t, fakeUUID(3)+","+fakeUUID(1)), time.Second, t.Logf)
		if err != nil || JoinIndices(n.GPUs()) != "1,3" {
			t.Fatalf("%v, %v", n, err)
		}
		n.Close()
	})
}

// TestSamplerRunsSeveralGPUs: a run over four GPUs writes four rows per
// tick, one write per tick, and the record the stream folds to.
func TestSamplerRunsSeveralGPUs(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	stop := make(chan string, 1)
	b := &fakeBackend{gpus: []int{0, 1, 2, 3}, sm: []int{1980, 1965}, util: []int{100, 0}}
	b.after = func(n int) {
		if n == 3 {
			stop <- clocks.StopSignal
		}
	}
	s, err := New(context.Background(), cfg, opener(b))
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	real := s.write
	s.write = func(p []byte) (int, error) { writes++; return real(p) }
	res, err := runWithTimeout(t, s, context.Background(), stop)
	if err != nil {
		t.Fatal(err)
	}
	fold, samples := readStream(t, StreamPath(cfg.Prefix))
	if res.Ticks != 3 || res.Samples != 12 || res.Busy != 8 || res.Idle != 4 || len(samples) != 12 || writes != 3 || JoinIndices(res.GPUs) != "0,1,2,3" {
		t.Fatalf("result %+v, %d rows in %d writes", res, len(samples), writes)
	}
	for k := 0; k < 3; k++ {
		for i := 0; i < 4; i++ {
			if r := samples[4*k+i]; r.GPUIndex != i || r.T != samples[4*k].T || r.GPUUUID != fmt.Sprintf("GPU-7f3a9c2e-5b1d-4e8f-a6c4-2d9e0b8f1a%d", 37+i) {
				t.Errorf("tick %d row %d: %s", k, i, r.AppendJSON(nil))
			}
		}
	}
	want, _ := fold.Record(0.1, clocks.StopSignal)
	withHostZone(want)
	want.Host = hostOf(t, cfg.Prefix, samples)
	got, _ := json.Marshal(readRecordFile(t, cfg))
	if exp, _ := json.Marshal(want); !bytes.Equal(got, exp) {
		t.Errorf("record %s\nstream folds to %s", got, exp)
	}
}

// TestSamplerRefusesMalformedTicks: a backend's reading must be one sample
// per GPU, sorted, at one time, and the same GPUs every tick; otherwise the
// rows could not be told apart, and the sampler refuses, keeping the whole
// ticks before.
func TestSamplerRefusesMalformedTicks(t *testing.T) {
	t.Parallel()
	const name = "fake GPUs 0,1,2,3"
	cases := []struct {
		name string
		edit func(rows []*clocks.Sample) []*clocks.Sample
		want string
	}{
		{"no sample", func([]*clocks.Sample) []*clocks.Sample { return nil }, name + " gave no sample"},
		{"unsorted", func(r []*clocks.Sample) []*clocks.Sample { r[0], r[1] = r[1], r[0]; return r },
			name + " gave samples for GPUs 1,0: want each GPU once, sorted by index"},
		{"a GPU twice", func(r []*clocks.Sample) []*clocks.Sample { r[2].GPUIndex = 1; return r },
			name + " gave samples for GPUs 0,1,1: want each GPU once, sorted by index"},
		{"two times", func(r []*clocks.Sample) []*clocks.Sample { r[3].T = "2026-08-12T10:15:03.124Z"; return r },
			name + " gave GPU 0's sample at %s and GPU 3's at 2026-08-12T10:15:03.124Z: one reading's samples share one time"},
		{"a GPU gone", func(r []*clocks.Sample) []*clocks.Sample { return r[:3] },
			name + " gave samples for GPUs 0,1,2 where the window samples GPUs 0,1,2,3"},
		{"a GPU invalid", func(r []*clocks.Sample) []*clocks.Sample { r[2].UtilizationGPUPct = 101; return r },
			name + " gave a sample of GPU 2 that is not valid: utilization_gpu_pct: want 0 to 100, found 101"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t)
			var t0 string
			b := &fakeBackend{gpus: []int{0, 1, 2, 3}, rows: func(n int, rows []*clocks.Sample) []*clocks.Sample {
				if n == 2 {
					t0 = rows[0].T
					return c.edit(rows)
				}
				return rows
			}}
			s, err := New(context.Background(), cfg, opener(b))
			if err != nil {
				t.Fatal(err)
			}
			res, err := runWithTimeout(t, s, context.Background(), nil)
			why := c.want
			if strings.Contains(why, "%s") {
				why = fmt.Sprintf(why, t0)
			}
			if !errors.Is(err, ErrRefused) || !strings.HasPrefix(err.Error(), "refusing to sample: "+why+"; the record says stop_reason refused") {
				t.Fatalf("err = %v\nwant %s", err, why)
			}
			if _, rows := readStream(t, StreamPath(cfg.Prefix)); len(rows) != 4 || res.Samples != 4 || res.Ticks != 1 {
				t.Errorf("stream %d rows, result %+v: want the first tick whole and nothing of the second", len(rows), res)
			}
			if rec := readRecordFile(t, cfg); rec.Window.StopReason != "refused" || rec.Refusal != why {
				t.Errorf("record %+v", rec)
			}
		})
	}
}

// TestSamplerFailedWriteKeepsWholeTicks: a tick's rows go in one write; one
// that falls short is cut back to the last whole tick.
func TestSamplerFailedWriteKeepsWholeTicks(t *testing.T) {
	t.Parallel()
	cfg := testConfig(t)
	s, err := New(context.Background(), cfg, opener(&fakeBackend{gpus: []int{0, 1, 2, 3}}))
	if err != nil {
		t.Fatal(err)
	}
	writes := 0
	real := s.write
	s.write = func(b []byte) (int, error) {
		writes++
		if writes == 3 {
			n, _ := real(b[:len(b)*3/5]) // two rows and part of a third
			return n, syscall.ENOSPC
		}
		return real(b)
	}
	res, err := runWithTimeout(t, s, context.Background(), nil)
	if !errors.Is(err, ErrRefused) || !strings.Contains(err.Error(), fmt.Sprintf("refusing to sample: writing %s failed after 8 whole samples (", StreamPath(cfg.Prefix))) ||
		!strings.Contains(err.Error(), "bytes of the next tick's 4 lines written): no space left on device; the stream was cut back to its last whole line") {
		t.Fatalf("err = %v", err)
	}
	data, _ := os.ReadFile(StreamPath(cfg.Prefix))
	if bytes.Count(data, []byte("\n")) != 8 || !bytes.HasSuffix(data, []byte("}\n")) || res.Samples != 8 || res.Ticks != 2 {
		t.Fatalf("stream is not 2 whole ticks (result %+v):\n%s", res, data)
	}
}
