package clocks

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// Boot ids and machines of the design document's captures.
const (
	bootF6 = "f6bbbfc6-1b2c-4d5e-8f90-a1b2c3d4e5f6"
	boot2F = "2fca2b02-9a8b-4c7d-8e6f-5a4b3c2d1e0f"
	boot13 = "13dc5579-455c-45c8-8e4d-d09c457fa826"
)

var windowStart = time.Date(2026, 8, 12, 10, 15, 3, 123e6, time.UTC)

// gb10 is one NVIDIA GB10 sample on driver 580.159.03, as the design
// document's live read shows it.
func gb10(i int, boot string, mhz, util int) *Sample {
	apps := 2418
	return &Sample{
		T:                             windowStart.Add(time.Duration(i) * time.Second).Format("2006-01-02T15:04:05.000Z"),
		BootID:                        boot,
		GPUIndex:                      0,
		GPUUUID:                       "GPU-5f3c2a1e-0b9d-4c8e-a7f6-1d2e3f4a5b6c",
		GPUName:                       "NVIDIA GB10",
		DriverVersion:                 "580.159.03",
		SMClockMHz:                    mhz,
		ClocksMaxSMMHz:                3003,
		ClocksApplicationsGraphicsMHz: &apps,
		ThrottleReasonsActive:         "0x0000000000000000",
		PersistenceMode:               "Enabled",
		PState:                        "P0",
		UtilizationGPUPct:             util,
	}
}

// h100 is one NVIDIA H100 sample on a 590 driver, whose applications clock
// is deprecated (null).
func h100(i int, boot string, mhz, util int) *Sample {
	s := gb10(i, boot, mhz, util)
	s.GPUUUID = "GPU-9a8b7c6d-5e4f-3a2b-1c0d-e9f8a7b6c5d4"
	s.GPUName = "NVIDIA H100 80GB HBM3"
	s.DriverVersion = "590.44.01"
	s.ClocksMaxSMMHz = 1980
	s.ClocksApplicationsGraphicsMHz = nil
	return s
}

// repeat repeats a pattern of clocks: whole-list repetition keeps min,
// median, max and spread exactly while the count clears the floor.
func repeat(pattern []int, times int) []int {
	var out []int
	for i := 0; i < times; i++ {
		out = append(out, pattern...)
	}
	return out
}

// flat is n busy samples at one clock.
func flat(mhz, n int) []int { return repeat([]int{mhz}, n) }

// window makes a GB10 window on boot: one busy sample per clock, then idle
// idle samples (utilization 0) at a low clock.
func window(boot string, busy []int, idle int) []*Sample {
	var out []*Sample
	for i, mhz := range busy {
		out = append(out, gb10(i, boot, mhz, 97))
	}
	for i := 0; i < idle; i++ {
		out = append(out, gb10(len(busy)+i, boot, 1100, 0))
	}
	return out
}

// cleanWindow is the design document's clean capture: n=61, min 2398,
// median 2470, max 2489, spread 3.68%.
func cleanWindow(boot string) []*Sample {
	busy := append(flat(2470, 59), 2398, 2489)
	return window(boot, busy, 3)
}

func streamOf(ss []*Sample) []byte {
	var b []byte
	for _, s := range ss {
		b = s.AppendJSON(b)
		b = append(b, '\n')
	}
	return b
}

func recordOf(t *testing.T, ss []*Sample, stop string) *Record {
	t.Helper()
	f := NewFold()
	for i, s := range ss {
		f.Add(s, i+1)
	}
	r, err := f.Record(1, stop)
	if err != nil {
		t.Fatal(err)
	}
	return r
}

func recordJSON(t *testing.T, r *Record) []byte {
	t.Helper()
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// legOf judges a leg whose record is the one its stream recomputes to,
// after edit (if any) changes the record.
func legOf(t *testing.T, name string, ss []*Sample, edit func(*Record)) *Leg {
	t.Helper()
	r := recordOf(t, ss, StopPIDExit)
	if edit != nil {
		edit(r)
	}
	return JudgeLeg(name, recordJSON(t, r), bytes.NewReader(streamOf(ss)), nil)
}

// wantCodes fails unless reasons carry exactly these codes, in order.
func wantCodes(t *testing.T, reasons []Reason, codes ...string) {
	t.Helper()
	var got []string
	for _, r := range reasons {
		got = append(got, r.Code)
	}
	if strings.Join(got, " ") != strings.Join(codes, " ") {
		t.Fatalf("codes = %v, want %v\nreasons: %+v", got, codes, reasons)
	}
}

// wantReason fails unless some reason has code and a message containing
// every fragment.
func wantReason(t *testing.T, reasons []Reason, code string, fragments ...string) {
	t.Helper()
	for _, r := range reasons {
		if r.Code != code {
			continue
		}
		ok := true
		for _, f := range fragments {
			ok = ok && strings.Contains(r.Message, f)
		}
		if ok {
			return
		}
		t.Fatalf("%s message %q lacks one of %q", code, r.Message, fragments)
	}
	t.Fatalf("no %s reason in %+v", code, reasons)
}

func wantNoCode(t *testing.T, reasons []Reason, code string) {
	t.Helper()
	for _, r := range reasons {
		if r.Code == code {
			t.Fatalf("unexpected %s: %s", code, r.Message)
		}
	}
}
