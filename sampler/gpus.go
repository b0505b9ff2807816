package sampler

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
)

// The environment variables CUDA reads to choose its devices.
const (
	// EnvCUDAVisibleDevices lists the GPUs a CUDA program sees, in the order
	// it numbers them.
	EnvCUDAVisibleDevices = "CUDA_VISIBLE_DEVICES"
	// EnvCUDADeviceOrder is FASTEST_FIRST (CUDA's default) or PCI_BUS_ID.
	EnvCUDADeviceOrder = "CUDA_DEVICE_ORDER"
)

// Where a Selection came from.
const (
	// SourceFlag is --gpu.
	SourceFlag = "--gpu"
	// SourceCUDA is CUDA_VISIBLE_DEVICES, read when --gpu is not given.
	SourceCUDA = EnvCUDAVisibleDevices
	// SourceDefault is GPU 0: no --gpu, and CUDA_VISIBLE_DEVICES not set.
	SourceDefault = "default"
)

// maxGPUIndex bounds a GPU index as written: no driver numbers GPUs past
// it, and an index that large is a typo.
const maxGPUIndex = 1 << 20

// ErrSelect says the GPUs asked for are not what the box has: an unknown
// index or UUID, an ambiguous UUID prefix, a GPU named twice, a MIG
// instance, or CUDA_VISIBLE_DEVICES naming no GPU. A command reports it as
// a usage error.
var ErrSelect = errors.New("GPU selection")

// selectError is an error that is ErrSelect, whose message is its own.
type selectError struct{ msg string }

func (e *selectError) Error() string        { return e.msg }
func (e *selectError) Is(target error) bool { return target == ErrSelect }

func selectErrf(format string, args ...any) error {
	return &selectError{msg: fmt.Sprintf(format, args...)}
}

// GPU is one GPU as the driver lists it.
type GPU struct {
	// Index is the GPU's nvidia-smi (NVML) index.
	Index int
	// UUID is its GPU-… UUID.
	UUID string
	// Name is its product name.
	Name string
}

// Selection is the GPUs a leg asks to sample, as written, before it is
// resolved against the GPUs the driver lists.
type Selection struct {
	// Source is SourceFlag, SourceCUDA or SourceDefault.
	Source string
	// Text is the value as written (--gpu's, or CUDA_VISIBLE_DEVICES').
	Text string
	// All selects every GPU the driver lists (--gpu all).
	All bool
	// IDs are the entries in the order written: an index ("3") or a GPU
	// UUID or a unique prefix of one ("GPU-5f3c…").
	IDs []string
	// PCIBusOrder says CUDA_DEVICE_ORDER=PCI_BUS_ID was set, so CUDA numbers
	// GPUs as nvidia-smi does (SourceCUDA only).
	PCIBusOrder bool
	// DeviceOrder is CUDA_DEVICE_ORDER as set, "" when not (SourceCUDA only).
	DeviceOrder string
}

// GPUIndices selects the GPUs with the given indices, as --gpu would.
func GPUIndices(indices ...int) Selection {
	ids := make([]string, len(indices))
	for i, n := range indices {
		ids[i] = strconv.Itoa(n)
	}
	return Selection{Source: SourceFlag, Text: strings.Join(ids, ","), IDs: ids}
}

// DefaultSelection is GPU 0, chosen because neither --gpu nor
// CUDA_VISIBLE_DEVICES says otherwise.
func DefaultSelection() Selection {
	return Selection{Source: SourceDefault, Text: "0", IDs: []string{"0"}}
}

// gpuWant says what --gpu takes.
const gpuWant = "want a GPU index (3), a comma list (0,1,2,3), all, or GPU UUIDs (GPU-5f3c… for NVIDIA, abff74a1-… for AMD, or a prefix that names one GPU)"

