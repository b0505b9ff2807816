package sampler

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/clockgate/clockgate/atomicfile"
	"github.com/clockgate/clockgate/clocks"
)

// MemoryRecord is a leg's memory record (SPEC §2.2), as the sampler writes
// it: the largest sum, over the leg's GPUs, of the GPU memory used at one
// reading; the largest sum of the host RSS of the leg's own processes at
// one reading (null, not recorded, where the leg names no process of its
// own: no --pid, no command, no engine; or an imported leg, SPEC §12.1);
// and the number of readings.
type MemoryRecord struct {
	PeakGPUMemoryMiB float64  `json:"peak_gpu_memory_mib"`
	PeakHostRSSMiB   *float64 `json:"peak_host_rss_mib"`
	N                int      `json:"n"`
}

// MemoryPeaks folds readings into a MemoryRecord. The zero value is ready
// to use; it is not safe for concurrent use.
type MemoryPeaks struct {
	n       int
	gpu     float64
	rss     float64
	hasRSS  bool
	missing string // why a reading had no GPU memory, the first time
}

// Add folds one reading: its samples (one per GPU, each with
// MemoryUsedMiB) and the host RSS of the leg's own processes then (nil
// where the leg has none). A reading with a GPU whose memory used is not
// known makes the whole record unknown: Record then refuses.
func (m *MemoryPeaks) Add(samples []*clocks.Sample, hostRSSMiB *float64) {
	m.n++
	sum := 0.0
	for _, s := range samples {
		if s.MemoryUsedMiB == nil {
			if m.missing == "" {
				m.missing = fmt.Sprintf("GPU %d (%s) gave no memory used at reading %d", s.GPUIndex, s.GPUUUID, m.n)
			}
			continue
		}
		sum += *s.MemoryUsedMiB
	}
	if len(samples) == 0 && m.missing == "" {
		m.missing = fmt.Sprintf("reading %d had no GPU", m.n)
	}
	m.gpu = math.Max(m.gpu, sum)
	if hostRSSMiB != nil {
		m.rss, m.hasRSS = math.Max(m.rss, *hostRSSMiB), true
	}
}

// AddHostRSS folds a host RSS read apart from the readings (the sampler
// reads it beside them): it counts toward the peak, not toward N.
func (m *MemoryPeaks) AddHostRSS(mib float64) {
	m.rss, m.hasRSS = math.Max(m.rss, mib), true
}

// N is the number of readings folded.
func (m *MemoryPeaks) N() int { return m.n }

// Record returns the memory record of the readings folded, or why there is
// none: no reading, a reading without a GPU's memory used, or no memory
// used at all (a peak of 0 MiB is no measurement: SPEC §2.2 wants > 0).
func (m *MemoryPeaks) Record() (*MemoryRecord, error) {
	switch {
	case m.n == 0:
		return nil, errors.New("no reading was taken")
	case m.missing != "":
		return nil, errors.New(m.missing)
	case !(m.gpu > 0):
		return nil, fmt.Errorf("every one of the %d readings gave 0 MiB of GPU memory used", m.n)
	}
	rec := &MemoryRecord{PeakGPUMemoryMiB: m.gpu, N: m.n}
	if m.hasRSS {
		rss := m.rss
		rec.PeakHostRSSMiB = &rss
	}
	return rec, nil
}

// JSON is the record as one line of JSON, keys in SPEC §2.2's order.
func (r *MemoryRecord) JSON() []byte {
	b := []byte(`{"peak_gpu_memory_mib":`)
	b = strconv.AppendFloat(b, r.PeakGPUMemoryMiB, 'f', -1, 64)
	b = append(b, `,"peak_host_rss_mib":`...)
	if r.PeakHostRSSMiB != nil {
		b = strconv.AppendFloat(b, *r.PeakHostRSSMiB, 'f', -1, 64)
	} else {
		b = append(b, "null"...)
	}
	b = append(b, `,"n":`...)
	b = strconv.AppendInt(b, int64(r.N), 10)
	return append(b, "}\n"...)
}

// WriteMemoryRecord writes rec to path atomically, creating missing parent
// directories and never replacing a file (atomicfile.ErrExists).
func WriteMemoryRecord(path string, rec *MemoryRecord) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.WriteNew(path, rec.JSON(), 0o644)
}

// legRE is a leg's run directory name, r<N>.
var legRE = regexp.MustCompile(`^r[1-9][0-9]*$`)

// MemoryPath returns where the memory record of the leg whose clock prefix
// is prefix belongs (SPEC §2.2): for TREE/clocks/<model>/<engine>/r<N>,
// TREE/memory/<model>/<engine>/r<N>.summary.json. ok is false for a
// prefix not in that layout.
func MemoryPath(prefix string) (path string, ok bool) {
	clean := filepath.Clean(prefix)
	run := filepath.Base(clean)
	engine := filepath.Dir(clean)
	model := filepath.Dir(engine)
	clocksDir := filepath.Dir(model)
	if !legRE.MatchString(run) || filepath.Base(clocksDir) != "clocks" || bad(filepath.Base(engine)) || bad(filepath.Base(model)) {
		return "", false
	}
	return filepath.Join(filepath.Dir(clocksDir), "memory", filepath.Base(model), filepath.Base(engine), run+".summary.json"), true
}

func bad(elem string) bool { return elem == "." || elem == ".." || elem == "/" || elem == "" }

