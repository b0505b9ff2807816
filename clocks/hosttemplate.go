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
	// cur is the line the template reads into, kept from line to line:
	// the learned values, with each hole holding the value of the line
	// read last. A read writes only holes, and a line that fits writes
	// every one, so a literal's value is the learned one whatever the
	// lines before (one that stopped part way included) and a line costs
	// its holes alone. Its PSI and CPUMHz point at curPSI and curMHz.
	cur    HostLine
	curPSI HostPSI
	curMHz float64
	// minute are the first 17 bytes of a t read before ("2026-12-03T12:52:"),
	// which str read: a t that starts with them is read without str.
	minute     [17]byte
	haveMinute bool
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
	tm.restore()
}

// restore sets cur to the learned line.
func (tm *hostTemplate) restore() {
	top := append(tm.cur.Top[:0], tm.line.Top...)
	tm.cur = tm.line
	if tm.cur.Top = top; top == nil {
		tm.cur.Top = []HostProc{}
	}
	tm.curPSI, tm.curMHz = tm.psi, tm.mhz
	if tm.line.PSI != nil {
		tm.cur.PSI = &tm.curPSI
	}
	if tm.line.CPUMHz != nil {
		tm.cur.CPUMHz = &tm.curMHz
	}
}

// plain says str reads every byte of b.
func plain(b []byte) bool {
	for _, c := range b {
		if !plainByte[c] {
			return false
		}
	}
	return true
}

// reset forgets the layout, for another stream.
func (tm *hostTemplate) reset() {
	tm.ok = false
	tm.holes, tm.prev, tm.prevSlots = tm.holes[:0], tm.prev[:0], tm.prevSlots[:0]
}

// read reads b through the template into cur, as parseHostLineFast
// would read it, and returns its t and cur; ok is false where b does not
// fit. Only the holes are parsed: cur keeps the literals' values.
func (tm *hostTemplate) read(b []byte, f *HostFold) (t []byte, l *HostLine, ok bool) {
	if !tm.ok {
		return nil, nil, false
	}
	l = &tm.cur
	p := hostScan{b: b}
	for _, sg := range tm.segs {
		if len(b)-p.i < len(sg.lit) || string(b[p.i:p.i+len(sg.lit)]) != string(sg.lit) {
			return nil, nil, false
		}
		p.i += len(sg.lit)
		if sg.hole < 0 {
			break
		}
		s := tm.slots[sg.hole]
		var n int64
		switch s.kind {
		case slotT, slotComm:
			if j := p.i + 24; s.kind == slotT && tm.haveMinute && j < len(b) && b[j] == '"' &&
				string(b[p.i:p.i+17]) == string(tm.minute[:]) && plain(b[p.i+17:j]) {
				// A t of the minute a t before had, as str reads it.
				t, p.i = b[p.i:j], j
				continue
			}
			v := p.str()
			if v == nil {
				return nil, nil, false
			}
			p.i--
			if s.kind == slotT {
				t = v
				if len(v) >= len(tm.minute) {
					tm.haveMinute = copy(tm.minute[:], v) > 0
				}
			} else if pr := &l.Top[s.top]; pr.Comm != string(v) {
				if c, seen := f.comms[pr.PID]; seen && c == string(v) {
					pr.Comm = c
				} else {
					pr.Comm = string(v)
					f.comms[pr.PID] = pr.Comm
				}
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
			ok = p.num(&tm.curMHz)
		case slotPID:
			ok = p.int(&n)
			l.Top[s.top].PID = int(n)
		case slotPSICPU:
			ok = p.int(&tm.curPSI.CPUSome)
		case slotPSIMem:
			ok = p.int(&tm.curPSI.MemoryFull)
		case slotPSIIO:
			ok = p.int(&tm.curPSI.IOFull)
		case slotSwapIn:
			ok = p.int(&l.Swap.In)
		case slotSwapOut:
			ok = p.int(&l.Swap.Out)
		}
		if s.kind != slotT && s.kind != slotComm && !ok {
			return nil, nil, false
		}
	}
	if t == nil || p.i != len(b) {
		return nil, nil, false
	}
	return t, l, true
}

// readFast reads b through the template, else by parseHostLineFast into
// scratch (learning the template from it), and returns its t and the line
// read; ok is false for a line in neither, which ParseHostLine then reads
// strictly.
func (f *HostFold) readFast(b []byte, scratch *HostLine) (t []byte, l *HostLine, ok bool) {
	if t, l, ok = f.tmpl.read(b, f); ok {
		return t, l, true
	}
	if t, ok = parseHostLineFast(b, scratch, f); ok {
		f.tmpl.learn(b, scratch, f)
	}
	return t, scratch, ok
}
