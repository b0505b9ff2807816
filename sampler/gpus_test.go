package sampler

import (
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// realList reads a listing in testdata/real-smi: a --format=csv capture
// (header first) or nvidia-smi -L. It returns the GPUs and, from -L, the
// MIG instances' UUIDs.
func realList(t *testing.T, name string) ([]GPU, []string) {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("testdata", "real-smi", name))
	if err != nil {
		t.Fatal(err)
	}
	text := string(data)
	if strings.HasSuffix(name, ".csv") {
		header, rest, _ := strings.Cut(text, "\n")
		gpus, err := ParseGPUList(header, rest)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		return gpus, nil
	}
	gpuRE := regexp.MustCompile(`^GPU ([0-9]+): (.+) \(UUID: (GPU-[0-9a-f-]+)\)$`)
	migRE := regexp.MustCompile(`\(UUID: (MIG-[0-9a-f-]+)\)$`)
	var gpus []GPU
	var migs []string
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		if m := gpuRE.FindStringSubmatch(line); m != nil {
			n, _ := indexOf(m[1])
			gpus = append(gpus, GPU{Index: n, Name: m[2], UUID: m[3]})
		} else if m := migRE.FindStringSubmatch(line); m != nil {
			migs = append(migs, m[1])
		} else {
			t.Fatalf("%s: unread line %q", name, line)
		}
	}
	return gpus, migs
}

// TestGPUListReal reads the listing a five-GPU box printed: one CSV line per
// GPU, columns read by the header's names (pci.bus skipped).
func TestGPUListReal(t *testing.T) {
	gpus, _ := realList(t, "list-5gpu-mixed.csv")
	want := []GPU{
		{0, "GPU-f3da2e71-6e43-729a-e3ae-f731ed96d50c", "GeForce GTX 1060 6GB"},
		{1, "GPU-15ea7bf9-1a0e-2d7f-9c62-c28e5ca1aaf1", "GeForce GTX 1080 Ti"},
		{2, "GPU-3dc4f2b0-6e1b-c088-c342-4367c334795a", "GeForce GTX 1060 6GB"},
		{3, "GPU-03ddeff3-19c4-6676-d02d-6942bd80630d", "GeForce GTX 1060 6GB"},
		{4, "GPU-ff3318a7-f0dd-dc57-1fb8-cc95ba35c56e", "GeForce GTX 1060 6GB"},
	}
	if len(gpus) != len(want) {
		t.Fatalf("%d GPUs: %+v", len(gpus), gpus)
	}
	for i := range want {
		if gpus[i] != want[i] {
			t.Errorf("GPU %d = %+v, want %+v", i, gpus[i], want[i])
		}
	}
}

func TestGPUListRefusals(t *testing.T) {
	cases := []struct{ header, text, want string }{
		{"index, uuid", "0, GPU-a\n", `the listing has no name column (header "index, uuid")`},
		{"index, uuid, name", "0, GPU-a, X\n0, GPU-b, X\n", "line 2: GPU 0 again (first on line 1)"},
		{"index, uuid, name", "0, GPU-a\n", "line 1: 2 values for 3 columns (index, uuid, name)"},
		{"index, uuid, name", "[N/A], GPU-a, X\n", `line 1: index: nvidia-smi printed "[N/A]": no value (not available on this GPU or driver)`},
		{"index, uuid, name", "\n", "the listing names no GPU"},
		{"index, index [x], uuid, name", "0, 0, GPU-a, X\n", `header column 2: "index [x]" repeats index`},
	}
	for _, c := range cases {
		_, err := ParseGPUList(c.header, c.text)
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseGPUList(%q, %q) = %v\nwant %s", c.header, c.text, err, c.want)
		}
	}
}

func TestGPUFlagParses(t *testing.T) {
	cases := []struct {
		text string
		all  bool
		ids  string
	}{
		{"3", false, "3"},
		{"0,1,2,3", false, "0,1,2,3"},
		{"all", true, ""},
		{"GPU-e1924eea", false, "GPU-e1924eea"},
		{"GPU-e1924eea-b9bb-d537-39f2-b345087fa145,1", false, "GPU-e1924eea-b9bb-d537-39f2-b345087fa145,1"},
	}
	for _, c := range cases {
		sel, err := ParseGPUFlag(c.text)
		if err != nil || sel.All != c.all || strings.Join(sel.IDs, ",") != c.ids || sel.Source != SourceFlag || sel.Text != c.text {
			t.Errorf("ParseGPUFlag(%q) = %+v, %v", c.text, sel, err)
		}
	}
}

