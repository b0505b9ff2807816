package clocks

import (
	"fmt"
	"strings"

	"github.com/clockgate/clockgate/strictjson"
)

// The GPU's PCIe link (SPEC §12.2): four optional sample fields, the
// current generation and width in every reading and the maximum ones the
// GPU and its slot support, a static pair the record keeps per GPU.
const (
	PCIeGen = iota
	PCIeWidth
	PCIeGenMax
	PCIeWidthMax
	NumPCIe
)

// The box's reason codes of the PCIe link and of declared state (SPEC
// §12.2).
const (
	CodeHostPCIeLink = "host.pcie_link"
	CodeExpectation  = "clock.expectation"
)

// PCIeFields are the four fields' keys, in PCIeGen's order.
var PCIeFields = [NumPCIe]string{"pcie_gen", "pcie_width", "pcie_gen_max", "pcie_width_max"}

// pcieKeys are the four keys' bits in a line's key sets.
const pcieKeys = 1<<kPCIeGen | 1<<kPCIeWidth | 1<<kPCIeGenMax | 1<<kPCIeWidthMax

// maxPCIe bounds a PCIe generation or width a sample may hold: the widest
// link is x32, and generations are numbered in ones (Gen6 in 2022).
const maxPCIe = 64

// pcieValid reports whether every PCIe value the line has is in range.
func (p *lineParser) pcieValid() bool {
	for k := kPCIeGen; k <= kPCIeWidthMax; k++ {
		if p.intBits&(1<<k) != 0 && (p.ints[k] < 1 || p.ints[k] > maxPCIe) {
			return false
		}
	}
	return true
}

// pcieRow fills the row's PCIe link from the line's values.
func (p *lineParser) pcieRow() {
	r := p.row
	for i := range NumPCIe {
		if k := kPCIeGen + i; p.intBits&(1<<k) != 0 {
			r.HasPCIe[i], r.PCIe[i] = true, int(p.ints[k])
		}
	}
}

// pcieOf is the sample's PCIe field i, nil where it has none.
func (s *Sample) pcieOf(i int) *int {
	switch i {
	case PCIeGen:
		return s.PCIeGen
	case PCIeWidth:
		return s.PCIeWidth
	case PCIeGenMax:
		return s.PCIeGenMax
	}
	return s.PCIeWidthMax
}

// setPCIe copies the row's PCIe link into the sample.
func (s *Sample) setPCIe(r *Row) {
	at := [NumPCIe]**int{&s.PCIeGen, &s.PCIeWidth, &s.PCIeGenMax, &s.PCIeWidthMax}
	for i, p := range at {
		if r.HasPCIe[i] {
			*p = ptr(r.PCIe[i])
		}
	}
}

// pcieRowOf copies the sample's PCIe link into the row.
func pcieRowOf(s *Sample, r *Row) {
	for i := range NumPCIe {
		if v := s.pcieOf(i); v != nil {
			r.HasPCIe[i], r.PCIe[i] = true, *v
		}
	}
}

// appendPCIe appends the sample's PCIe fields, where it has them.
func (s *Sample) appendPCIe(b []byte) []byte {
	for i, name := range PCIeFields {
		if v := s.pcieOf(i); v != nil {
			b = append(b, `,"`...)
			b = append(b, name...)
			b = append(b, `":`...)
			b = fmt.Appendf(b, "%d", *v)
		}
	}
	return b
}

// pcieFold is what a GPU's busy rows say of its PCIe link: how many
// carried both a current and a maximum value, how many of those ran below
// the maximum, the first such line, and the slowest link seen then.
type pcieFold struct {
	busy, below int
	firstLine   int
	// The first below-maximum reading's link, and its maximum.
	gen, width, genMax, widthMax int
}

// foldPCIe folds in a busy row's PCIe link. Idle rows are not read: a
// link downshifts when idle to save power, which is no defect.
func (g *GPUFold) foldPCIe(r *Row, line int) {
	h := &r.HasPCIe
	if !h[PCIeGen] || !h[PCIeWidth] || !h[PCIeGenMax] || !h[PCIeWidthMax] {
		return
	}
	g.pcie.busy++
	if r.PCIe[PCIeGen] >= r.PCIe[PCIeGenMax] && r.PCIe[PCIeWidth] >= r.PCIe[PCIeWidthMax] {
		return
	}
	g.pcie.below++
	if g.pcie.firstLine == 0 {
		g.pcie.firstLine = line
		g.pcie.gen, g.pcie.width, g.pcie.genMax, g.pcie.widthMax = r.PCIe[PCIeGen], r.PCIe[PCIeWidth], r.PCIe[PCIeGenMax], r.PCIe[PCIeWidthMax]
	}
}

// samePCIeMax notes a row whose maximum link differs from the GPU's
// first sample's as drift: the maximum is static within a window.
func (g *GPUFold) samePCIeMax(r *Row, line int) {
	for _, i := range []int{PCIeGenMax, PCIeWidthMax} {
		first := g.First.pcieOf(i)
		if first == nil && !r.HasPCIe[i] || first != nil && r.HasPCIe[i] && *first == r.PCIe[i] {
			continue
		}
		name := PCIeFields[i]
		if g.drift == nil {
			g.drift = map[string]string{}
		}
		if _, seen := g.drift[name]; !seen {
			now := "absent"
			if r.HasPCIe[i] {
				now = fmt.Sprint(r.PCIe[i])
			}
			g.drift[name] = fmt.Sprintf("%s changed at line %d: %s, then %s", name, line, intOrAbsent(first), now)
			g.driftOrder = append(g.driftOrder, name)
		}
	}
}