// ParseGPUFlag reads --gpu: "all", or a comma list of GPU indices and GPU
// UUIDs (a UUID may be cut to any prefix that names one GPU, as CUDA
// allows). The error says what to pass instead; MIG instances are refused.
func ParseGPUFlag(text string) (Selection, error) {
	sel := Selection{Source: SourceFlag, Text: text}
	if text == "all" {
		sel.All = true
		return sel, nil
	}
	if text == "" {
		return sel, fmt.Errorf("--gpu %q: %s", text, gpuWant)
	}
	entries := strings.Split(text, ",")
	for i, e := range entries {
		where := fmt.Sprintf("--gpu %s", text)
		if len(entries) > 1 {
			where = fmt.Sprintf("--gpu %s: entry %d (%q)", text, i+1, e)
		}
		switch kind, why := classifyFlag(e); kind {
		case idIndex, idUUID:
		case idAll:
			return sel, fmt.Errorf("%s: all stands alone: it means every GPU the driver lists; pass --gpu all, or a list of indices and UUIDs without it", where)
		case idNegative:
			return sel, fmt.Errorf("%s: want a GPU index ≥ 0", where)
		case idMIG:
			return sel, fmt.Errorf("%s: %s", where, migRefusal)
		default:
			return sel, fmt.Errorf("%s: %s; %s", where, why, gpuWant)
		}
	}
	sel.IDs = entries
	return sel, nil
}

// SelectFromEnv is the selection when --gpu is not given: the GPUs
// CUDA_VISIBLE_DEVICES names when it is set (lookup reads the
// environment), else GPU 0 (DefaultSelection). CUDA_VISIBLE_DEVICES is read
// as CUDA reads it: a comma list of GPU indices and GPU UUIDs or UUID
// prefixes. Where CUDA would see no GPU (the variable set but empty, or its
// first entry invalid), or only some of those listed (CUDA stops at the first
// invalid entry), it is refused, naming what CUDA would see and what to
// pass instead; so are MIG instances and blanks.
func SelectFromEnv(lookup func(string) (string, bool)) (Selection, error) {
	text, ok := lookup(EnvCUDAVisibleDevices)
	if !ok {
		return DefaultSelection(), nil
	}
	order, _ := lookup(EnvCUDADeviceOrder)
	sel := Selection{Source: SourceCUDA, Text: text, DeviceOrder: order, PCIBusOrder: order == "PCI_BUS_ID"}
	if text == "" {
		return sel, fmt.Errorf("%s is set and empty: CUDA sees no GPU, so there is no GPU to sample; pass --gpu, or unset %s to sample GPU 0",
			EnvCUDAVisibleDevices, EnvCUDAVisibleDevices)
	}
	entries := strings.Split(text, ",")
	for i, e := range entries {
		kind, why := classify(e)
		switch kind {
		case idIndex, idUUID:
			continue
		case idMIG:
			return sel, fmt.Errorf("%s=%s: entry %d (%s): %s", EnvCUDAVisibleDevices, text, i+1, e, migRefusal)
		}
		if why == "" {
			why = "not a GPU index or a GPU-… UUID"
		}
		if i == 0 {
			return sel, fmt.Errorf("%s=%q: its first entry %q is %s, and CUDA stops reading at the first invalid entry, so CUDA sees no GPU and there is no GPU to sample; pass --gpu, or fix %s",
				EnvCUDAVisibleDevices, text, e, why, EnvCUDAVisibleDevices)
		}
		seen := strings.Join(entries[:i], ",")
		return sel, fmt.Errorf("%s=%q: entry %d (%q) is %s; CUDA stops reading at the first invalid entry, so the command sees only %s: pass --gpu %s to sample exactly those, or fix %s",
			EnvCUDAVisibleDevices, text, i+1, e, why, seen, seen, EnvCUDAVisibleDevices)
	}
	sel.IDs = entries
	return sel, nil
}

// migRefusal says why a MIG instance cannot be sampled.
const migRefusal = "a MIG instance, and clockgate samples whole GPUs: a MIG instance and a GPU in MIG mode give no utilization.gpu, which tells busy samples from idle ones; record the leg on a GPU with MIG disabled and name it by index or by its GPU-… UUID"

type idKind int

const (
	idInvalid idKind = iota
	idIndex
	idUUID
	idAll
	idNegative
	idMIG
)

// classify says what one entry of a list is, and why it is invalid when
// it is.
func classify(e string) (idKind, string) {
	switch {
	case e == "":
		return idInvalid, "empty: an entry is missing between commas"
	case strings.IndexFunc(e, unicode.IsSpace) >= 0:
		return idInvalid, "not a GPU index or UUID: it holds a blank (write the list without spaces, as 0,1,2,3)"
	case e == "all":
		return idAll, ""
	case strings.HasPrefix(e, "MIG-"):
		return idMIG, ""
	case strings.HasPrefix(e, "GPU-"):
		if len(e) == len("GPU-") {
			return idInvalid, "a UUID prefix with nothing after GPU-"
		}
		return idUUID, ""
	case isDigits(e):
		if _, err := indexOf(e); err != nil {
			return idInvalid, err.Error()
		}
		return idIndex, ""
	case len(e) > 1 && e[0] == '-' && isDigits(e[1:]):
		return idNegative, "a negative index"
	}
	return idInvalid, "not a GPU index or a GPU-… UUID"
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return s != ""
}

