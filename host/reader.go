package host

import (
	"fmt"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// WalkEvery is how often, at most, the reader walks every process for the
// top other processes: the walk reads /proc/PID/stat of each, which takes
// milliseconds to tens of them on a loaded box, so it runs beside the
// readings, never in their path.
const WalkEvery = time.Second

// UserHZ is the unit of /proc's CPU times, in ticks a second: fixed at
// 100 for user space on every Linux architecture.
const UserHZ = 100

// TopN is how many other processes a reading names.
const TopN = 3

// Reader takes the host readings of one leg: Read, once per GPU tick,
// reads /proc/stat, /proc/vmstat, /proc/pressure/*, cpufreq and the own
// threads' schedstat; the process walk (the own processes, and the top
// other processes) runs in a goroutine of its own, at most every
// WalkEvery.
type Reader struct {
	src    Source
	roots  []int
	self   int
	ncpu   int
	online []int
	now    func() time.Time

	prevAt   time.Time
	prevCPU  CPUStat
	prevSwap [2]int64
	threads  map[[2]int][2]uint64 // pid, tid → run, wait ns

	mu      sync.Mutex
	own     map[int]bool
	top     []clocks.HostProc
	kicks   chan struct{}
	done    chan struct{}
	walking time.Time // when the last walk was asked for
	walkAt  time.Time
	walkOld map[string]uint64 // pid and start → ticks
}

// NewReader starts reading the host through src for the leg whose own
// processes are the trees under roots (pids ≤ 0 ignored); self, the
// reader's own process, is neither the leg's own nor another process (the
// processes it starts, such as nvidia-smi, are others: they load the box). It reads the static identity and takes the first
// counters, the base of the first reading.
func NewReader(src Source, roots []int, self int) (*Reader, *clocks.HostStatic, error) {
	r := &Reader{src: src, self: self, now: time.Now, threads: map[[2]int][2]uint64{},
		own: map[int]bool{}, kicks: make(chan struct{}, 1), done: make(chan struct{}), walkOld: map[string]uint64{}}
	for _, p := range roots {
		if p > 0 && p != self {
			r.roots = append(r.roots, p)
			r.own[p] = true
		}
	}
	var allowed []string
	seen := map[string]bool{}
	r.walk() // the own set and the base of the top
	for pid := range r.own {
		if a, ok := CPUsAllowed(src, pid); ok && !seen[a] {
			seen[a] = true
			allowed = append(allowed, a)
		}
	}
	sort.Strings(allowed)
	st, err := ReadStatic(src, allowed)
	if err != nil {
		return nil, nil, err
	}
	r.ncpu = st.LogicalCPUs
	r.online, _ = OnlineCPUs(src)
	if r.prevCPU, err = ReadCPUStat(src); err != nil {
		return nil, nil, err
	}
	if r.prevSwap[0], r.prevSwap[1], err = ReadSwap(src); err != nil {
		return nil, nil, err
	}
	r.prevAt = r.now()
	r.readThreads()
	go r.walker()
	return r, st, nil
}

// Stop ends the process walk.
func (r *Reader) Stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.kicks != nil {
		close(r.kicks)
		r.kicks = nil
	}
}

func (r *Reader) walker() {
	r.mu.Lock()
	kicks := r.kicks
	r.mu.Unlock()
	for range kicks {
		r.walk()
	}
}

