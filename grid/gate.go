package grid

import (
	"context"
	"fmt"
	"math"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/sampler"
)

// tenants lists the compute processes on the grid's GPUs.
func (g *grid) tenants(ctx context.Context) ([]clocks.ComputeProcess, error) {
	pl, ok := g.backend.(sampler.ProcessLister)
	if !ok {
		return nil, fmt.Errorf("%s cannot list compute processes, so the GPUs cannot be known free", g.backend.Name())
	}
	ps, err := pl.ComputeProcesses(ctx)
	if err != nil {
		return nil, err
	}
	on := map[string]bool{}
	for _, u := range g.uuids {
		on[u] = true
	}
	var out []clocks.ComputeProcess
	for _, p := range ps {
		if on[p.GPUUUID] {
			out = append(out, p)
		}
	}
	return out, nil
}

// portFree reports whether nothing listens on the plan's port, on any
// address: a listener there would answer the next server's readiness
// probe, or keep it from binding.
func (g *grid) portFree() error {
	l, err := net.Listen("tcp", ":"+strconv.Itoa(g.p.Port))
	if err != nil {
		if pids, lerr := g.procs.Listeners(g.p.Port); lerr == nil && len(pids) > 0 {
			who := make([]string, len(pids))
			for i, p := range pids {
				who[i] = "pid " + g.procs.Describe(p)
			}
			return fmt.Errorf("port %d is taken by %s: %v", g.p.Port, strings.Join(who, ", "), err)
		}
		return fmt.Errorf("port %d is taken: %v", g.p.Port, err)
	}
	return l.Close()
}

// busy says what holds the GPUs or the port, "" when nothing does.
func (g *grid) busy(ctx context.Context) (string, error) {
	if g.sl != nil {
		return g.busyNodes(ctx)
	}
	ps, err := g.tenants(ctx)
	if err != nil {
		return "", err
	}
	var what []string
	for _, p := range ps {
		what = append(what, fmt.Sprintf("compute process %d (%s) on %s", p.PID, p.Name, p.GPUUUID))
	}
	if err := g.portFree(); err != nil {
		what = append(what, err.Error())
	}
	return strings.Join(what, "; "), nil
}

// waitFree waits, up to the stop's bound, for no compute process on the
// GPUs and the port free, and names what is left after it.
func (g *grid) waitFree(ctx context.Context) (string, error) {
	deadline := g.now().Add(g.t.stopWait)
	for {
		what, err := g.busy(ctx)
		if err != nil || what == "" {
			return what, err
		}
		if !g.now().Before(deadline) {
			return what, nil
		}
		if !sleep(ctx, g.t.gatePoll) {
			return what, ctx.Err()
		}
	}
}

// precheck is step (1): no compute process on the leg's GPUs, the port
// free, waited for up to the stop's bound.
func (g *grid) precheck(ctx context.Context) error {
	what, err := g.waitFree(ctx)
	if err != nil {
		return stopped("pre-check: %v", err)
	}
	if what != "" {
		return stopped("pre-check: after %v the GPUs or the port are still in use: %s; a leg shares them with nothing (stop it, or choose other gpus or another port)", g.t.stopWait, what)
	}
	return nil
}

// idleRead reads the GPUs for the idle read's span at grid start, before
// any server, and keeps each GPU's median as its idle temperature.
func (g *grid) idleRead(ctx context.Context) error {
	g.prog.phase("idle read", "reading the idle temperature for %v", g.t.idleRead)
	start := g.now()
	var rs []reading
	for {
		r, err := g.read(ctx)
		if err != nil {
			return err
		}
		rs = append(rs, r)
		if !g.now().Before(start.Add(g.t.idleRead)) {
			break
		}
		if !sleep(ctx, g.t.gatePoll) {
			return g.interrupted(ctx, "the idle read")
		}
	}
	g.idle = make([]float64, len(g.uuids))
	for i := range g.uuids {
		xs := make([]float64, len(rs))
		for k, r := range rs {
			xs[k] = r.c[i]
		}
		g.idle[i] = median(xs)
	}
	g.history = rs
	g.prog.say("idle temperature %s (the median of %d readings over %v)", temps(g.idle), len(rs), g.t.idleRead)
	return nil
}

func (g *grid) interrupted(ctx context.Context, during string) error {
	if sc, ok := context.Cause(ctx).(SignalCause); ok {
		return &ExitError{Code: 128 + int(sc.Sig), Err: fmt.Errorf("%s during %s", signame(sc.Sig), during)}
	}
	return stopped("%s: %v", during, ctx.Err())
}

