package clocks

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// pcieWindow is a clean GB10 window whose samples record a PCIe link at
// gen/width with the maximum genMax/widthMax.
func pcieWindow(boot string, gen, width, genMax, widthMax int) []*Sample {
	ss := cleanWindow(boot)
	for _, s := range ss {
		s.PCIeGen, s.PCIeWidth, s.PCIeGenMax, s.PCIeWidthMax = ptr(gen), ptr(width), ptr(genMax), ptr(widthMax)
	}
	return ss
}

// The reader reads the four PCIe fields as the oracle does: integers,
// null as absent, and a wrong type, a value out of range or a duplicate
// refused naming the key.
func TestPCIeReaderEqualsOracle(t *testing.T) {
	base := streamOf(pcieWindow(bootF6, 5, 16, 5, 16))
	sameFold(t, base)
	for _, to := range []string{`"pcie_gen":null`, `"pcie_gen":"5"`, `"pcie_gen":0`, `"pcie_gen":65`, `"pcie_gen":64`, `"pcie_gen":4.5`,
		`"pcie_gen":5,"pcie_gen":4`, `"pcie_gen":3`, `"pcie_gen":-1`} {
		for _, n := range []int{1, -1} {
			edited := bytes.Replace(base, []byte(`"pcie_gen":5`), []byte(to), n)
			t.Run(fmt.Sprintf("%s×%d", to, n), func(t *testing.T) { sameFold(t, edited) })
		}
	}
	r := NewReader(bytes.NewReader(bytes.Replace(base, []byte(`"pcie_width_max":16`), []byte(`"pcie_width_max":65`), 1)), "r1.samples.jsonl")
	for r.Scan() {
	}
	if err := r.Err(); err == nil || err.Error() != "r1.samples.jsonl:1: pcie_width_max: want a positive integer up to 64, found 65" {
		t.Errorf("err = %v", err)
	}
	r = NewReader(bytes.NewReader(base), "")
	if !r.Scan() || r.Row().PCIe != [NumPCIe]int{5, 16, 5, 16} || r.Row().HasPCIe != [NumPCIe]bool{true, true, true, true} ||
		*r.Row().Sample().PCIeWidthMax != 16 {
		t.Errorf("row %+v", r.Row())
	}
	if line := string(pcieWindow(bootF6, 4, 8, 5, 16)[0].AppendJSON(nil)); !strings.HasSuffix(line, `,"pcie_gen":4,"pcie_width":8,"pcie_gen_max":5,"pcie_width_max":16}`) {
		t.Errorf("line %s", line)
	}
}

// host.pcie_link: a busy reading below the maximum generation, or below
// the maximum width, is the reason, naming the GPU, current against
// maximum and what to do; at the maximum, or only in idle readings, it is
// not.
func TestPCIeLinkBelowMaximum(t *testing.T) {
	wantCodes(t, legOf(t, "r1", pcieWindow(boot13, 5, 16, 5, 16), nil).Reasons)
	// The exact boundary: one generation, or one lane, under the maximum.
	ss := pcieWindow(boot13, 5, 16, 5, 16)
	ss[9].PCIeGen = ptr(4)
	l := legOf(t, "r1", ss, nil)
	wantCodes(t, l.Reasons, CodeHostPCIeLink)
	wantReason(t, l.Reasons, CodeHostPCIeLink, "GPU 0: PCIe link below its maximum in 1 of 61 busy readings (first at line 10: Gen4 x16, maximum Gen5 x16)",
		"reseat the GPU or move it to a slot that trains at Gen5 x16", "nvidia-smi -q -d PCIE")
	ss = pcieWindow(boot13, 5, 16, 5, 16)
	ss[20].PCIeWidth = ptr(15)
	ss[30].PCIeWidth = ptr(8)
	l = legOf(t, "r1", ss, nil)
	wantCodes(t, l.Reasons, CodeHostPCIeLink)
	wantReason(t, l.Reasons, CodeHostPCIeLink, "in 2 of 61 busy readings (first at line 21: Gen5 x15, maximum Gen5 x16)")
	// A link degraded all window long (trained at x8).
	l = legOf(t, "r1", pcieWindow(boot13, 3, 8, 5, 16), nil)
	wantReason(t, l.Reasons, CodeHostPCIeLink, "in 61 of 61 busy readings (first at line 1: Gen3 x8, maximum Gen5 x16)")
	// Idle readings downshift to save power: no reason.
	ss = pcieWindow(boot13, 5, 16, 5, 16)
	for _, s := range ss {
		if s.Idle() {
			s.PCIeGen, s.PCIeWidth = ptr(1), ptr(1)
		}
	}
	wantCodes(t, legOf(t, "r1", ss, nil).Reasons)
	// An old stream, or one without the maximum, judges nothing.
	wantCodes(t, legOf(t, "r1", cleanWindow(boot13), nil).Reasons)
	ss = cleanWindow(boot13)
	for _, s := range ss {
		s.PCIeGen, s.PCIeWidth = ptr(1), ptr(1)
	}
	wantCodes(t, legOf(t, "r1", ss, nil).Reasons)
}

