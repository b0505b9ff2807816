package sampler

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// AMDSMIOptions configures the amd-smi backend.
type AMDSMIOptions struct {
	// Path is the amd-smi executable; "" finds "amd-smi" on PATH.
	Path string
	// GPUs selects the GPUs to read; the zero Selection is GPU 0.
	GPUs Selection
	// QueryTimeout bounds one call, and the startup probe as a whole; zero
	// means DefaultQueryTimeout.
	QueryTimeout time.Duration
	// Logf, when not nil, receives status lines.
	Logf func(format string, args ...any)
}

// AMDSMI reads AMD Instinct GPUs with amd-smi. At start it calls, within
// one query timeout: amd-smi list --json (every GPU's index and UUID),
// amd-smi static --asic --driver --limit --partition --json (market name,
// driver, socket power cap, partition modes), and one amd-smi metric,
// which finds the flag that prints the violation accumulators (--violation,
// ROCm 7; else --throttle, ROCm 6.x), the XCDs each GPU has, and the
// accumulators' starting values. Each reading after that is one
// amd-smi metric -g GPUS --usage --power --clock --temperature --perf-level
// FLAG --json for all the leg's GPUs. It never passes amd-smi anything that
// sets a GPU's state; each call runs in a process group of its own, killed
// when it times out or the sampler stops.
type AMDSMI struct {
	path    string
	timeout time.Duration
	gpus    []int
	listed  []GPU
	uuids   map[int]string
	static  map[int]*amdStatic
	// flag is the violation flag the probe found; obj the key of the
	// object it prints.
	flag, obj string
	// energy is set when metric --energy answered for every GPU at the
	// probe: each reading then asks for it.
	energy bool
	// xcds are each GPU's XCDs, from the probe; prev its accumulators at
	// the reading before.
	xcds map[int][]int
	prev map[int][len(amdCauses)]uint64
	// memUsed is set when every GPU gave mem_usage.used_vram at the probe.
	memUsed bool
	// pcie is set when every GPU read gave its PCIe link, current and
	// maximum, at the probe.
	pcie bool
	// probe is how long the probe's metric call took.
	probe time.Duration
}

// ProbeLatency is how long the probe's metric call took.
func (a *AMDSMI) ProbeLatency() time.Duration { return a.probe }

// partitionAdvice says what to do about a compute-partitioned GPU.
const partitionAdvice = "clockgate samples whole GPUs: a GPU in a compute partition mode (CPX, DPX, QPX, TPX) is shown as several devices that share one clock and one power budget, so no device's samples are the GPU's; set the GPU to SPX (amd-smi set --compute-partition SPX, as root, with no process on it), or record the leg on a GPU in SPX"

// amdDriverAdvice says what to do when amd-smi cannot give a value every
// sample needs.
const amdDriverAdvice = "clockgate cannot record clock evidence from this GPU and amd-smi: the violation accumulators need an MI300-class GPU or later; otherwise update ROCm, or record the leg on a GPU whose amd-smi metric answers every field docs/amd.md lists"