func indexOf(e string) (int, error) {
	n, err := strconv.Atoi(e)
	if err != nil || n > maxGPUIndex {
		return 0, fmt.Errorf("an index past %d, which no driver numbers", maxGPUIndex)
	}
	return n, nil
}

// NeedsList reports whether resolving the selection needs the list of the
// box's GPUs: for all, for UUIDs, and for CUDA_VISIBLE_DEVICES (whose
// indices are checked against the GPUs' names). A list of indices from
// --gpu, or the default GPU 0, does not: nvidia-smi and NVML refuse an
// index they do not know, and a GPU the selection does not name is never
// queried, so a broken GPU elsewhere on the box does not stop the leg.
func (s Selection) NeedsList() bool {
	if s.All || s.Source == SourceCUDA {
		return true
	}
	for _, e := range s.IDs {
		if kind, _ := s.classify(e); kind == idUUID {
			return true
		}
	}
	return false
}

// classify is classify for the selection's source: --gpu also takes AMD
// UUIDs, which CUDA_VISIBLE_DEVICES does not.
func (s Selection) classify(e string) (idKind, string) {
	if s.Source == SourceFlag {
		return classifyFlag(e)
	}
	return classify(e)
}

// classifyFlag is classify for an entry of --gpu, which also takes a GPU
// UUID as amd-smi prints it (abff74a1-0000-1000-80d1-3c23a9580558) or a
// prefix of one: hex digits and dashes, not all digits (those are an
// index), at least amdUUIDMin of them.
func classifyFlag(e string) (idKind, string) {
	kind, why := classify(e)
	if kind == idInvalid && isAMDUUID(e) {
		return idUUID, ""
	}
	return kind, why
}

// amdUUIDMin is the shortest AMD UUID prefix --gpu takes: one shorter is
// more likely a typing error than a prefix that names one GPU.
const amdUUIDMin = 4

func isAMDUUID(e string) bool {
	if len(e) < amdUUIDMin || e[0] == '-' {
		return false
	}
	digits := true
	for _, c := range e {
		switch {
		case c >= '0' && c <= '9':
		case c >= 'a' && c <= 'f' || c >= 'A' && c <= 'F' || c == '-':
			digits = false
		default:
			return false
		}
	}
	return !digits
}

// Resolved is a selection resolved against the box: the GPU indices to
// sample, sorted, and why they were chosen.
type Resolved struct {
	// Indices are the GPUs to sample, sorted by index, each once.
	Indices []int
	sel     Selection
	// byEntry is the GPU each entry of sel.IDs named.
	byEntry []int
}

