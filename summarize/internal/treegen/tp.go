package treegen

import (
	"math"
	"math/rand/v2"
	"sort"
	"strconv"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// The tensor-parallel scenarios: legs that sample several GPUs of one
// 8 × H100 box, one row per GPU per reading, all at the reading's time;
// and two single-GPU scenarios of what the clock block gained with them,
// the mean offset and power.

// h100Box are the GPU uuids of one 8 × H100 box, by nvidia-smi index.
var h100Box = [8]string{
	"GPU-3b9d0f42-6c1e-4a7b-9d25-8f0e1c7a4b63",
	"GPU-71e5c2a8-0d94-4f3b-a6e1-2c8b5d0f9e17",
	"GPU-c8a41f07-93b2-4e5d-8f60-1a7d2e9c4b85",
	"GPU-05f6e3d9-2b7a-4c81-b3e4-9d0a6f2c7e58",
	"GPU-9e2c7b14-5a08-4d6f-92c3-7b1e0a4d8f26",
	"GPU-4d80a6e3-1f5c-4b92-a7d8-3e6c9b2f0a71",
	"GPU-e6b35a90-8c4d-4f17-b0e2-5a9d1c3e7f04",
	"GPU-2a7f9c05-d3e1-4a68-8b4f-0c5e7d1a9b32",
}

// h100Node is one GPU of the box: an H100 80GB HBM3 as h100, at its own
// uuid.
var h100Node = gpu{name: "NVIDIA H100 80GB HBM3", uuid: h100Box[0], driver: "590.44.01",
	maxSM: 1980, apps: nil, throttleField: "clocks_event_reasons.active",
	idleMHz: 345, busyPowerW: 612.0, idlePowerW: 71.8}

// bootBox is the boot the box's legs ran on.
const bootBox = "8c3f1e6a-7d2b-4a95-b0c4-e19f5a7d3c28"

// The models served tensor parallel.
var (
	llama70 = model{dir: "llama-3.1-70b-instruct", id: "meta-llama/Llama-3.1-70B-Instruct",
		inputLen: 1024, outputLen: 128, stepMS: 18.5402, memMiB: 73512}
	qwen72 = model{dir: "qwen2.5-72b-instruct", id: "Qwen/Qwen2.5-72B-Instruct",
		inputLen: 1024, outputLen: 128, stepMS: 19.1176, memMiB: 74036}
)

// tpGPU is one GPU of a tensor-parallel leg.
type tpGPU struct {
	index int
	// clock is the GPU's busy SM clock over the leg.
	clock profile
	// powerW is its busy power draw, in W; 0 is the leg's GPU's.
	powerW float64
}

// h100Clock is an H100 busy at its maximum clock, 1980 MHz, most of the
// time, sometimes a boost step or three below: min 1935, median 1980.
var h100Clock = profile{min: 1935, med: 1980, max: 1980}

// tpArm adds runs legs of one (model, engine), each on the box's GPUs
// gpus, every GPU at h100Clock with a power draw of its own; fix adjusts
// each leg.
func (t *tree) tpArm(m model, e engine, runs int, gpus []int, fix func(*leg)) {
	for r := 1; r <= runs; r++ {
		t.add(t.tpLeg(m, e, r, gpus, fix))
	}
}

// tpLeg is a clean tensor-parallel leg of the grid on the box's GPUs gpus.
func (t *tree) tpLeg(m model, e engine, run int, gpus []int, fix func(*leg)) leg {
	return t.leg(m, e, run, h100Node, bootBox, func(l *leg) {
		l.clock = h100Clock
		w := seed(t.name, m.dir, e.name, strconv.Itoa(run), "gpus")
		for _, i := range gpus {
			// Each GPU's lowest busy clock and its power draw are its own.
			l.tp = append(l.tp, tpGPU{index: i, clock: profile{min: h100Clock.min - 15*w.IntN(2), med: h100Clock.med, max: h100Clock.max},
				powerW: math.Round((598+float64(w.IntN(29)))*10) / 10})
		}
		if fix != nil {
			fix(l)
		}
	})
}

// gpuAt is the leg's GPU of index i.
func (l *leg) gpuAt(i int) *tpGPU {
	for k := range l.tp {
		if l.tp[k].index == i {
			return &l.tp[k]
		}
	}
	panic("no GPU " + strconv.Itoa(i))
}

// tpSamples produces a tensor-parallel leg's stream at 1 Hz: each reading
// one row per GPU, in index order, all at the reading's time, busy or idle
// together; and, per point, the times its busy run began and ended.
func (l *leg) tpSamples(rng *rand.Rand) ([]clocks.Sample, [][2]time.Time) {
	busyTotal := 0
	for _, b := range l.busy {
		busyTotal += b
	}
	gpus := append([]tpGPU(nil), l.tp...)
	sort.Slice(gpus, func(i, j int) bool { return gpus[i].index < gpus[j].index })
	mhz := make([][]int, len(gpus))
	temp := make([]float64, len(gpus))
	for k, g := range gpus {
		mhz[k] = g.clock.values(rng, busyTotal)
		temp[k] = 34.0 + float64(rng.IntN(4))
	}
	var out []clocks.Sample
	t := l.start.Add(time.Duration(100+rng.IntN(800)) * time.Millisecond)
	n := 0
	pms := make([]pmState, len(gpus))
	add := func(busy bool) {
		for k, g := range gpus {
			s := clocks.Sample{
				T: t.Format("2006-01-02T15:04:05.000Z"), BootID: l.boot, GPUIndex: g.index,
				GPUUUID: h100Box[g.index], GPUName: l.gpu.name, DriverVersion: l.gpu.driver,
				ClocksMaxSMMHz: l.gpu.maxSM, ClocksApplicationsGraphicsMHz: l.gpu.apps,
				PersistenceMode: "Enabled", PState: "P0", ThrottleField: l.gpu.throttleField,
			}
			busyW := g.powerW
			if busyW == 0 {
				busyW = l.gpu.busyPowerW
			}
			var power float64
			if busy {
				s.SMClockMHz = mhz[k][n]
				s.UtilizationGPUPct = 92 + rng.IntN(9)
				s.ThrottleReasonsActive = clocks.FormatThrottle(0)
				temp[k] = math.Min(temp[k]+0.4, 67)
				power = busyW * (0.94 + 0.12*rng.Float64())
			} else {
				s.SMClockMHz = l.gpu.idleMHz
				s.ThrottleReasonsActive = clocks.FormatThrottle(0x1)
				temp[k] = math.Max(temp[k]-0.9, 33)
				power = l.gpu.idlePowerW * (0.95 + 0.1*rng.Float64())
			}
			tc := math.Round(temp[k])
			if l.pm != nil {
				// The GPUs of a tensor-parallel step hit the cap together.
				power, tc = l.pm.apply(&s, &pms[k], busy, n, power, tc, rng)
			}
			pw := math.Round(power*100) / 100
			s.TemperatureGPUC, s.PowerDrawW = &tc, &pw
			out = append(out, s)
		}
		if busy {
			n++
		}
		t = t.Add(time.Second + time.Duration(rng.IntN(7)-3)*time.Millisecond)
	}
	bounds := l.schedule(add, func() time.Time { return t })
	return out, bounds
}

// dipValues are n busy clocks of a leg whose clock dips: a share dipFrac
// of them between dipLo and dipHi, the rest at the profile's median or
// above it (the median itself at least half of them), so that the median
// stays the profile's while the mean falls.
func (l *leg) dipValues(rng *rand.Rand, n int) []int {
	nd := int(math.Round(float64(n) * l.dipFrac))
	out := make([]int, 0, n)
	for range nd {
		out = append(out, l.dipLo+rng.IntN(l.dipHi-l.dipLo+1))
	}
	out = append(out, profile{min: l.clock.med, med: l.clock.med, max: l.clock.max}.values(rng, n-nd)...)
	rng.Shuffle(n, func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

var tpScenarios = []Scenario{
	{Name: "tp4-clean",
		About: "llama-3.1-70b-instruct served tensor parallel on GPUs 0-3 of one 8 × H100 box (TP=4), fastengine and vllm, 2 runs each on one boot: " +
			"every reading one row per GPU; each GPU busy at 1920-1980 MHz (median 1980), each drawing its own power; both ratios ESTABLISHED",
		build: func(t *tree) {
			t.tpArm(llama70, fastengine, 2, []int{0, 1, 2, 3}, nil)
			t.tpArm(llama70, vllm, 2, []int{0, 1, 2, 3}, nil)
		}},
	{Name: "tp4-gpu-skew",
		About: "TP=4 on GPUs 0-3, 3 runs per arm; in vllm r2 GPU 2 runs a step slower (median 1950 MHz against 1980 on GPUs 0, 1 and 3: 1.54% > 1.0%): " +
			"clock.gpu_skew on that leg, which makes both ratios NOT ESTABLISHED; merged over vllm's three legs, GPU position 2 stays 0.51% (mean 0.42%) from fastengine's, within 1.0%",
		build: func(t *tree) {
			t.tpArm(llama70, fastengine, 3, []int{0, 1, 2, 3}, nil)
			t.tpArm(llama70, vllm, 3, []int{0, 1, 2, 3}, func(l *leg) {
				if l.run == 2 {
					l.gpuAt(2).clock = profile{min: 1920, med: 1950, max: 1965}
				}
			})
		}},
	{Name: "tp4-offset",
		About: "TP=4 on GPUs 0-3: fastengine's GPUs at median 1980 MHz; vllm's GPUs 0-2 at 1965 and GPU 3 at 1950 (0.77% apart within each leg, no gpu_skew): " +
			"positions 0-2 are 0.76% apart, within 1.0%, and position 3 is 1.54% apart (mean 1.39%): clock.offset names GPU position 3",
		build: func(t *tree) {
			t.tpArm(llama70, fastengine, 2, []int{0, 1, 2, 3}, nil)
			t.tpArm(llama70, vllm, 2, []int{0, 1, 2, 3}, func(l *leg) {
				for k := range l.tp {
					l.tp[k].clock = profile{min: 1920, med: 1965, max: 1980}
				}
				l.gpuAt(3).clock = profile{min: 1905, med: 1950, max: 1965}
			})
		}},
	{Name: "tp-gpu-sets",
		About: "arms on different GPU sets of one box: llama-3.1-70b-instruct with fastengine at TP=4 (GPUs 0-3) against vllm at TP=2 (GPUs 0-1), " +
			"clock.hardware_mismatch (4 GPUs per leg against 2); qwen2.5-72b-instruct at TP=4 with vllm r1 on GPUs 0-3 and r2 on GPUs 4-7, " +
			"clock.static_mismatch in vllm's arm and clock.hardware_mismatch at every GPU position (the uuids differ)",
		build: func(t *tree) {
			t.tpArm(llama70, fastengine, 2, []int{0, 1, 2, 3}, nil)
			t.tpArm(llama70, vllm, 2, []int{0, 1}, nil)
			t.tpArm(qwen72, fastengine, 2, []int{0, 1, 2, 3}, nil)
			t.add(t.tpLeg(qwen72, vllm, 1, []int{0, 1, 2, 3}, nil))
			t.add(t.tpLeg(qwen72, vllm, 2, []int{4, 5, 6, 7}, nil))
		}},
	{Name: "tp8",
		About: "TP=8 on all of the box's GPUs, fastengine and vllm, 2 runs each on one boot; GPU 5 runs one boost step below the others " +
			"in every leg (median 1965 MHz against 1980: 0.76%, within 1.0%), the slowest GPU of every leg; both ratios ESTABLISHED",
		build: func(t *tree) {
			all := []int{0, 1, 2, 3, 4, 5, 6, 7}
			slow := func(l *leg) { l.gpuAt(5).clock = profile{min: 1920, med: 1965, max: 1980} }
			t.tpArm(llama70, fastengine, 2, all, slow)
			t.tpArm(llama70, vllm, 2, all, slow)
		}},
	{Name: "mean-offset",
		About: "one GB10: fastengine's clock dips to 2372-2400 MHz in 45% of its busy samples (its spread still under 5.0%) and sits at 2470 or above " +
			"otherwise; vllm holds 2450-2489. The medians agree (2470 and 2470 MHz, offset 0.00%), the means do not (2433.86 against 2471.07 MHz, 1.51% > 1.0%): " +
			"clock.offset with the mean message",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, gb10, boot13, func(l *leg) {
				l.clock = profile{min: 2372, med: 2470, max: 2489}
				l.dipFrac, l.dipLo, l.dipHi = 0.45, 2372, 2400
			})
			t.arm(llama, vllm, 2, gb10, boot13, func(l *leg) { l.clock = profile{min: 2450, med: 2470, max: 2489} })
		}},
	{Name: "power",
		About: "one GB10, both arms at one SM clock (median 2470 MHz), vllm's legs in the GB10's lower power state (median busy power 30.26 W against " +
			"fastengine's 41.73 W): each arm's median busy power is on the observed: line and in the clock block, never a gate term; both ratios ESTABLISHED",
		build: func(t *tree) {
			t.arm(llama, fastengine, 2, gb10, boot13, func(l *leg) { l.clock = profile{min: 2431, med: 2470, max: 2489} })
			t.arm(llama, vllm, 2, gb10, boot13, func(l *leg) {
				l.clock = profile{min: 2431, med: 2470, max: 2489}
				l.busyPowerW = 30.2
			})
		}},
}
