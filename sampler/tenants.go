package sampler

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// ProcessLister is a backend that can list the compute processes on the
// GPUs (SPEC §10.1, another tenant): the sampler asks at the first and the
// last reading. Proc is left empty; the sampler fills it from /proc.
type ProcessLister interface {
	ComputeProcesses(ctx context.Context) ([]clocks.ComputeProcess, error)
}

// computeAppsFields is the --query-compute-apps query the nvidia-smi
// backend asks.
const computeAppsFields = "pid,process_name,gpu_uuid"

// ComputeProcesses runs nvidia-smi --query-compute-apps=pid,process_name,
// gpu_uuid --format=csv,noheader: one line per compute process on any GPU,
// none when nothing runs.
func (s *SMI) ComputeProcesses(ctx context.Context) ([]clocks.ComputeProcess, error) {
	what := "nvidia-smi --query-compute-apps=" + computeAppsFields
	out, err := runCall(ctx, s.timeout, what, s.path, []string{"--query-compute-apps=" + computeAppsFields, "--format=csv,noheader"})
	if err != nil {
		return nil, err
	}
	return parseComputeApps(what, string(out))
}

// parseComputeApps reads --query-compute-apps=pid,process_name,gpu_uuid
// lines: the pid first, the UUID last, and the name between (a name may
// hold a comma).
func parseComputeApps(what, out string) ([]clocks.ComputeProcess, error) {
	var ps []clocks.ComputeProcess
	for n, line := range strings.Split(strings.TrimRight(out, "\r\n"), "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.TrimSpace(line) == "" {
			if n == 0 {
				continue // no compute process
			}
			return nil, fmt.Errorf("%s: line %d is empty", what, n+1)
		}
		cells := strings.Split(line, ",")
		if len(cells) < 3 {
			return nil, fmt.Errorf("%s: line %d: want pid, process_name, gpu_uuid; found %q", what, n+1, line)
		}
		pid, err := strconv.Atoi(strings.TrimSpace(cells[0]))
		if err != nil || pid <= 0 {
			return nil, fmt.Errorf("%s: line %d: pid %q is not a positive integer", what, n+1, strings.TrimSpace(cells[0]))
		}
		uuid := strings.TrimSpace(cells[len(cells)-1])
		if !strings.HasPrefix(uuid, "GPU-") && !strings.HasPrefix(uuid, "MIG-") {
			return nil, fmt.Errorf("%s: line %d: gpu_uuid %q is not a GPU UUID", what, n+1, uuid)
		}
		name := strings.TrimSpace(strings.Join(cells[1:len(cells)-1], ","))
		if !printable(name) {
			return nil, fmt.Errorf("%s: line %d: process_name %q is not printable text", what, n+1, name)
		}
		ps = append(ps, clocks.ComputeProcess{PID: pid, Name: name, GPUUUID: uuid})
	}
	return ps, nil
}

// ComputeProcesses lists each read GPU's compute processes through
// nvmlDeviceGetComputeRunningProcesses_v3, naming each through
// nvmlSystemGetProcessName.
func (n *NVML) ComputeProcesses(ctx context.Context) ([]clocks.ComputeProcess, error) {
	if !n.lib.Has(symComputeProcs) {
		return nil, fmt.Errorf("NVML: the driver has no %s", symComputeProcs)
	}
	// A listing inside the driver keeps Close from shutting NVML down
	// under it, as a reading does.
	n.mu.Lock()
	if n.closed || n.hung {
		n.mu.Unlock()
		return nil, fmt.Errorf("NVML: closed, or an earlier reading never returned")
	}
	n.busy++
	n.mu.Unlock()
	defer func() {
		n.mu.Lock()
		n.busy--
		n.mu.Unlock()
	}()
	var ps []clocks.ComputeProcess
	for i, dev := range n.devs {
		uuid, ret := n.lib.DeviceGetUUID(dev)
		if ret != nvmlSuccess {
			return nil, fmt.Errorf("NVML GPU %d: nvmlDeviceGetUUID: %v", n.gpus[i], ret)
		}
		pids, ret := n.lib.DeviceGetComputeRunningProcesses(dev)
		if ret != nvmlSuccess {
			return nil, fmt.Errorf("NVML GPU %d: %s: %v", n.gpus[i], symComputeProcs, ret)
		}
		for _, pid := range pids {
			name, ret := n.lib.SystemGetProcessName(pid)
			if ret != nvmlSuccess || !printable(name) {
				// The driver names processes it can read; one it cannot
				// (another user's, without privileges) stays listed.
				name = fmt.Sprintf("[nvmlSystemGetProcessName: %v]", ret)
			}
			ps = append(ps, clocks.ComputeProcess{PID: int(pid), Name: name, GPUUUID: uuid})
		}
	}
	return ps, nil
}

// procTree reads /proc under root: every visible pid's parent.
func procTree(root string) map[int]int {
	parent := map[int]int{}
	ents, err := os.ReadDir(root)
	if err != nil {
		return parent
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
		// pid (comm) state ppid …: comm may hold spaces and parentheses,
		// so the fields after it start at the last ')'.
		s := string(data)
		k := strings.LastIndexByte(s, ')')
		if k < 0 {
			continue
		}
		f := strings.Fields(s[k+1:])
		if len(f) < 2 {
			continue
		}
		if ppid, err := strconv.Atoi(f[1]); err == nil {
			parent[pid] = ppid
		}
	}
	return parent
}

