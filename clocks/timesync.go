package clocks

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// TimeSyncWindow is a host's time synchronisation at the start and the
// end of its window (the record's time_sync, SPEC §12.3).
type TimeSyncWindow struct {
	Start *TimeSync `json:"start"`
	End   *TimeSync `json:"end"`
}

// TimeSync is one reading of a host's time synchronisation: the kernel's
// view (adjtimex) and, where chronyc answers, chronyd's.
type TimeSync struct {
	// T is when it was read, RFC 3339 in UTC.
	T string `json:"t"`
	// Kernel is adjtimex's view; nil where adjtimex failed (Error says so).
	Kernel *KernelTime `json:"kernel"`
	// Chrony is `chronyc -c tracking`, nil where chronyc is not installed
	// or did not answer (ChronyError says why, "" where it is not
	// installed).
	Chrony      *ChronyTracking `json:"chrony"`
	ChronyError string          `json:"chrony_error,omitempty"`
	Error       string          `json:"error,omitempty"`
}

// KernelTime is the kernel's time state as adjtimex gives it.
type KernelTime struct {
	// Synchronised is true when the clock state is not TIME_ERROR and
	// STA_UNSYNC is clear.
	Synchronised bool  `json:"synchronised"`
	State        int   `json:"state"`
	Status       int32 `json:"status"`
	MaxErrorUS   int64 `json:"maxerror_us"`
	EstErrorUS   int64 `json:"esterror_us"`
}

// ChronyTracking is what `chronyc -c tracking` says: the offset of the
// system clock from chronyd's reference, the root delay and dispersion
// (a host's bound is |offset| + root delay / 2 + root dispersion), and
// the leap status ("Normal", "Insert second", "Delete second", "Not
// synchronised").
type ChronyTracking struct {
	RefID           string  `json:"ref_id"`
	Stratum         int     `json:"stratum"`
	OffsetS         float64 `json:"offset_s"`
	RootDelayS      float64 `json:"root_delay_s"`
	RootDispersionS float64 `json:"root_dispersion_s"`
	LeapStatus      string  `json:"leap_status"`
	UpdateIntervalS float64 `json:"update_interval_s"`
}

// chronyTrackingFields is the number of fields of `chronyc -c tracking`
// (chrony 3 and 4): reference id, reference name, stratum, reference
// time, system time offset, last offset, RMS offset, frequency, residual
// frequency, skew, root delay, root dispersion, update interval, leap
// status.
const chronyTrackingFields = 14

// ParseChronyTracking reads one line of `chronyc -c tracking`. Every
// number must be finite; the root delay and dispersion not negative.
func ParseChronyTracking(line string) (*ChronyTracking, error) {
	f := strings.Split(strings.TrimRight(line, "\r\n"), ",")
	if len(f) != chronyTrackingFields {
		return nil, fmt.Errorf("chronyc -c tracking: want %d comma-separated fields, found %d in %q", chronyTrackingFields, len(f), line)
	}
	num := func(i int, name string) (float64, error) {
		v, err := strconv.ParseFloat(f[i], 64)
		if err != nil || math.IsNaN(v) || math.IsInf(v, 0) {
			return 0, fmt.Errorf("chronyc -c tracking: field %d (%s): want a number, found %q", i+1, name, f[i])
		}
		return v, nil
	}
	t := &ChronyTracking{RefID: f[0], LeapStatus: f[13]}
	stratum, err := strconv.Atoi(f[2])
	if err != nil || stratum < 0 {
		return nil, fmt.Errorf("chronyc -c tracking: field 3 (stratum): want an integer ≥ 0, found %q", f[2])
	}
	t.Stratum = stratum
	for _, x := range []struct {
		i    int
		name string
		to   *float64
	}{{4, "system time offset", &t.OffsetS}, {10, "root delay", &t.RootDelayS}, {11, "root dispersion", &t.RootDispersionS}, {12, "update interval", &t.UpdateIntervalS}} {
		if *x.to, err = num(x.i, x.name); err != nil {
			return nil, err
		}
	}
	if t.RootDelayS < 0 || t.RootDispersionS < 0 {
		return nil, fmt.Errorf("chronyc -c tracking: a negative root delay (%v) or dispersion (%v)", t.RootDelayS, t.RootDispersionS)
	}
	if t.LeapStatus == "" {
		return nil, fmt.Errorf("chronyc -c tracking: field 14 (leap status) is empty")
	}
	return t, nil
}