// TestGPUFlagRefusals: each refusal says what was wrong and what to pass.
func TestGPUFlagRefusals(t *testing.T) {
	cases := []struct{ text, want string }{
		{"", `--gpu "": ` + gpuWant},
		{"-1", "--gpu -1: want a GPU index ≥ 0"},
		{"0,-1", `--gpu 0,-1: entry 2 ("-1"): want a GPU index ≥ 0`},
		{"all,0", `--gpu all,0: entry 1 ("all"): all stands alone: it means every GPU the driver lists; pass --gpu all, or a list of indices and UUIDs without it`},
		{"0,,1", `--gpu 0,,1: entry 2 (""): empty: an entry is missing between commas; ` + gpuWant},
		{"0,", `--gpu 0,: entry 2 (""): empty: an entry is missing between commas; ` + gpuWant},
		{"0, 1", `--gpu 0, 1: entry 2 (" 1"): not a GPU index or UUID: it holds a blank (write the list without spaces, as 0,1,2,3); ` + gpuWant},
		{"MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a", "--gpu MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a: " + migRefusal},
		{"GPU-", "--gpu GPU-: a UUID prefix with nothing after GPU-; " + gpuWant},
		{"gpu0", "--gpu gpu0: not a GPU index or a GPU-… UUID; " + gpuWant},
		{"All", "--gpu All: not a GPU index or a GPU-… UUID; " + gpuWant},
		{"1048577", "--gpu 1048577: an index past 1048576, which no driver numbers; " + gpuWant},
		{"99999999999999999999", "--gpu 99999999999999999999: an index past 1048576, which no driver numbers; " + gpuWant},
	}
	for _, c := range cases {
		_, err := ParseGPUFlag(c.text)
		if err == nil || err.Error() != c.want {
			t.Errorf("ParseGPUFlag(%q) = %v\nwant %s", c.text, err, c.want)
		}
	}
	// The largest index written is taken.
	if _, err := ParseGPUFlag("1048576"); err != nil {
		t.Errorf("--gpu 1048576: %v", err)
	}
}

