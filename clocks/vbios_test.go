package clocks

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
)

// vbiosWindow is a clean GB10 window whose samples record vbios.
func vbiosWindow(boot, vbios string) []*Sample {
	ss := cleanWindow(boot)
	for _, s := range ss {
		s.VbiosVersion = ptr(vbios)
	}
	return ss
}

// The reader reads vbios_version as the oracle does: a string, null as
// absent, and a wrong type, an empty string or a duplicate refused
// naming the key.
func TestVbiosReaderEqualsOracle(t *testing.T) {
	base := streamOf(vbiosWindow(bootF6, "96.00.A5.00.01"))
	sameFold(t, base)
	for _, to := range []string{`"vbios_version":null`, `"vbios_version":1`, `"vbios_version":""`, `"vbios_version":"96.00.A5.00.01","vbios_version":"x"`,
		`"vbios_version":"96.00.A5.00.02"`, `"vbios_version":"96\u002e00"`, `"vbios_version":["96"]`} {
		for _, n := range []int{1, -1} {
			edited := bytes.Replace(base, []byte(`"vbios_version":"96.00.A5.00.01"`), []byte(to), n)
			t.Run(fmt.Sprintf("%s×%d", to, n), func(t *testing.T) { sameFold(t, edited) })
		}
	}
	r := NewReader(bytes.NewReader(bytes.Replace(base, []byte(`"vbios_version":"96.00.A5.00.01"`), []byte(`"vbios_version":7`), 1)), "r1.samples.jsonl")
	for r.Scan() {
	}
	if err := r.Err(); err == nil || err.Error() != "r1.samples.jsonl:1: vbios_version: want a string, found number 7" {
		t.Errorf("err = %v", err)
	}
	r = NewReader(bytes.NewReader(base), "")
	if !r.Scan() || !r.Row().HasVbios || string(r.Row().Vbios) != "96.00.A5.00.01" || *r.Row().Sample().VbiosVersion != "96.00.A5.00.01" {
		t.Errorf("row %+v", r.Row())
	}
}

// vbios_version is constant within a window: a change, or a stream that
// starts recording it, is clock.static_drift naming the line.
func TestVbiosChangesWithinWindow(t *testing.T) {
	ss := vbiosWindow(boot13, "96.00.A5.00.01")
	ss[17].VbiosVersion = ptr("96.00.A5.00.02")
	l := legOf(t, "r1", ss, nil)
	wantCodes(t, l.Reasons, CodeStaticDrift)
	wantReason(t, l.Reasons, CodeStaticDrift, `vbios_version changed at line 18: "96.00.A5.00.01", then "96.00.A5.00.02"`)
	ss = cleanWindow(boot13)
	ss[5].VbiosVersion = ptr("96.00.A5.00.01")
	wantReason(t, legOf(t, "r1", ss, nil).Reasons, CodeStaticDrift, `vbios_version changed at line 6: absent, then "96.00.A5.00.01"`)
	wantCodes(t, legOf(t, "r1", vbiosWindow(boot13, "96.00.A5.00.01"), nil).Reasons)
}

// Across an arm's legs and across the arms: one VBIOS, and one arm that
// records it against one that does not is a mismatch; two that both lack
// it agree (old streams keep their verdicts).
func TestVbiosAcrossLegsAndArms(t *testing.T) {
	a := arm(t, "vllm", false, vbiosWindow(boot13, "96.00.A5.00.01"), vbiosWindow(boot13, "96.00.A5.00.02"))
	wantReason(t, a.Reasons, CodeStaticMismatch, `vbios_version: "96.00.A5.00.01" (r1), "96.00.A5.00.02" (r2)`)
	b := Compare(arm(t, "fastserve", false, vbiosWindow(boot13, "96.00.A5.00.02")), arm(t, "vllm", false, vbiosWindow(boot13, "96.00.A5.00.01")), false)
	wantCodes(t, b.Reasons, CodeHardwareMismatch)
	wantReason(t, b.Reasons, CodeHardwareMismatch, `vbios_version: fastserve "96.00.A5.00.02", vllm "96.00.A5.00.01"`)
	b = Compare(arm(t, "fastserve", false, cleanWindow(boot13)), arm(t, "vllm", false, vbiosWindow(boot13, "96.00.A5.00.01")), false)
	wantReason(t, b.Reasons, CodeHardwareMismatch, `vbios_version: fastserve absent, vllm "96.00.A5.00.01"`)
	b = Compare(arm(t, "fastserve", false, vbiosWindow(boot13, "96.00.A5.00.01")), arm(t, "vllm", false, vbiosWindow(boot13, "96.00.A5.00.01")), false)
	for _, r := range b.Reasons {
		if r.Code == CodeHardwareMismatch {
			t.Errorf("one VBIOS in both arms: %v", r)
		}
	}
}

// The record carries vbios_version where the stream does, reconciled with
// it, and validated.
func TestVbiosRecord(t *testing.T) {
	ss := vbiosWindow(boot13, "96.00.A5.00.01")
	rec := recordJSON(t, recordOf(t, ss, StopPIDExit))
	if !bytes.Contains(rec, []byte(`"vbios_version":"96.00.A5.00.01"`)) {
		t.Fatalf("record %s", rec)
	}
	if bytes.Contains(recordJSON(t, recordOf(t, cleanWindow(boot13), StopPIDExit)), []byte("vbios")) {
		t.Error("a stream without vbios_version gave a record with it")
	}
	l := legOf(t, "r1", ss, func(r *Record) { r.GPUs[0].VbiosVersion = ptr("96.00.A5.00.09") })
	wantCodes(t, l.Reasons, CodeStreamMismatch)
	wantReason(t, l.Reasons, CodeStreamMismatch, `vbios_version: record "96.00.A5.00.09", stream "96.00.A5.00.01"`)
	l = legOf(t, "r1", ss, func(r *Record) { r.GPUs[0].VbiosVersion = nil })
	wantReason(t, l.Reasons, CodeStreamMismatch, `vbios_version: record absent, stream "96.00.A5.00.01"`)
	for _, tc := range []struct{ to, want string }{
		{`"vbios_version":3`, "vbios_version: want a string, found number 3"},
		{`"vbios_version":""`, "vbios_version: empty string"},
	} {
		bad := strings.Replace(string(rec), `"vbios_version":"96.00.A5.00.01"`, tc.to, 1)
		if _, err := ParseRecord([]byte(bad)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v", tc.to, err)
		}
	}
	got, err := ParseRecord(rec)
	if err != nil || got.GPUs[0].VbiosVersion == nil || *got.GPUs[0].VbiosVersion != "96.00.A5.00.01" {
		t.Errorf("parsed %+v, %v", got, err)
	}
}