// NewAMDSMI finds amd-smi, lists the GPUs, resolves the selection, reads
// the static fields once and probes the metric call; all of it must answer
// within the query timeout.
func NewAMDSMI(ctx context.Context, o AMDSMIOptions) (*AMDSMI, error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	sel := o.GPUs
	if sel.Source == "" {
		sel = DefaultSelection()
	}
	path := o.Path
	if path == "" {
		p, err := exec.LookPath("amd-smi")
		if err != nil {
			return nil, fmt.Errorf("amd-smi not found on PATH: %v", err)
		}
		path = p
	}
	a := &AMDSMI{path: path, timeout: o.QueryTimeout, uuids: map[int]string{}, static: map[int]*amdStatic{},
		xcds: map[int][]int{}, prev: map[int][len(amdCauses)]uint64{}}
	if a.timeout <= 0 {
		a.timeout = DefaultQueryTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, a.timeout)
	defer cancel()
	probe := func(err error) error {
		if errors.Is(err, errTimedOut) {
			return fmt.Errorf("%v (the startup probe; nothing was sampled)", err)
		}
		return err
	}
	out, err := a.call(pctx, amdListWhat, "list", "--json")
	if err != nil {
		return nil, probe(err)
	}
	if a.listed, err = amdListed(out); err != nil {
		return nil, fmt.Errorf("%s: %v", amdListWhat, err)
	}
	if out, err = a.call(pctx, amdStaticWhat, "static", "--asic", "--bus", "--driver", "--limit", "--partition", "--json"); err != nil {
		return nil, probe(err)
	}
	gs, err := amdGPUs(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", amdStaticWhat, err)
	}
	// A GPU's static defect stops the leg only if the leg reads that GPU:
	// a broken GPU elsewhere on the box does not.
	staticErr := map[int]error{}
	for _, g := range gs {
		idx, err := amdIndex(g)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", amdStaticWhat, err)
		}
		st, err := parseAMDStatic(g)
		if err != nil {
			staticErr[idx] = fmt.Errorf("%s: GPU %d: %v", amdStaticWhat, idx, err)
			continue
		}
		a.static[st.index] = st
	}
	for i := range a.listed {
		g := &a.listed[i]
		a.uuids[g.Index] = g.UUID
		if st := a.static[g.Index]; st != nil {
			g.Name = st.name
		}
	}
	res, err := sel.Resolve(a.listed)
	if err != nil {
		return nil, err
	}
	a.gpus = res.Indices
	for _, idx := range a.gpus {
		st := a.static[idx]
		switch {
		case a.sharesUUID(idx) != "":
			return nil, selectErrf("GPU %d (%s) shares its UUID with %s: one physical GPU shown as several devices, as a compute partition mode (CPX, DPX, QPX, TPX) shows it: %s",
				idx, a.uuids[idx], a.sharesUUID(idx), partitionAdvice)
		case staticErr[idx] != nil:
			return nil, staticErr[idx]
		case st == nil:
			return nil, fmt.Errorf("%s: no entry for GPU %d, which amd-smi list lists", amdStaticWhat, idx)
		case st.compute != "" && st.compute != "SPX":
			return nil, selectErrf("GPU %d (%s) is in compute partition mode %s: %s", idx, a.uuids[idx], st.compute, partitionAdvice)
		case st.memory == "":
			logf("amd-smi: GPU %d reports no memory partition mode; its samples carry none", idx)
		}
	}
	// The violation flag: ROCm 7's, else ROCm 6.x's; the energy counter
	// asked for with it, unless amd-smi does not know --energy.
	a.energy = true
	for _, flag := range []string{amdViolationFlag, amdThrottleFlag} {
		a.flag, a.obj = flag, strings.TrimPrefix(flag, "--")
		began := time.Now()
		out, err = a.call(pctx, a.what(), a.metricArgs()...)
		a.probe = time.Since(began)
		var qe *queryError
		if errors.As(err, &qe) && a.energy && rejectsFlag(qe.output, amdEnergyFlag) {
			logf("amd-smi: optional field energy_mj dropped: metric does not know %s", amdEnergyFlag)
			a.energy = false
			out, err = a.call(pctx, a.what(), a.metricArgs()...)
		}
		if errors.As(err, &qe) && flag == amdViolationFlag && rejectsFlag(qe.output, flag) {
			logf("amd-smi: metric does not know %s; asking for %s", amdViolationFlag, amdThrottleFlag)
			continue
		}
		if err != nil {
			return nil, probe(err)
		}
		break
	}
	asked := a.energy
	a.energy = false
	ms, err := a.parse(out, nil)
	if err != nil {
		return nil, err
	}
	a.memUsed, a.pcie = true, true
	for _, m := range ms {
		if err := cmp.Or(m.pcieErr, a.static[m.index].pcieErr); err != nil && a.pcie {
			a.pcie = false
			logf("amd-smi: optional fields pcie_gen, pcie_width, pcie_gen_max, pcie_width_max dropped: GPU %d: %v", m.index, err)
		}
		a.xcds[m.index] = m.xcds
		a.prev[m.index] = m.acc
		if m.usedErr != nil && a.memUsed {
			a.memUsed = false
			logf("amd-smi: optional field %s dropped: GPU %d: %v", amdMemUsed, m.index, m.usedErr)
		}
	}
	// The energy counter, asked for in the probe's call and kept where it
	// answers a number of J for every GPU read, like every optional field.
	if asked {
		a.energy = a.energyAnswered(out, logf)
	}
	logf("%v", res)
	return a, nil
}

// amdEnergyFlag asks amd-smi metric for the energy counter.
const amdEnergyFlag = "--energy"

