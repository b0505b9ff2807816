package clocks

import "bytes"

// A host stream's lines share one layout, as the GPU stream's do
// (template.go), and many of their values stay the same from line to line
// (the other processes' pids and names, the PSI memory and I/O totals, the
// swap pages). A host template is learned from a line read by
// parseHostLineFast and the one it read before: the values whose bytes
// differed between them are holes, and the rest of the line, keys and
// unchanged values alike, is one run of literals. A line that repeats
// every literal byte for byte is read by comparing the literals and
// parsing only the holes, each as parseHostLineFast parses it there; the
// literals' values are the learned line's, since the same bytes read the
// same way. Any other line is read by parseHostLineFast, and the template
// learned again: a value that was a hole stays one while the layout stays,
// so a stream relearns at most once per value.

// hostSlot is one value of a line read by parseHostLineFast: its kind,
// the index of its process in top (for slotPID, slotComm and slotCores),
// and its bytes b[start:end] (a string's without its quotes).
type hostSlot struct {
	kind, top  int
	start, end int
}

// The kinds of a hostSlot.
const (
	slotT = iota
	slotBusy
	slotSteal
	slotIOWait
	slotOwnCPU
	slotOwnWait
	slotOtherCPU
	slotPID
	slotComm
	slotCores
	slotPSICPU
	slotPSIMem
	slotPSIIO
	slotMHz
	slotSwapIn
	slotSwapOut
)

func (p *hostScan) numAt(kind, top int, v *float64) bool {
	start := p.i
	if !p.num(v) {
		return false
	}
	p.slots = append(p.slots, hostSlot{kind, top, start, p.i})
	return true
}

func (p *hostScan) intAt(kind, top int, v *int64) bool {
	start := p.i
	if !p.int(v) {
		return false
	}
	p.slots = append(p.slots, hostSlot{kind, top, start, p.i})
	return true
}

func (p *hostScan) strAt(kind, top int) []byte {
	start := p.i
	s := p.str()
	if s != nil {
		p.slots = append(p.slots, hostSlot{kind, top, start, p.i - 1})
	}
	return s
}

// hostSegment is a literal and the hole after it: an index into the
// template's slots, or -1 at the line's end.
type hostSegment struct {
	lit  []byte
	hole int
}

// hostTemplate is a learned host line layout; see above.
type hostTemplate struct {
	ok    bool
	segs  []hostSegment
	slots []hostSlot
	holes []bool
	arena []byte
	// The learned line's values.
	line HostLine
	psi  HostPSI
	mhz  float64
	// The line parseHostLineFast read last and its slots.
	prev      []byte
	prevSlots []hostSlot
}

// learn learns the template from b, which parseHostLineFast has just read
// into l, f.psi, f.mhz1 and f.slots, and the line it read before.
func (tm *hostTemplate) learn(b []byte, l *HostLine, f *HostFold) {
	slots := f.slots
	same := tm.prev != nil && len(tm.prevSlots) == len(slots) && len(tm.holes) == len(slots)
	for i := 0; same && i < len(slots); i++ {
		same = slots[i].kind == tm.prevSlots[i].kind && slots[i].top == tm.prevSlots[i].top
	}
	if !same {
		// No line of this layout before it to learn with: the next one.
		tm.ok, tm.holes = false, tm.holes[:0]
		for range slots {
			tm.holes = append(tm.holes, false)
		}
	}
	for i, s := range slots {
		if same && !tm.holes[i] {
			ps := tm.prevSlots[i]
			tm.holes[i] = s.kind == slotT || !bytes.Equal(b[s.start:s.end], tm.prev[ps.start:ps.end])
		}
	}
	tm.prev = append(tm.prev[:0], b...)
	tm.prevSlots = append(tm.prevSlots[:0], slots...)
	if !same {
		return
	}
	tm.arena = append(tm.arena[:0], b...)
	tm.segs = tm.segs[:0]
	pos := 0
	for i, s := range slots {
		if tm.holes[i] {
			tm.segs = append(tm.segs, hostSegment{tm.arena[pos:s.start], i})
			pos = s.end
		}
	}
	tm.segs = append(tm.segs, hostSegment{tm.arena[pos:], -1})
	tm.slots = append(tm.slots[:0], slots...)
	top := tm.line.Top[:0]
	tm.line = *l
	tm.line.Top = append(top, l.Top...)
	tm.psi, tm.mhz = f.psi, f.mhz1
	tm.ok = true
}

// read reads b into l, f.psi and f.mhz1 as parseHostLineFast would where
// b fits the template, and returns its t; ok is false where it does not.
func (tm *hostTemplate) read(b []byte, l *HostLine, f *HostFold) (t []byte, ok bool) {
	if !tm.ok {
		return nil, false
	}
	p := hostScan{b: b}
	top := append(l.Top[:0], tm.line.Top...)
	*l = tm.line
	if l.Top = top; l.Top == nil {
		l.Top = []HostProc{}
	}
	// l.PSI and l.CPUMHz, where the learned line has them, point at f's.
	f.psi, f.mhz1 = tm.psi, tm.mhz
	for _, sg := range tm.segs {
		if len(b)-p.i < len(sg.lit) || string(b[p.i:p.i+len(sg.lit)]) != string(sg.lit) {
			return nil, false
		}
		p.i += len(sg.lit)
		if sg.hole < 0 {
			break
		}
		s := tm.slots[sg.hole]
		var n int64
		switch s.kind {
		case slotT, slotComm:
			v := p.str()
			if v == nil {
				return nil, false
			}
			p.i--
			if s.kind == slotT {
				t = v
			} else if c, seen := f.comms[l.Top[s.top].PID]; seen && c == string(v) {
				l.Top[s.top].Comm = c
			} else {
				l.Top[s.top].Comm = string(v)
				f.comms[l.Top[s.top].PID] = l.Top[s.top].Comm
			}
		case slotBusy:
			ok = p.num(&l.CPU.Busy)
		case slotSteal:
			ok = p.num(&l.CPU.Steal)
		case slotIOWait:
			ok = p.num(&l.CPU.IOWait)
		case slotOwnCPU:
			ok = p.num(&l.OwnCPU)
		case slotOwnWait:
			ok = p.num(&l.OwnWait)
		case slotOtherCPU:
			ok = p.num(&l.OtherCPU)
		case slotCores:
			ok = p.num(&l.Top[s.top].Cores)
		case slotMHz:
			ok = p.num(&f.mhz1)
		case slotPID:
			ok = p.int(&n)
			l.Top[s.top].PID = int(n)
		case slotPSICPU:
			ok = p.int(&f.psi.CPUSome)
		case slotPSIMem:
			ok = p.int(&f.psi.MemoryFull)
		case slotPSIIO:
			ok = p.int(&f.psi.IOFull)
		case slotSwapIn:
			ok = p.int(&l.Swap.In)
		case slotSwapOut:
			ok = p.int(&l.Swap.Out)
		}
		if s.kind != slotT && s.kind != slotComm && !ok {
			return nil, false
		}
	}
	if t == nil || p.i != len(b) {
		return nil, false
	}
	return t, true
}

// readFast reads b into l through the template, else parseHostLineFast
// (learning the template from it), and returns its t; ok is false for a
// line in neither, which ParseHostLine then reads strictly.
func (f *HostFold) readFast(b []byte, l *HostLine) (t []byte, ok bool) {
	if t, ok = f.tmpl.read(b, l, f); ok {
		return t, true
	}
	if t, ok = parseHostLineFast(b, l, f); ok {
		f.tmpl.learn(b, l, f)
	}
	return t, ok
}