// CheckTreePrefix refuses (ErrConfig) a prefix inside a directory named
// clocks that is not laid out as clocks/<model>/<engine>/r<N> (SPEC §12.1):
// summarize would find its stream one level off and the leg without its
// memory record, an hour later. A model id holding a "/" is named as such,
// with the one-segment name to use instead.
func CheckTreePrefix(prefix string) error {
	if _, ok := MemoryPath(prefix); ok {
		return nil
	}
	clean := filepath.Clean(prefix)
	var parts []string // the path from the clocks directory down
	for p := clean; ; p = filepath.Dir(p) {
		base := filepath.Base(p)
		if p == filepath.Dir(p) || base == "." || base == ".." {
			return nil
		}
		if base == "clocks" && len(parts) > 0 {
			break
		}
		parts = append([]string{base}, parts...)
	}
	tree := strings.TrimSuffix(clean, string(filepath.Separator)+filepath.Join(parts...))
	want := fmt.Sprintf("%s/<model>/<engine>/r<N> (one path segment each, N a whole number from 1)", tree)
	if len(parts) == 5 && legRE.MatchString(parts[2]) && parts[3] == "hosts" && parts[4] != "" {
		// One host's streams of a multi-host leg (SPEC §12.3):
		// clocks/<model>/<engine>/r<N>/hosts/<host>.
		return nil
	}
	if len(parts) == 4 && legRE.MatchString(parts[3]) {
		model := parts[0] + "/" + parts[1]
		return fmt.Errorf("%w: output prefix %s: the model id %q holds a \"/\", which makes a directory of each part, and summarize would not find this leg: want %s; give each model one path segment, e.g. %s (in bash: ${model//\\//--}), under bench/, memory/ and clocks/ alike",
			ErrConfig, prefix, model, want, filepath.Join(tree, parts[0]+"--"+parts[1], parts[2], parts[3]))
	}
	return fmt.Errorf("%w: output prefix %s is inside %s but is not %s, so summarize would not find this leg; e.g. %s, or record it outside clocks/ and name its memory record with --memory-out FILE",
		ErrConfig, prefix, tree, want, filepath.Join(tree, "llama", "vllm", "r1"))
}

// HostRSS reads the host RSS of the leg's own processes (SPEC §11.1): the
// roots given and their descendants, and every process that was one of
// them at an earlier reading and is still the same process (a worker that
// reparented away), summed from /proc/PID/status VmRSS.
type HostRSS struct {
	root  string
	roots []int
	// seen are the processes own at an earlier reading, by pid, with
	// their start time (a pid reused by another process is not own).
	seen map[int]string
}

// NewHostRSS reads the RSS of the trees under roots (pids ≤ 0 ignored) in
// the /proc at procRoot ("" is /proc); nil when no root is given.
func NewHostRSS(procRoot string, roots ...int) *HostRSS {
	if procRoot == "" {
		procRoot = "/proc"
	}
	h := &HostRSS{root: procRoot, seen: map[int]string{}}
	for _, r := range roots {
		if r > 0 {
			h.roots = append(h.roots, r)
		}
	}
	if len(h.roots) == 0 {
		return nil
	}
	return h
}

// Read returns the summed RSS, in MiB, of the processes own now, and how
// many there were. A process that ends while being read counts nothing.
func (h *HostRSS) Read() (mib float64, procs int) {
	parent, start := procTreeStart(h.root)
	own := ownSet(parent, h.roots)
	for pid, st := range h.seen {
		if start[pid] == st {
			own[pid] = true
		} else {
			delete(h.seen, pid)
		}
	}
	kb := int64(0)
	for pid := range own {
		if _, visible := parent[pid]; !visible {
			continue
		}
		h.seen[pid] = start[pid]
		if n, ok := vmRSSKB(filepath.Join(h.root, strconv.Itoa(pid), "status")); ok {
			kb += n
			procs++
		}
	}
	return float64(kb) / 1024, procs
}

// vmRSSKB reads VmRSS, in kB, from a /proc/PID/status file; ok is false
// where it has none (a kernel thread, a zombie) or cannot be read.
func vmRSSKB(path string) (int64, bool) {
	data, err := os.ReadFile(path)
	if err != nil {
		return 0, false
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		rest, ok := strings.CutPrefix(sc.Text(), "VmRSS:")
		if !ok {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return 0, false
		}
		n, err := strconv.ParseInt(f[0], 10, 64)
		return n, err == nil && n >= 0
	}
	return 0, false
}

// procTreeStart reads /proc under root: every visible pid's parent and
// start time (field 22 of /proc/PID/stat).
func procTreeStart(root string) (map[int]int, map[int]string) {
	parent, start := map[int]int{}, map[int]string{}
	ents, err := os.ReadDir(root)
	if err != nil {
		return parent, start
	}
	for _, e := range ents {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid <= 0 {
			continue
		}
		data, err := os.ReadFile(filepath.Join(root, e.Name(), "stat"))
		if err != nil {
			continue
		}
		k := bytes.LastIndexByte(data, ')')
		if k < 0 {
			continue
		}
		f := strings.Fields(string(data[k+1:]))
		if len(f) < 2 {
			continue
		}
		ppid, err := strconv.Atoi(f[1])
		if err != nil {
			continue
		}
		parent[pid] = ppid
		if len(f) >= 20 {
			start[pid] = f[19]
		}
	}
	return parent, start
}