// energyAnswered reports whether the probe's answer gives every GPU read
// its energy counter, saying why not where it does not.
func (a *AMDSMI) energyAnswered(out []byte, logf func(string, ...any)) bool {
	gs, err := amdGPUs(out)
	if err != nil {
		return false
	}
	for _, g := range gs {
		idx, err := amdIndex(g)
		if err != nil {
			return false
		}
		if _, err := amdEnergyMJ(g); err != nil {
			logf("amd-smi: optional field energy_mj dropped: GPU %d: %v", idx, err)
			return false
		}
	}
	return true
}

// sharesUUID names the other listed devices with GPU idx's UUID ("GPU 1,
// GPU 3"), or "" when it has its own.
func (a *AMDSMI) sharesUUID(idx int) string {
	var others []string
	for _, g := range a.listed {
		if g.Index != idx && g.UUID == a.uuids[idx] {
			others = append(others, fmt.Sprintf("GPU %d", g.Index))
		}
	}
	return strings.Join(others, ", ")
}

// rejectsFlag reports whether amd-smi's answer says it does not know flag
// (argparse's "unrecognized arguments: --violation").
func rejectsFlag(output, flag string) bool {
	return strings.Contains(output, "unrecognized arguments") && strings.Contains(output, flag)
}

// The start-up calls, named in messages.
const (
	amdListWhat   = "amd-smi list --json (listing the GPUs)"
	amdStaticWhat = "amd-smi static --asic --bus --driver --limit --partition --json"
)

// metricArgs are a reading's arguments.
func (a *AMDSMI) metricArgs() []string {
	args := []string{"metric", "-g"}
	for _, g := range a.gpus {
		args = append(args, strconv.Itoa(g))
	}
	args = append(args, "--usage", "--power", "--clock", "--temperature", "--perf-level", "--mem-usage", "--pcie", a.flag)
	if a.energy {
		args = append(args, amdEnergyFlag)
	}
	return append(args, "--json")
}

// what names the reading call in messages: "amd-smi metric -g 0 1 … --violation".
func (a *AMDSMI) what() string {
	ids := make([]string, len(a.gpus))
	for i, g := range a.gpus {
		ids[i] = strconv.Itoa(g)
	}
	return "amd-smi metric -g " + strings.Join(ids, " ") + " " + a.flag
}

// call runs amd-smi with args.
func (a *AMDSMI) call(ctx context.Context, what string, args ...string) ([]byte, error) {
	return runCall(ctx, a.timeout, what, a.path, args)
}

// parse reads a metric answer: one object per GPU read, each once, none
// other, in the order of a.gpus. xcds is nil at the probe.
func (a *AMDSMI) parse(out []byte, xcds map[int][]int) ([]*amdMetric, error) {
	gs, err := amdGPUs(out)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", a.what(), err)
	}
	pos := map[int]int{}
	for i, g := range a.gpus {
		pos[g] = i
	}
	ms := make([]*amdMetric, len(a.gpus))
	for _, g := range gs {
		idx, err := amdIndex(g)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", a.what(), err)
		}
		i, ok := pos[idx]
		switch {
		case !ok:
			return nil, fmt.Errorf("%s answered for GPU %d, which it was not asked for", a.what(), idx)
		case ms[i] != nil:
			return nil, fmt.Errorf("%s answered twice for GPU %d", a.what(), idx)
		}
		var want []int
		if xcds != nil {
			want = xcds[idx]
		}
		m, err := parseAMDMetric(g, want, a.obj)
		if err == nil && a.energy {
			var mj int64
			if mj, err = amdEnergyMJ(g); err == nil {
				m.energyMJ = &mj
			}
		}
		if err != nil {
			msg := fmt.Sprintf("%s: GPU %d: %v", a.what(), idx, err)
			var fe *amdFieldError
			if errors.As(err, &fe) && errors.Is(err, errAMDNA) {
				msg += "; " + amdDriverAdvice
			}
			return nil, errors.New(msg)
		}
		ms[i] = m
	}
	var missing []string
	for i, m := range ms {
		if m == nil {
			missing = append(missing, fmt.Sprintf("GPU %d (%s)", a.gpus[i], a.uuids[a.gpus[i]]))
		}
	}
	if len(missing) > 0 {
		return nil, fmt.Errorf("%s printed no entry for %s", a.what(), strings.Join(missing, ", "))
	}
	return ms, nil
}