// intOrAbsent prints an optional integer for messages.
func intOrAbsent(v *int) string {
	if v == nil {
		return "absent"
	}
	return fmt.Sprint(*v)
}

// PCIeLinkText prints a link as "Gen5 x16".
func PCIeLinkText(gen, width int) string { return fmt.Sprintf("Gen%d x%d", gen, width) }

// checkPCIe is host.pcie_link: a GPU whose link ran below its maximum
// generation or width in a busy reading. Rows without the fields judge
// nothing (an old stream, a backend that cannot read the link).
func (l *Leg) checkPCIe(g *GPUFold) {
	p := &g.pcie
	if p.below == 0 {
		return
	}
	l.add(CodeHostPCIeLink, "GPU %d: PCIe link below its maximum in %d of %d busy readings (first at line %d: %s, maximum %s); the link trained or fell below what the GPU and its slot support, so this leg ran on a slower box: reseat the GPU or move it to a slot that trains at %s, check the link with nvidia-smi -q -d PCIE (or amd-smi metric --pcie), then record the leg again",
		g.Index, p.below, p.busy, p.firstLine, PCIeLinkText(p.gen, p.width), PCIeLinkText(p.genMax, p.widthMax), PCIeLinkText(p.genMax, p.widthMax))
}

// parsePCIeMax reads a GPU's pcie_gen_max and pcie_width_max, where the
// record has them: positive integers, or absent.
func parsePCIeMax(o *obj, g *GPU) {
	for _, k := range []string{"pcie_gen_max", "pcie_width_max"} {
		f, ok := o.v.Fields[k]
		if !ok || o.err != nil {
			continue
		}
		n, isInt := f.Int()
		if f.Kind != strictjson.Number || !isInt || n < 1 || n > maxPCIe {
			o.fail(k, "want a positive integer up to %d, found %s", maxPCIe, f.Describe())
			return
		}
		if k == "pcie_gen_max" {
			g.PCIeGenMax = ptr(int(n))
		} else {
			g.PCIeWidthMax = ptr(int(n))
		}
	}
}

// reconcilePCIe names the record's PCIe maximum where it is not the
// stream's first sample's.
func reconcilePCIe(pre string, rg *GPU, g *GPUFold) []string {
	var bad []string
	for _, c := range []struct {
		name      string
		rec, want *int
	}{{"pcie_gen_max", rg.PCIeGenMax, g.First.PCIeGenMax}, {"pcie_width_max", rg.PCIeWidthMax, g.First.PCIeWidthMax}} {
		if intOrAbsent(c.rec) != intOrAbsent(c.want) {
			bad = append(bad, fmt.Sprintf("%s%s: record %s, stream %s", pre, c.name, intOrAbsent(c.rec), intOrAbsent(c.want)))
		}
	}
	return bad
}

// pcieMaxText prints the arm's GPUs' maximum links, "GPU 0 Gen5 x16,
// GPU 1 Gen4 x16"; ok is false when any GPU lacks either field.
func pcieMaxText(rec *Record) (string, bool) {
	var parts []string
	for i := range rec.GPUs {
		g := &rec.GPUs[i]
		if g.PCIeGenMax == nil || g.PCIeWidthMax == nil {
			return "", false
		}
		idx := i
		if g.Index != nil {
			idx = *g.Index
		}
		parts = append(parts, fmt.Sprintf("GPU %d %s", idx, PCIeLinkText(*g.PCIeGenMax, *g.PCIeWidthMax)))
	}
	return strings.Join(parts, ", "), len(parts) > 0
}

// armPCIeMax is the arm's GPUs' maximum PCIe links by GPU position over its
// trusted legs, each position's distinct links sorted; ok is false when
// a trusted leg's record lacks them (nothing to compare) or none is
// trusted.
func armPCIeMax(a *Arm) (pos []map[string]bool, ok bool) {
	for _, l := range a.Legs {
		if l.Fold == nil || l.Record == nil {
			continue
		}
		for k := range l.Record.GPUs {
			g := &l.Record.GPUs[k]
			if g.PCIeGenMax == nil || g.PCIeWidthMax == nil {
				return nil, false
			}
			for len(pos) <= k {
				pos = append(pos, map[string]bool{})
			}
			pos[k][PCIeLinkText(*g.PCIeGenMax, *g.PCIeWidthMax)] = true
		}
	}
	return pos, len(pos) > 0
}

// HostPCIeMismatch is the PCIe part of host.mismatch (ratio scope, never
// waived): the arms' GPUs, position by position, support different
// maximum PCIe links, so the arms ran on different boxes. Arms that do not
// both record the maximum are not compared (no reason by absence).
func HostPCIeMismatch(ours, baseline *Arm) []Reason {
	op, ok1 := armPCIeMax(ours)
	bp, ok2 := armPCIeMax(baseline)
	if !ok1 || !ok2 {
		return nil
	}
	var diff []string
	for k := range min(len(op), len(bp), len(ours.gpus)) {
		ov, bv := sortedKeys(op[k]), sortedKeys(bp[k])
		if strings.Join(ov, " ") != strings.Join(bv, " ") {
			diff = append(diff, fmt.Sprintf("%sPCIe maximum %s %s, %s %s", ours.position(k),
				ours.Engine, strings.Join(ov, " "), baseline.Engine, strings.Join(bv, " ")))
		}
	}
	if len(diff) == 0 {
		return nil
	}
	return []Reason{ratioReason(CodeHostMismatch,
		"arms are not on one kind of box: %s; the GPUs' links support different speeds, so the ratio measures the boxes as well as the engines: run both arms on one box, or on boxes whose GPUs train at the same PCIe generation and width",
		strings.Join(diff, "; "))}
}