// Resolve turns the selection into sorted GPU indices. listed is every GPU
// the driver lists, nil when it was not listed (NeedsList says when it must
// be). An
// index or UUID the box does not have, a UUID prefix that names several
// GPUs, a GPU named twice, and (from CUDA_VISIBLE_DEVICES) indices that
// CUDA may number differently from nvidia-smi are refused; the error says
// what to pass instead and is ErrSelect.
func (s Selection) Resolve(listed []GPU) (*Resolved, error) {
	r := &Resolved{sel: s}
	byIndex := map[int]GPU{}
	for _, g := range listed {
		byIndex[g.Index] = g
	}
	if s.All {
		if len(listed) == 0 {
			return nil, selectErrf("--gpu all: the driver lists no GPU")
		}
		for _, g := range listed {
			r.Indices = append(r.Indices, g.Index)
		}
		sort.Ints(r.Indices)
		return r, nil
	}
	if len(s.IDs) == 0 {
		return nil, selectErrf("%s names no GPU; %s", s.describe(), gpuWant)
	}
	named := map[int]string{}
	usesIndex := false
	for i, e := range s.IDs {
		var idx int
		switch kind, why := s.classify(e); kind {
		case idIndex:
			usesIndex = true
			idx, _ = indexOf(e)
			if _, ok := byIndex[idx]; !ok && (listed != nil || s.NeedsList()) {
				return nil, selectErrf("%s: there is no GPU %d on this box: %s%s", s.describe(), idx, listing(listed), s.cudaStops(i))
			}
		case idUUID:
			var err error
			if idx, err = matchUUID(s, e, listed); err != nil {
				return nil, selectErrf("%v%s", err, s.cudaStops(i))
			}
		case idMIG:
			return nil, selectErrf("%s: %s is %s", s.describe(), e, migRefusal)
		case idNegative:
			return nil, selectErrf("%s: %s is negative: want a GPU index ≥ 0", s.describe(), e)
		default:
			return nil, selectErrf("%s: entry %d (%q) is %s; %s", s.describe(), i+1, e, why, gpuWant)
		}
		if prev, dup := named[idx]; dup {
			return nil, selectErrf("%s names GPU %d twice (as %s and as %s): name each GPU once", s.describe(), idx, prev, e)
		}
		named[idx] = e
		r.byEntry = append(r.byEntry, idx)
		r.Indices = append(r.Indices, idx)
	}
	if s.Source == SourceCUDA && usesIndex && !s.PCIBusOrder {
		if names := distinctNames(listed); len(names) > 1 {
			order := "is not set"
			if s.DeviceOrder != "" {
				order = fmt.Sprintf("is %s", s.DeviceOrder)
			}
			return nil, selectErrf("%s=%s names GPUs by CUDA index, and %s %s, so CUDA numbers the GPUs fastest first, which on this box of different GPUs (%s) need not be nvidia-smi's order: set %s=PCI_BUS_ID (for the command too), name the GPUs by UUID, or pass --gpu",
				EnvCUDAVisibleDevices, s.Text, EnvCUDADeviceOrder, order, strings.Join(names, "; "), EnvCUDADeviceOrder)
		}
	}
	sort.Ints(r.Indices)
	return r, nil
}

// cudaStops says, for CUDA_VISIBLE_DEVICES, what CUDA makes of an entry
// it cannot find at position i: it stops reading there.
func (s Selection) cudaStops(i int) string {
	if s.Source != SourceCUDA {
		return ""
	}
	if i == 0 {
		return "; CUDA stops reading at an entry it cannot find, so the command sees no GPU: fix " + EnvCUDAVisibleDevices + ", or pass --gpu"
	}
	seen := strings.Join(s.IDs[:i], ",")
	return fmt.Sprintf("; CUDA stops reading at an entry it cannot find, so the command sees only %s: pass --gpu %s to sample exactly those, or fix %s", seen, seen, EnvCUDAVisibleDevices)
}

// matchUUID finds the one GPU whose UUID is e, or starts with e.
func matchUUID(s Selection, e string, listed []GPU) (int, error) {
	var hits []GPU
	for _, g := range listed {
		if g.UUID == e {
			return g.Index, nil
		}
		if strings.HasPrefix(g.UUID, e) {
			hits = append(hits, g)
		}
	}
	switch len(hits) {
	case 1:
		return hits[0].Index, nil
	case 0:
		return 0, selectErrf("%s: no GPU on this box has UUID %s (or one starting with it): %s", s.describe(), e, listing(listed))
	}
	var names []string
	for _, g := range hits {
		names = append(names, fmt.Sprintf("GPU %d %s", g.Index, g.UUID))
	}
	return 0, selectErrf("%s: UUID prefix %s names %d GPUs (%s): give enough of the UUID to name one", s.describe(), e, len(hits), strings.Join(names, ", "))
}

// listing names every GPU the driver lists, for messages.
func listing(listed []GPU) string {
	if len(listed) == 0 {
		return "the driver lists no GPU"
	}
	parts := make([]string, len(listed))
	for i, g := range listed {
		parts[i] = fmt.Sprintf("%d %s (%s)", g.Index, g.UUID, g.Name)
	}
	return "the driver lists GPU " + strings.Join(parts, ", ")
}

// distinctNames returns the GPU names on the box, sorted, each once.
func distinctNames(listed []GPU) []string {
	seen := map[string]bool{}
	var names []string
	for _, g := range listed {
		if !seen[g.Name] {
			seen[g.Name] = true
			names = append(names, g.Name)
		}
	}
	sort.Strings(names)
	return names
}