func median(xs []float64) float64 {
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// slope is the least-squares slope of the GPU's temperature over the
// readings, in °C per minute.
func slope(rs []reading, gpu int) float64 {
	if len(rs) < 2 {
		return 0
	}
	t0 := rs[0].t
	var sx, sy, sxx, sxy float64
	n := float64(len(rs))
	for _, r := range rs {
		x := r.t.Sub(t0).Minutes()
		y := r.c[gpu]
		sx += x
		sy += y
		sxx += x * x
		sxy += x * y
	}
	d := n*sxx - sx*sx
	if d == 0 {
		return 0
	}
	return (n*sxy - sx*sy) / d
}

// gateVerdict judges the readings against the gate: "" when every GPU is
// within AboveIdleC of its idle temperature and its slope over the last
// window is within MaxSlopeCPerMin, else why not. It also returns the
// last temperatures and slopes.
func (g *grid) gateVerdict(rs []reading) (string, []float64, []float64) {
	last := rs[len(rs)-1]
	from := last.t.Add(-g.t.slopeWindow)
	k := sort.Search(len(rs), func(i int) bool { return !rs[i].t.Before(from) })
	win := rs[k:]
	// The readings cover the window when the first is no later than its
	// start (half a poll of slack for the ticks).
	covered := !rs[0].t.After(from.Add(g.t.gatePoll / 2))
	slopes := make([]float64, len(g.uuids))
	var why []string
	for i := range g.uuids {
		slopes[i] = slope(win, i)
		target := g.idle[i] + g.p.Cooldown.AboveIdleC
		if !within(last.c[i], target) {
			why = append(why, fmt.Sprintf("%s at %.1f °C, above the target %.1f °C (idle %.1f + %.1f)", g.gpuLabel(i), last.c[i], target, g.idle[i], g.p.Cooldown.AboveIdleC))
		}
		if !within(abs(slopes[i]), g.p.Cooldown.MaxSlopeCPerMin) {
			why = append(why, fmt.Sprintf("%s moving %+.2f °C/min over the last %v, more than %.2f", g.gpuLabel(i), slopes[i], g.t.slopeWindow, g.p.Cooldown.MaxSlopeCPerMin))
		}
	}
	if !covered && len(why) == 0 {
		why = append(why, fmt.Sprintf("the slope needs %v of readings", g.t.slopeWindow))
	}
	return strings.Join(why, "; "), last.c, slopes
}

// within reports x ≤ limit, both taken to a millionth (of a degree, or of
// a degree per minute): exact at the boundary, whatever the sum or the
// fit added in its last bits.
func within(x, limit float64) bool {
	return math.Round(x*1e6) <= math.Round(limit*1e6)
}

func abs(x float64) float64 {
	if x < 0 {
		return -x
	}
	return x
}

// gate is step (2): it reads the GPUs until each is within AboveIdleC of
// its idle temperature and settled, or MaxWait has passed.
func (g *grid) gate(ctx context.Context) (tempsC, slopes []float64, wait time.Duration, err error) {
	start := g.now()
	deadline := start.Add(g.p.Cooldown.MaxWait)
	for {
		r, err := g.read(ctx)
		if err != nil {
			return nil, nil, 0, err
		}
		g.history = append(g.history, r)
		// Only the last window matters.
		if len(g.history) > 4096 {
			g.history = g.history[len(g.history)-2048:]
		}
		why, tc, sl := g.gateVerdict(g.history)
		wait = g.now().Sub(start)
		if why == "" {
			return tc, sl, wait, nil
		}
		g.prog.phase("cooling", "%s, waited %v of %v", temps(tc), wait.Round(time.Second), g.p.Cooldown.MaxWait)
		if !g.now().Before(deadline) {
			return tc, sl, wait, stopped("idle gate: not cool within max_wait %v: %s; the leg was not started (raise max_wait, or find what keeps the GPU warm)", g.p.Cooldown.MaxWait, why)
		}
		if !sleep(ctx, g.t.gatePoll) {
			return tc, sl, wait, g.interrupted(ctx, "the idle gate")
		}
	}
}

func temps(cs []float64) string {
	s := make([]string, len(cs))
	for i, c := range cs {
		s[i] = strconv.FormatFloat(c, 'f', 1, 64) + " °C"
	}
	return strings.Join(s, ", ")
}

// sleep waits d, or less when ctx ends (false then).
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