// The maximum is static within a window: a change is clock.static_drift.
func TestPCIeMaxChangesWithinWindow(t *testing.T) {
	ss := pcieWindow(boot13, 5, 16, 5, 16)
	ss[17].PCIeWidthMax = ptr(8)
	ss[17].PCIeWidth = ptr(8)
	l := legOf(t, "r1", ss, nil)
	wantCodes(t, l.Reasons, CodeStaticDrift)
	wantReason(t, l.Reasons, CodeStaticDrift, "pcie_width_max changed at line 18: 16, then 8")
	ss = cleanWindow(boot13)
	ss[5].PCIeGenMax = ptr(5)
	wantReason(t, legOf(t, "r1", ss, nil).Reasons, CodeStaticDrift, "pcie_gen_max changed at line 6: absent, then 5")
}

// The record carries the maximum where the stream does, reconciled with
// it, and validated.
func TestPCIeRecord(t *testing.T) {
	ss := pcieWindow(boot13, 5, 16, 5, 16)
	rec := recordJSON(t, recordOf(t, ss, StopPIDExit))
	if !bytes.Contains(rec, []byte(`"pcie_gen_max":5,"pcie_width_max":16`)) {
		t.Fatalf("record %s", rec)
	}
	if bytes.Contains(recordJSON(t, recordOf(t, cleanWindow(boot13), StopPIDExit)), []byte("pcie")) {
		t.Error("a stream without pcie fields gave a record with them")
	}
	l := legOf(t, "r1", ss, func(r *Record) { r.GPUs[0].PCIeGenMax = ptr(4) })
	wantCodes(t, l.Reasons, CodeStreamMismatch)
	wantReason(t, l.Reasons, CodeStreamMismatch, "pcie_gen_max: record 4, stream 5")
	l = legOf(t, "r1", ss, func(r *Record) { r.GPUs[0].PCIeWidthMax = nil })
	wantReason(t, l.Reasons, CodeStreamMismatch, "pcie_width_max: record absent, stream 16")
	for _, tc := range []struct{ to, want string }{
		{`"pcie_gen_max":"5"`, `pcie_gen_max: want a positive integer up to 64, found string "5"`},
		{`"pcie_gen_max":0`, "pcie_gen_max: want a positive integer up to 64, found number 0"},
	} {
		bad := strings.Replace(string(rec), `"pcie_gen_max":5`, tc.to, 1)
		if _, err := ParseRecord([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.to, err)
		}
	}
	got, err := ParseRecord(rec)
	if err != nil || got.GPUs[0].PCIeGenMax == nil || *got.GPUs[0].PCIeGenMax != 5 || *got.GPUs[0].PCIeWidthMax != 16 {
		t.Errorf("parsed %+v, %v", got, err)
	}
}

// host.mismatch's PCIe part: the arms' GPUs' maximum links differ, with
// the slower box on either side; one link in both arms, or an arm that
// does not record it, is no reason.
func TestPCIeMaxAcrossArms(t *testing.T) {
	gen5 := pcieWindow(boot13, 5, 16, 5, 16)
	for _, tc := range []struct {
		name       string
		ours, base []*Sample
		want       string
	}{
		{"ours slower", pcieWindow(boot13, 4, 16, 4, 16), gen5, "PCIe maximum fastserve Gen4 x16, vllm Gen5 x16"},
		{"baseline slower", gen5, pcieWindow(boot13, 4, 16, 4, 16), "PCIe maximum fastserve Gen5 x16, vllm Gen4 x16"},
		{"ours narrower", pcieWindow(boot13, 5, 8, 5, 8), gen5, "PCIe maximum fastserve Gen5 x8, vllm Gen5 x16"},
		{"baseline narrower", gen5, pcieWindow(boot13, 5, 8, 5, 8), "PCIe maximum fastserve Gen5 x16, vllm Gen5 x8"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := HostPCIeMismatch(arm(t, "fastserve", false, tc.ours), arm(t, "vllm", false, tc.base))
			wantCodes(t, got, CodeHostMismatch)
			wantReason(t, got, CodeHostMismatch, "arms are not on one kind of box: "+tc.want, "run both arms on one box")
			if got[0].Scope != ScopeRatio {
				t.Errorf("scope %s", got[0].Scope)
			}
		})
	}
	wantCodes(t, HostPCIeMismatch(arm(t, "fastserve", false, gen5), arm(t, "vllm", false, pcieWindow(boot13, 5, 16, 5, 16))))
	wantCodes(t, HostPCIeMismatch(arm(t, "fastserve", false, cleanWindow(boot13)), arm(t, "vllm", false, pcieWindow(boot13, 4, 16, 4, 16))))
	wantCodes(t, HostPCIeMismatch(arm(t, "fastserve", false, pcieWindow(boot13, 4, 16, 4, 16)), arm(t, "vllm", false, cleanWindow(boot13))))
	// Two legs of one arm on different boxes are each compared.
	got := HostPCIeMismatch(arm(t, "fastserve", false, gen5, pcieWindow(boot13, 4, 16, 4, 16)), arm(t, "vllm", false, gen5))
	wantReason(t, got, CodeHostMismatch, "PCIe maximum fastserve Gen4 x16 Gen5 x16, vllm Gen5 x16")
}