// ownSet is the pids under roots in the tree: the roots and their
// descendants.
func ownSet(parent map[int]int, roots []int) map[int]bool {
	own := map[int]bool{}
	for _, r := range roots {
		if r > 0 {
			own[r] = true
		}
	}
	for pid := range parent {
		// Walk up to a root, at most len(parent) steps (a loop in a
		// racing read of /proc ends the walk).
		p, steps := pid, 0
		for p > 0 && !own[p] && steps <= len(parent) {
			next, ok := parent[p]
			if !ok {
				break
			}
			p, steps = next, steps+1
		}
		if own[p] {
			own[pid] = true
		}
	}
	return own
}

// classifyProcs fills each process's Proc from /proc under root: own when it
// is in own (or was own at an earlier listing, ownBefore), foreign when
// /proc shows it and it is not, unknown when /proc does not show it.
func classifyProcs(ps []clocks.ComputeProcess, root string, roots []int, ownBefore map[int]bool) []clocks.ComputeProcess {
	parent := procTree(root)
	own := ownSet(parent, roots)
	out := []clocks.ComputeProcess{}
	for _, p := range ps {
		_, visible := parent[p.PID]
		switch {
		case own[p.PID] || ownBefore[p.PID]:
			p.Proc = clocks.ProcOwn
		case visible:
			p.Proc = clocks.ProcForeign
		default:
			p.Proc = clocks.ProcUnknown
		}
		out = append(out, p)
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].GPUUUID != out[j].GPUUUID {
			return out[i].GPUUUID < out[j].GPUUUID
		}
		return out[i].PID < out[j].PID
	})
	return out
}

// onGPUs keeps the processes on the GPUs whose UUIDs are given.
func onGPUs(ps []clocks.ComputeProcess, uuids map[string]bool) []clocks.ComputeProcess {
	var out []clocks.ComputeProcess
	for _, p := range ps {
		if uuids[p.GPUUUID] {
			out = append(out, p)
		}
	}
	return out
}

// tenantListing is one listing of the GPUs' compute processes, or why
// there is none.
type tenantListing struct {
	procs []clocks.ComputeProcess
	uuids map[string]bool
	err   error
}

// ownRoots are the roots of the leg's own process trees for the compute
// processes' listing: the sampler itself (the recorded command is its
// child), the --pid process and the engine's processes.
func (s *Sampler) ownRoots() []int {
	roots := []int{os.Getpid(), s.cfg.PID}
	for _, e := range s.engines {
		roots = append(roots, e.PID)
	}
	return roots
}

// listTenants lists the compute processes on the GPUs whose UUIDs are
// given, each classified from the sampler's /proc against ownRoots.
func (s *Sampler) listTenants(ctx context.Context, uuids map[string]bool, ownBefore map[int]bool) tenantListing {
	pl, ok := s.backend.(ProcessLister)
	if !ok {
		return tenantListing{err: fmt.Errorf("%s cannot list compute processes", s.backend.Name())}
	}
	ps, err := pl.ComputeProcesses(ctx)
	if err != nil {
		return tenantListing{err: err}
	}
	return tenantListing{procs: classifyProcs(onGPUs(ps, uuids), s.procRoot, s.ownRoots(), ownBefore), uuids: uuids}
}

// tenantWait bounds the wait for one listing of the compute processes:
// a driver call that never returns leaves the record without them.
const tenantWait = DefaultQueryTimeout

// listTenantsBounded is listTenants, given up after tenantWait.
func (s *Sampler) listTenantsBounded(ctx context.Context, uuids map[string]bool, ownBefore map[int]bool) <-chan tenantListing {
	c := make(chan tenantListing, 1)
	go func() {
		inner := make(chan tenantListing, 1)
		go func() { inner <- s.listTenants(ctx, uuids, ownBefore) }()
		select {
		case l := <-inner:
			c <- l
		case <-time.After(tenantWait):
			c <- tenantListing{err: fmt.Errorf("the listing did not answer within %v", tenantWait)}
		}
	}()
	return c
}

// tenants lists the compute processes again at the end of the window and
// returns both listings for the record, or nil, with a status line, where
// either could not be taken: a leg without them is judged as before.
func (s *Sampler) tenants(ctx context.Context, first tenantListing) *clocks.ComputeProcesses {
	if first.err != nil {
		s.cfg.Logf("compute processes not recorded: %v", first.err)
		return nil
	}
	own := map[int]bool{}
	for _, p := range first.procs {
		if p.Proc == clocks.ProcOwn {
			own[p.PID] = true
		}
	}
	last := <-s.listTenantsBounded(ctx, first.uuids, own)
	if last.err != nil {
		s.cfg.Logf("compute processes not recorded: at the last reading: %v", last.err)
		return nil
	}
	for _, p := range last.procs {
		if p.Proc == clocks.ProcOwn {
			own[p.PID] = true
		}
	}
	cp := &clocks.ComputeProcesses{First: first.procs, Last: last.procs, Own: []int{}, Engine: s.Engines()}
	for pid := range own {
		cp.Own = append(cp.Own, pid)
	}
	sort.Ints(cp.Own)
	return cp
}