// walk reads every process: the own set (the roots and their
// descendants, never self nor a child of self outside them) and the other
// processes' CPU since the walk before.
func (r *Reader) walk() {
	procs := Procs(r.src)
	at := r.now()
	parent := map[int]int{}
	for _, p := range procs {
		parent[p.PID] = p.PPID
	}
	r.mu.Lock()
	roots := map[int]bool{}
	for _, p := range r.roots {
		roots[p] = true
	}
	r.mu.Unlock()
	own := map[int]bool{}
	for _, p := range procs {
		q, steps := p.PID, 0
		for q > 0 && q != r.self && !roots[q] && steps <= len(parent) {
			q, steps = parent[q], steps+1
		}
		if roots[q] {
			own[p.PID] = true
		}
	}
	for p := range roots {
		own[p] = true
	}
	dt := at.Sub(r.walkAt).Seconds()
	now := map[string]uint64{}
	var top []clocks.HostProc
	for _, p := range procs {
		key := strconv.Itoa(p.PID) + "/" + p.Start
		now[key] = p.Ticks
		if own[p.PID] || p.PID == r.self {
			continue
		}
		old, ok := r.walkOld[key]
		if !ok || r.walkAt.IsZero() || dt <= 0 || p.Ticks <= old {
			continue
		}
		c := clocks.Round3(float64(p.Ticks-old) / UserHZ / dt)
		if c > 0 {
			top = append(top, clocks.HostProc{PID: p.PID, Comm: p.Comm, Cores: c})
		}
	}
	sort.Slice(top, func(i, j int) bool {
		if top[i].Cores != top[j].Cores {
			return top[i].Cores > top[j].Cores
		}
		return top[i].PID < top[j].PID
	})
	if len(top) > TopN {
		top = top[:TopN]
	}
	r.walkOld, r.walkAt = now, at
	r.mu.Lock()
	r.own = own
	if top == nil {
		top = []clocks.HostProc{}
	}
	r.top = top
	r.mu.Unlock()
}

// readThreads reads the own threads' schedstat and returns the run and
// wait time, in ns, they added since the last call; a thread first seen
// now is the base of the next.
func (r *Reader) readThreads() (run, wait uint64) {
	r.mu.Lock()
	pids := make([]int, 0, len(r.own))
	for p := range r.own {
		pids = append(pids, p)
	}
	r.mu.Unlock()
	next := make(map[[2]int][2]uint64, len(r.threads))
	for _, pid := range pids {
		tids, err := r.src.ReadDir(fmt.Sprintf("/proc/%d/task", pid))
		if err != nil {
			continue
		}
		for _, name := range tids {
			tid, err := strconv.Atoi(name)
			if err != nil {
				continue
			}
			ru, wa, err := Schedstat(r.src, pid, tid)
			if err != nil {
				continue
			}
			k := [2]int{pid, tid}
			next[k] = [2]uint64{ru, wa}
			if old, ok := r.threads[k]; ok && ru >= old[0] && wa >= old[1] {
				run += ru - old[0]
				wait += wa - old[1]
			}
		}
	}
	r.threads = next
	return run, wait
}

// Read takes the reading of the GPU tick at t (its time as the GPU
// stream writes it), each count since the reading before, and asks for a
// process walk when the last was asked for WalkEvery ago or more.
func (r *Reader) Read(t string) (*clocks.HostLine, error) {
	cpu, err := ReadCPUStat(r.src)
	if err != nil {
		return nil, err
	}
	in, out, err := ReadSwap(r.src)
	if err != nil {
		return nil, err
	}
	run, wait := r.readThreads()
	at := r.now()
	dt := at.Sub(r.prevAt).Seconds()
	l := &clocks.HostLine{T: t, CPU: Shares(r.prevCPU, cpu), PSI: ReadPSI(r.src), CPUMHz: CPUMHz(r.src, r.online),
		Swap: clocks.HostSwap{In: max(in-r.prevSwap[0], 0), Out: max(out-r.prevSwap[1], 0)}}
	if dt > 0 {
		l.OwnCPU = clocks.Round3(float64(run) / 1e9 / dt)
		l.OwnWait = clocks.Round3(float64(wait) / 1e9 / dt)
	}
	l.OtherCPU = clocks.Round3(max(l.CPU.Busy*float64(r.ncpu)-l.OwnCPU, 0))
	r.prevCPU, r.prevSwap, r.prevAt = cpu, [2]int64{in, out}, at
	r.mu.Lock()
	l.Top = append([]clocks.HostProc{}, r.top...)
	if r.kicks != nil && at.Sub(r.walking) >= WalkEvery {
		r.walking = at
		select {
		case r.kicks <- struct{}{}:
		default:
		}
	}
	r.mu.Unlock()
	return l, nil
}
