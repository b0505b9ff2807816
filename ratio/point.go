package ratio

import (
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
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
	// Strategy is how a rate point's requests were spaced, where the
	// client sends them at one rate in more than one way: GuideLLM's
	// "constant" and "poisson" (SPEC §12.5: a Poisson and a constant point
	// at one rate are different points). "" for every other point (vLLM's
	// and SGLang's, whose rate is Poisson unless --burstiness says
	// otherwise, name none).
	Strategy string
}

// Label is the point in short form, max_concurrency/request_rate: "8/inf",
// "none/4", and a strategy after a colon where the point has one (no
// space: report.md lists a leg's points separated by spaces):
// "none/4:poisson".
func (p PointID) Label() string {
	if p.Strategy != "" {
		return p.concurrency() + "/" + p.rate() + ":" + p.Strategy
	}
	return p.concurrency() + "/" + p.rate()
}

// String names the point in a message: "max_concurrency 8, request_rate
// inf", "max_concurrency none, request_rate 4, strategy poisson".
func (p PointID) String() string {
	if p.Strategy != "" {
		return "max_concurrency " + p.concurrency() + ", request_rate " + p.rate() + ", strategy " + p.Strategy
	}
	return "max_concurrency " + p.concurrency() + ", request_rate " + p.rate()
}

func (p PointID) concurrency() string {
	if p.MaxConcurrency == 0 {
		return "none"
	}
	return strconv.Itoa(p.MaxConcurrency)
}

// The request rates written in plain decimals; outside, a rate is written
// with an exponent, as encoding/json and JavaScript write a number, so that
// no rate prints longer than 25 bytes (1e305 would be 306 digits).
const (
	plainRateMin = 1e-6
	plainRateMax = 1e21
)

// rate is request_rate as labels, tables and summary.json write it: "inf"
// for unbounded, else the shortest decimal that reads back to the rate:
// "1", "2.5", "0.000001", "1e+21", "5e-324".
func (p PointID) rate() string {
	r := p.RequestRate
	switch {
	case r == 0:
		return "inf"
	case r >= plainRateMin && r < plainRateMax:
		return strconv.FormatFloat(r, 'f', -1, 64)
	}
	s := strconv.FormatFloat(r, 'e', -1, 64)
	// Go writes at least two exponent digits: "1e-07" is "1e-7".
	if n := len(s); n >= 4 && s[n-4] == 'e' && s[n-3] == '-' && s[n-2] == '0' {
		s = s[:n-2] + s[n-1:]
	}
	return s
}

// Less orders points by max_concurrency, then request_rate, each
// increasing, an unbounded value after every bound; then by strategy, none
// first.
func (p PointID) Less(q PointID) bool {
	if p.MaxConcurrency != q.MaxConcurrency {
		return bound(float64(p.MaxConcurrency)) < bound(float64(q.MaxConcurrency))
	}
	if p.RequestRate != q.RequestRate {
		return bound(p.RequestRate) < bound(q.RequestRate)
	}
	return p.Strategy < q.Strategy
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

// ParsePointID reads a point as Label prints it: max_concurrency a
// positive integer or "none", request_rate "inf" or a positive number,
// each exactly as Label writes it ("8/inf", "none/4", "16/2.5"), so that
// one point has one spelling. It reads the points a command is run for (a
// plan's, clockgate mark's), which never carry a strategy: a client that
// names one (GuideLLM) runs every point of a leg in one command.
func ParsePointID(s string) (PointID, error) {
	c, r, ok := strings.Cut(s, "/")
	bad := func(why string) (PointID, error) {
		return PointID{}, fmt.Errorf("point %q: %s; want max_concurrency/request_rate as the report prints it: 8/inf, none/4, 16/2.5", s, why)
	}
	if !ok {
		return bad("no /")
	}
	var p PointID
	if c != "none" {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return bad("max_concurrency " + strconv.Quote(c) + " is neither a positive integer nor none")
		}
		p.MaxConcurrency = n
	}
	if r != "inf" {
		x, err := strconv.ParseFloat(r, 64)
		if err != nil || !(x > 0) || math.IsInf(x, 0) {
			return bad("request_rate " + strconv.Quote(r) + " is neither a positive number nor inf")
		}
		p.RequestRate = x
	}
	if p.Label() != s {
		return bad("written " + strconv.Quote(p.Label()) + " by the report")
	}
	return p, nil
}
