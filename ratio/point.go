package ratio

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
)

// PointID is a bench point's identity: the client's concurrency bound and
// its request rate. The file name is never trusted for it.
type PointID struct {
	// MaxConcurrency is the bound on requests in flight; 0 means none
	// (vLLM and SGLang write null when --max-concurrency is not given).
	MaxConcurrency int
	// RequestRate is the rate requests were sent at, in requests/s; 0
	// means unbounded (vLLM writes "inf", SGLang Infinity).
	RequestRate float64
}

// Label is the point in short form, max_concurrency/request_rate: "8/inf",
// "none/4".
func (p PointID) Label() string { return p.concurrency() + "/" + p.rate() }

// String names the point in a message: "max_concurrency 8, request_rate inf".
func (p PointID) String() string {
	return "max_concurrency " + p.concurrency() + ", request_rate " + p.rate()
}

func (p PointID) concurrency() string {
	if p.MaxConcurrency == 0 {
		return "none"
	}
	return strconv.Itoa(p.MaxConcurrency)
}

func (p PointID) rate() string {
	if p.RequestRate == 0 {
		return "inf"
	}
	return strconv.FormatFloat(p.RequestRate, 'f', -1, 64)
}

// Less orders points by max_concurrency, then request_rate, each
// increasing, an unbounded value after every bound.
func (p PointID) Less(q PointID) bool {
	if p.MaxConcurrency != q.MaxConcurrency {
		return bound(float64(p.MaxConcurrency)) < bound(float64(q.MaxConcurrency))
	}
	return bound(p.RequestRate) < bound(q.RequestRate)
}

func bound(x float64) float64 {
	if x == 0 {
		return math.Inf(1)
	}
	return x
}

// SortPoints sorts ids with Less.
func SortPoints(ids []PointID) {
	sort.Slice(ids, func(i, j int) bool { return ids[i].Less(ids[j]) })
}

// identityJSON is the point's identity as vLLM writes it: max_concurrency
// an integer or null, request_rate a number or "inf".
func (p PointID) identityJSON() (mc, rr any) {
	if p.MaxConcurrency != 0 {
		mc = p.MaxConcurrency
	}
	rr = "inf"
	if p.RequestRate != 0 {
		rr = json.Number(p.rate())
	}
	return mc, rr
}