// Name says which GPUs are read, and how.
func (a *AMDSMI) Name() string {
	return fmt.Sprintf("amd-smi (%s) %s, violations from metric %s", a.path, gpusWord(a.gpus), a.flag)
}

// GPUs returns the indices of the GPUs read, sorted.
func (a *AMDSMI) GPUs() []int { return append([]int(nil), a.gpus...) }

// ViolationFlag returns the flag the probe found for the accumulators.
func (a *AMDSMI) ViolationFlag() string { return a.flag }

// Read runs one metric call for every GPU and turns its answer into one
// sample per GPU, sorted by index, all stamped t. A cause's bit is set
// when its accumulator advanced since the reading before; an accumulator
// that went back is a refusal (the driver was reloaded or the GPU reset).
func (a *AMDSMI) Read(ctx context.Context, t time.Time, bootID string) ([]*clocks.Sample, error) {
	if t.IsZero() || bootID == "" {
		return nil, errors.New("a reading needs its time and the boot id")
	}
	out, err := a.call(ctx, a.what(), a.metricArgs()...)
	if err != nil {
		return nil, err
	}
	ms, err := a.parse(out, a.xcds)
	if err != nil {
		return nil, err
	}
	samples := make([]*clocks.Sample, len(ms))
	next := make(map[int][len(amdCauses)]uint64, len(ms))
	for i, m := range ms {
		prev := a.prev[m.index]
		var bits uint64
		for c, cause := range amdCauses {
			switch {
			case m.acc[c] < prev[c]:
				return nil, fmt.Errorf("%s: GPU %d: %s.%s went back from %d to %d: the driver was reloaded or the GPU reset within the window, so the leg's clock state is not one state",
					a.what(), m.index, a.obj, cause.key, prev[c], m.acc[c])
			case m.acc[c] > prev[c]:
				bits |= cause.bit
			}
		}
		next[m.index] = m.acc
		var used *float64
		if a.memUsed {
			if m.usedErr != nil {
				return nil, fmt.Errorf("%s: GPU %d: %v (it gave it at the probe)", a.what(), m.index, m.usedErr)
			}
			used = ptrTo(m.usedMiB)
		}
		st := a.static[m.index]
		if a.pcie && m.pcieErr != nil {
			return nil, fmt.Errorf("%s: GPU %d: %v (it gave it at the probe)", a.what(), m.index, m.pcieErr)
		}
		samples[i] = &clocks.Sample{
			T:                     t.UTC().Format(SampleTimeLayout),
			BootID:                bootID,
			GPUIndex:              m.index,
			GPUUUID:               a.uuids[m.index],
			GPUName:               st.name,
			DriverVersion:         st.driver,
			SMClockMHz:            m.lowest(),
			ClocksMaxSMMHz:        m.maxMHz,
			ThrottleReasonsActive: clocks.FormatThrottle(bits),
			UtilizationGPUPct:     m.activityPct,
			TemperatureGPUC:       ptrTo(m.hotspotC),
			PowerDrawW:            ptrTo(m.powerW),
			EnforcedPowerLimitW:   ptrTo(st.capW),
			ThrottleField:         "amd-smi metric " + a.flag,
			Vendor:                clocks.VendorAMD,
			PerfLevel:             m.perfLevel,
			MemoryPartition:       st.memory,
			XCDClocksMHz:          append([]int(nil), m.clocks...),
			MemoryUsedMiB:         used,
			EnergyMJ:              m.energyMJ,
		}
		if m.energyMJ != nil {
			samples[i].EnergyScope = ptrTo(clocks.EnergyScopeGPU)
		}
		if a.pcie {
			samples[i].PCIeGen, samples[i].PCIeWidth = ptrTo(m.pcie[0]), ptrTo(m.pcie[1])
			samples[i].PCIeGenMax, samples[i].PCIeWidthMax = ptrTo(st.pcieMax[0]), ptrTo(st.pcieMax[1])
		}
	}
	for k, v := range next {
		a.prev[k] = v
	}
	sort.Slice(samples, func(i, j int) bool { return samples[i].GPUIndex < samples[j].GPUIndex })
	return samples, nil
}

func ptrTo[T any](v T) *T { return &v }

// Close does nothing: each reading is its own process.
func (a *AMDSMI) Close() error { return nil }