func env(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

// TestGPUFromEnv: without --gpu, CUDA_VISIBLE_DEVICES as CUDA reads it, else
// GPU 0; where CUDA would see no GPU or only part of the list, a refusal
// naming what CUDA would see and what to pass.
func TestGPUFromEnv(t *testing.T) {
	sel, err := SelectFromEnv(env(nil))
	if err != nil || sel.Source != SourceDefault || strings.Join(sel.IDs, ",") != "0" || sel.NeedsList() {
		t.Errorf("unset: %+v, %v", sel, err)
	}
	sel, err = SelectFromEnv(env(map[string]string{EnvCUDAVisibleDevices: "2,GPU-8932f937", EnvCUDADeviceOrder: "PCI_BUS_ID"}))
	if err != nil || sel.Source != SourceCUDA || strings.Join(sel.IDs, ",") != "2,GPU-8932f937" || !sel.PCIBusOrder || !sel.NeedsList() {
		t.Errorf("set: %+v, %v", sel, err)
	}
	cases := []struct{ value, want string }{
		{"", "CUDA_VISIBLE_DEVICES is set and empty: CUDA sees no GPU, so there is no GPU to sample; pass --gpu, or unset CUDA_VISIBLE_DEVICES to sample GPU 0"},
		{"0,2,-1,1", `CUDA_VISIBLE_DEVICES="0,2,-1,1": entry 3 ("-1") is a negative index; CUDA stops reading at the first invalid entry, so the command sees only 0,2: pass --gpu 0,2 to sample exactly those, or fix CUDA_VISIBLE_DEVICES`},
		{"-1", `CUDA_VISIBLE_DEVICES="-1": its first entry "-1" is a negative index, and CUDA stops reading at the first invalid entry, so CUDA sees no GPU and there is no GPU to sample; pass --gpu, or fix CUDA_VISIBLE_DEVICES`},
		{"0,1,", `CUDA_VISIBLE_DEVICES="0,1,": entry 3 ("") is empty: an entry is missing between commas; CUDA stops reading at the first invalid entry, so the command sees only 0,1: pass --gpu 0,1 to sample exactly those, or fix CUDA_VISIBLE_DEVICES`},
		{"0, 1", `CUDA_VISIBLE_DEVICES="0, 1": entry 2 (" 1") is not a GPU index or UUID: it holds a blank (write the list without spaces, as 0,1,2,3); CUDA stops reading at the first invalid entry, so the command sees only 0: pass --gpu 0 to sample exactly those, or fix CUDA_VISIBLE_DEVICES`},
		{"all", `CUDA_VISIBLE_DEVICES="all": its first entry "all" is not a GPU index or a GPU-… UUID, and CUDA stops reading at the first invalid entry, so CUDA sees no GPU and there is no GPU to sample; pass --gpu, or fix CUDA_VISIBLE_DEVICES`},
		{"1,MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a", "CUDA_VISIBLE_DEVICES=1,MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a: entry 2 (MIG-ce861fb0-a248-58ce-a9a8-f9adbc22a66a): " + migRefusal},
	}
	for _, c := range cases {
		_, err := SelectFromEnv(env(map[string]string{EnvCUDAVisibleDevices: c.value}))
		if err == nil || err.Error() != c.want {
			t.Errorf("CUDA_VISIBLE_DEVICES=%q: %v\nwant %s", c.value, err, c.want)
		}
	}
}

func resolve(t *testing.T, sel Selection, listed []GPU) (*Resolved, error) {
	t.Helper()
	return sel.Resolve(listed)
}

func mustFlag(t *testing.T, text string) Selection {
	t.Helper()
	sel, err := ParseGPUFlag(text)
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

func mustEnv(t *testing.T, vars map[string]string) Selection {
	t.Helper()
	sel, err := SelectFromEnv(env(vars))
	if err != nil {
		t.Fatal(err)
	}
	return sel
}

// TestGPUResolveReal resolves selections against the GPUs real boxes
// listed: indices, all, UUIDs and their prefixes (one ambiguous on the real
// box), and CUDA_VISIBLE_DEVICES, whose indices are refused on the box of
// two GPU models unless CUDA_DEVICE_ORDER=PCI_BUS_ID, and taken on the box
// of four identical GPUs.
func TestGPUResolveReal(t *testing.T) {
	mixed, _ := realList(t, "list-5gpu-mixed.csv")
	same, _ := realList(t, "list-L-4x3090.txt")
	ok := []struct {
		name    string
		sel     Selection
		listed  []GPU
		indices string
		status  string
	}{
		{"all", mustFlag(t, "all"), mixed, "0,1,2,3,4", "GPUs 0,1,2,3,4 chosen by --gpu all"},
		{"TP=4 by index", mustFlag(t, "3,2,1,0"), same, "0,1,2,3", "GPUs 0,1,2,3 chosen by --gpu 3,2,1,0"},
		{"one index", mustFlag(t, "1"), mixed, "1", "GPU 1 chosen by --gpu 1"},
		{"UUID", mustFlag(t, "GPU-15ea7bf9-1a0e-2d7f-9c62-c28e5ca1aaf1"), mixed, "1",
			"GPU 1 chosen by --gpu GPU-15ea7bf9-1a0e-2d7f-9c62-c28e5ca1aaf1 (GPU-15ea7bf9-1a0e-2d7f-9c62-c28e5ca1aaf1 is GPU 1)"},
		{"UUID prefixes and an index", mustFlag(t, "GPU-ff33,GPU-3,0"), mixed, "0,2,4",
			"GPUs 0,2,4 chosen by --gpu GPU-ff33,GPU-3,0 (GPU-ff33 is GPU 4, GPU-3 is GPU 2)"},
		{"CUDA indices, identical GPUs", mustEnv(t, map[string]string{EnvCUDAVisibleDevices: "2,1"}), same, "1,2",
			"GPUs 1,2 chosen by CUDA_VISIBLE_DEVICES=2,1 (no --gpu; CUDA device 0 is GPU 2, CUDA device 1 is GPU 1)"},
		{"CUDA indices, PCI bus order", mustEnv(t, map[string]string{EnvCUDAVisibleDevices: "1,0", EnvCUDADeviceOrder: "PCI_BUS_ID"}), mixed, "0,1",
			"GPUs 0,1 chosen by CUDA_VISIBLE_DEVICES=1,0 (no --gpu; CUDA device 0 is GPU 1, CUDA device 1 is GPU 0)"},
		{"CUDA UUIDs, mixed box", mustEnv(t, map[string]string{EnvCUDAVisibleDevices: "GPU-15ea7bf9,GPU-f3da2e71"}), mixed, "0,1",
			"GPUs 0,1 chosen by CUDA_VISIBLE_DEVICES=GPU-15ea7bf9,GPU-f3da2e71 (no --gpu; CUDA device 0 is GPU 1, CUDA device 1 is GPU 0)"},
		{"default", DefaultSelection(), nil, "0", "GPU 0 by default: no --gpu, and CUDA_VISIBLE_DEVICES is not set"},
		{"indices unlisted", GPUIndices(5, 3), nil, "3,5", "GPUs 3,5 chosen by --gpu 5,3"},
	}
	for _, c := range ok {
		r, err := resolve(t, c.sel, c.listed)
		if err != nil {
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if JoinIndices(r.Indices) != c.indices || r.String() != c.status {
			t.Errorf("%s: indices %v, status %q\nwant %s, %q", c.name, r.Indices, r.String(), c.indices, c.status)
		}
	}

	mixedList := "the driver lists GPU 0 GPU-f3da2e71-6e43-729a-e3ae-f731ed96d50c (GeForce GTX 1060 6GB), 1 GPU-15ea7bf9-1a0e-2d7f-9c62-c28e5ca1aaf1 (GeForce GTX 1080 Ti), 2 GPU-3dc4f2b0-6e1b-c088-c342-4367c334795a (GeForce GTX 1060 6GB), 3 GPU-03ddeff3-19c4-6676-d02d-6942bd80630d (GeForce GTX 1060 6GB), 4 GPU-ff3318a7-f0dd-dc57-1fb8-cc95ba35c56e (GeForce GTX 1060 6GB)"
	bad := []struct {
		name   string
		sel    Selection
		listed []GPU
		want   string
	}{
		{"unknown index", mustFlag(t, "all"), nil, "--gpu all: the driver lists no GPU"},
		{"index past the box", mustFlag(t, "0,5"), mixed, "--gpu 0,5: there is no GPU 5 on this box: " + mixedList},
		{"ambiguous prefix", mustFlag(t, "GPU-f"), mixed,
			"--gpu GPU-f: UUID prefix GPU-f names 2 GPUs (GPU 0 GPU-f3da2e71-6e43-729a-e3ae-f731ed96d50c, GPU 4 GPU-ff3318a7-f0dd-dc57-1fb8-cc95ba35c56e): give enough of the UUID to name one"},
		{"unknown UUID", mustFlag(t, "GPU-8932f937"), mixed, "--gpu GPU-8932f937: no GPU on this box has UUID GPU-8932f937 (or one starting with it): " + mixedList},
		{"a UUID is not case-folded", mustFlag(t, "GPU-F3DA2E71"), mixed, "--gpu GPU-F3DA2E71: no GPU on this box has UUID GPU-F3DA2E71 (or one starting with it): " + mixedList},
		{"named twice", mustFlag(t, "1,GPU-15ea"), mixed, "--gpu 1,GPU-15ea names GPU 1 twice (as 1 and as GPU-15ea): name each GPU once"},
		{"index twice", GPUIndices(2, 2), nil, "--gpu 2,2 names GPU 2 twice (as 2 and as 2): name each GPU once"},
		{"CUDA indices, mixed box", mustEnv(t, map[string]string{EnvCUDAVisibleDevices: "0,1"}), mixed,
			"CUDA_VISIBLE_DEVICES=0,1 names GPUs by CUDA index, and CUDA_DEVICE_ORDER is not set, so CUDA numbers the GPUs fastest first, which on this box of different GPUs (GeForce GTX 1060 6GB; GeForce GTX 1080 Ti) need not be nvidia-smi's order: set CUDA_DEVICE_ORDER=PCI_BUS_ID (for the command too), name the GPUs by UUID, or pass --gpu"},
		{"CUDA indices, fastest first", mustEnv(t, map[string]string{EnvCUDAVisibleDevices: "3", EnvCUDADeviceOrder: "FASTEST_FIRST"}), mixed,
			"CUDA_VISIBLE_DEVICES=3 names GPUs by CUDA index, and CUDA_DEVICE_ORDER is FASTEST_FIRST, so CUDA numbers the GPUs fastest first, which on this box of different GPUs (GeForce GTX 1060 6GB; GeForce GTX 1080 Ti) need not be nvidia-smi's order: set CUDA_DEVICE_ORDER=PCI_BUS_ID (for the command too), name the GPUs by UUID, or pass --gpu"},
		{"CUDA index past the box", mustEnv(t, map[string]string{EnvCUDAVisibleDevices: "4,5", EnvCUDADeviceOrder: "PCI_BUS_ID"}), mixed,
			"CUDA_VISIBLE_DEVICES=4,5: there is no GPU 5 on this box: " + mixedList + "; CUDA stops reading at an entry it cannot find, so the command sees only 4: pass --gpu 4 to sample exactly those, or fix CUDA_VISIBLE_DEVICES"},
		{"CUDA UUID not on the box", mustEnv(t, map[string]string{EnvCUDAVisibleDevices: "GPU-8932f937,1"}), mixed,
			"CUDA_VISIBLE_DEVICES=GPU-8932f937,1: no GPU on this box has UUID GPU-8932f937 (or one starting with it): " + mixedList + "; CUDA stops reading at an entry it cannot find, so the command sees no GPU: fix CUDA_VISIBLE_DEVICES, or pass --gpu"},
		{"negative, programmatic", GPUIndices(-1), nil, "--gpu -1: -1 is negative: want a GPU index ≥ 0"},
	}
	for _, c := range bad {
		_, err := resolve(t, c.sel, c.listed)
		if err == nil || err.Error() != c.want || !errors.Is(err, ErrSelect) {
			t.Errorf("%s: %v\nwant %s (and ErrSelect)", c.name, err, c.want)
		}
	}
}

// TestGPUMIGRefused: the MIG instances a real A100 box listed are refused
// wherever they are named, and their parent GPUs are listed as whole GPUs.
func TestGPUMIGRefused(t *testing.T) {
	gpus, migs := realList(t, "list-L-4xA100-mig.txt")
	if len(gpus) != 4 || len(migs) != 4 {
		t.Fatalf("%d GPUs, %d MIG instances", len(gpus), len(migs))
	}
	for _, m := range migs {
		if _, err := ParseGPUFlag(m); err == nil || !strings.Contains(err.Error(), "a MIG instance, and clockgate samples whole GPUs") {
			t.Errorf("--gpu %s: %v", m, err)
		}
		if _, err := ParseGPUFlag("1," + m); err == nil || !strings.Contains(err.Error(), "entry 2") || !strings.Contains(err.Error(), migRefusal) {
			t.Errorf("--gpu 1,%s: %v", m, err)
		}
		if _, err := SelectFromEnv(env(map[string]string{EnvCUDAVisibleDevices: m})); err == nil || !strings.HasSuffix(err.Error(), migRefusal) {
			t.Errorf("CUDA_VISIBLE_DEVICES=%s: %v", m, err)
		}
		// A Selection built by hand is refused at Resolve too.
		if _, err := (Selection{Source: SourceFlag, Text: m, IDs: []string{m}}).Resolve(gpus); err == nil || !errors.Is(err, ErrSelect) || !strings.Contains(err.Error(), migRefusal) {
			t.Errorf("Resolve(%s): %v", m, err)
		}
	}
	// A prefix of the MIG GPU's own UUID names the whole GPU.
	r, err := mustFlag(t, "GPU-513536b6").Resolve(gpus)
	if err != nil || JoinIndices(r.Indices) != "0" {
		t.Errorf("GPU-513536b6: %v, %v", r, err)
	}
}

// TestGPUNeedsList: only what cannot be resolved from indices alone lists
// the box's GPUs.
func TestGPUNeedsList(t *testing.T) {
	for _, c := range []struct {
		sel  Selection
		want bool
	}{
		{DefaultSelection(), false},
		{GPUIndices(0, 1, 2, 3), false},
		{mustFlag(t, "all"), true},
		{mustFlag(t, "0,GPU-15ea"), true},
		{mustEnv(t, map[string]string{EnvCUDAVisibleDevices: "0"}), true},
	} {
		if got := c.sel.NeedsList(); got != c.want {
			t.Errorf("%+v: NeedsList %v", c.sel, got)
		}
	}
}