// describe names the selection as written, for messages.
func (s Selection) describe() string {
	switch s.Source {
	case SourceCUDA:
		return fmt.Sprintf("%s=%s", EnvCUDAVisibleDevices, s.Text)
	case SourceDefault:
		return "the default GPU 0"
	}
	return "--gpu " + s.Text
}

// JoinIndices writes GPU indices as a comma list, as nvidia-smi -i takes it.
func JoinIndices(indices []int) string {
	parts := make([]string, len(indices))
	for i, n := range indices {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, ",")
}

// gpusWord is "GPU 0" or "GPUs 0,1,2,3".
func gpusWord(indices []int) string {
	if len(indices) == 1 {
		return fmt.Sprintf("GPU %d", indices[0])
	}
	return "GPUs " + JoinIndices(indices)
}

// String says which GPUs are sampled and why, for the status line:
// "GPUs 0,1,2,3 chosen by --gpu 0,1,2,3".
func (r *Resolved) String() string {
	what := gpusWord(r.Indices)
	s := r.sel
	switch s.Source {
	case SourceDefault:
		return what + " by default: no --gpu, and " + EnvCUDAVisibleDevices + " is not set"
	case SourceCUDA:
		var m []string
		for i, idx := range r.byEntry {
			m = append(m, fmt.Sprintf("CUDA device %d is GPU %d", i, idx))
		}
		return fmt.Sprintf("%s chosen by %s=%s (no --gpu; %s)", what, EnvCUDAVisibleDevices, s.Text, strings.Join(m, ", "))
	}
	if s.All {
		return what + " chosen by --gpu all"
	}
	var m []string
	for i, e := range s.IDs {
		if strings.HasPrefix(e, "GPU-") {
			m = append(m, fmt.Sprintf("%s is GPU %d", e, r.byEntry[i]))
		}
	}
	if len(m) > 0 {
		return fmt.Sprintf("%s chosen by --gpu %s (%s)", what, s.Text, strings.Join(m, ", "))
	}
	return fmt.Sprintf("%s chosen by --gpu %s", what, s.Text)
}

// listFields are the fields the GPU listing asks nvidia-smi for.
var listFields = []string{FieldIndex, FieldUUID, FieldName}

// ParseGPUList reads nvidia-smi's answer to --query-gpu=FIELDS without -i:
// one line per GPU. header is the field list the lines answer, as the query
// named it or as nvidia-smi printed it with --format=csv
// ("name, pci.bus, index, uuid"); the columns index, uuid and name are
// read and any other is skipped, so a listing captured by hand with more
// columns reads too. text is the lines, without the header. Every line must
// have every column, and no index may repeat; the GPUs come back sorted by
// index.
func ParseGPUList(header, text string) ([]GPU, error) {
	cols := splitCSV(header)
	pos := map[string]int{}
	for i, c := range cols {
		c = unitRE.ReplaceAllString(c, "")
		if f, ok := canonicalField(c); ok && (f == FieldIndex || f == FieldUUID || f == FieldName) {
			if _, dup := pos[f]; dup {
				return nil, fmt.Errorf("header column %d: %q repeats %s", i+1, cols[i], f)
			}
			pos[f] = i
		}
	}
	for _, f := range listFields {
		if _, ok := pos[f]; !ok {
			return nil, fmt.Errorf("the listing has no %s column (header %q)", f, header)
		}
	}
	var gpus []GPU
	seen := map[int]int{}
	text = strings.TrimRight(text, "\r\n")
	if strings.TrimSpace(text) == "" {
		return nil, errors.New("the listing names no GPU")
	}
	for n, line := range strings.Split(text, "\n") {
		cells := splitCSV(line)
		if len(cells) != len(cols) {
			return nil, fmt.Errorf("line %d: %d values for %d columns (%s)", n+1, len(cells), len(cols), header)
		}
		r := &Reading{}
		for _, f := range listFields {
			if err := r.set(f, cells[pos[f]]); err != nil {
				return nil, fmt.Errorf("line %d: %v", n+1, err)
			}
		}
		if prev, dup := seen[r.Index]; dup {
			return nil, fmt.Errorf("line %d: GPU %d again (first on line %d)", n+1, r.Index, prev)
		}
		seen[r.Index] = n + 1
		gpus = append(gpus, GPU{Index: r.Index, UUID: r.UUID, Name: r.Name})
	}
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].Index < gpus[j].Index })
	return gpus, nil
}
