package clocks

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/strictjson"
)

// LegSchema is leg.json's schema version.
const LegSchema = 1

// LegHost is one host of a multi-host leg.
type LegHost struct {
	Host  string `json:"host"`
	Role  string `json:"role,omitempty"`
	Group string `json:"group,omitempty"`
}

// LegManifest is a multi-host leg's leg.json (SPEC §12.3).
type LegManifest struct {
	Schema      int     `json:"schema"`
	IntervalS   float64 `json:"interval_s"`
	SkewBoundMS float64 `json:"skew_bound_ms"`
	// SkewBoundDeclaredMS is a bound measured otherwise (PTP monitoring)
	// for hosts without chronyc; nil where none was declared.
	SkewBoundDeclaredMS *float64  `json:"skew_bound_declared_ms,omitempty"`
	Client              string    `json:"client"`
	Hosts               []LegHost `json:"hosts"`
}

// Host returns the host named name, or false.
func (m *LegManifest) Host(name string) (LegHost, bool) {
	for _, h := range m.Hosts {
		if h.Host == name {
			return h, true
		}
	}
	return LegHost{}, false
}

// Interval is the leg's sampling interval.
func (m *LegManifest) Interval() time.Duration {
	return time.Duration(math.Round(m.IntervalS * float64(time.Second)))
}

// JSON is the manifest as written, keys in SPEC §12.3's order.
func (m *LegManifest) JSON() []byte {
	b := []byte("{\n  \"schema\": ")
	b = strconv.AppendInt(b, int64(m.Schema), 10)
	b = append(b, ",\n  \"interval_s\": "...)
	b = strconv.AppendFloat(b, m.IntervalS, 'f', -1, 64)
	b = append(b, ",\n  \"skew_bound_ms\": "...)
	b = strconv.AppendFloat(b, m.SkewBoundMS, 'f', -1, 64)
	if m.SkewBoundDeclaredMS != nil {
		b = append(b, ",\n  \"skew_bound_declared_ms\": "...)
		b = strconv.AppendFloat(b, *m.SkewBoundDeclaredMS, 'f', -1, 64)
	}
	b = append(b, ",\n  \"client\": "...)
	b = strictjson.AppendString(b, m.Client)
	b = append(b, ",\n  \"hosts\": ["...)
	for i, h := range m.Hosts {
		if i > 0 {
			b = append(b, ',')
		}
		b = append(b, "\n    {\"host\": "...)
		b = strictjson.AppendString(b, h.Host)
		if h.Role != "" {
			b = append(b, ", \"role\": "...)
			b = strictjson.AppendString(b, h.Role)
		}
		if h.Group != "" {
			b = append(b, ", \"group\": "...)
			b = strictjson.AppendString(b, h.Group)
		}
		b = append(b, '}')
	}
	return append(b, "\n  ]\n}\n"...)
}

// validHost is a host name a file name can carry.
func validHost(h string) bool {
	return h != "" && h != "." && h != ".." && !strings.ContainsAny(h, "/\\\x00") && len(h) <= 200
}

// Validate checks what leg.json must hold.
func (m *LegManifest) Validate() error {
	switch {
	case m.Schema != LegSchema:
		return fmt.Errorf("schema: want %d, found %d", LegSchema, m.Schema)
	case !(m.IntervalS >= 0.1) || math.IsInf(m.IntervalS, 0):
		return fmt.Errorf("interval_s: want at least 0.1 s, found %v", m.IntervalS)
	case !(m.SkewBoundMS > 0) || math.IsInf(m.SkewBoundMS, 0):
		return fmt.Errorf("skew_bound_ms: want a finite number of ms > 0, found %v", m.SkewBoundMS)
	case m.SkewBoundDeclaredMS != nil && (!(*m.SkewBoundDeclaredMS > 0) || math.IsInf(*m.SkewBoundDeclaredMS, 0)):
		return fmt.Errorf("skew_bound_declared_ms: want a finite number of ms > 0, found %v", *m.SkewBoundDeclaredMS)
	case !validHost(m.Client):
		return fmt.Errorf("client: want a host name, found %q", m.Client)
	case len(m.Hosts) == 0:
		return errors.New("hosts: want at least one host")
	}
	seen := map[string]bool{}
	for i, h := range m.Hosts {
		if !validHost(h.Host) {
			return fmt.Errorf("hosts[%d].host: want a host name without a path separator, found %q", i, h.Host)
		}
		if seen[h.Host] {
			return fmt.Errorf("hosts[%d].host: %s listed twice", i, h.Host)
		}
		seen[h.Host] = true
	}
	return nil
}

// ParseLegManifest reads leg.json's bytes strictly.
func ParseLegManifest(data []byte) (*LegManifest, error) {
	v, err := strictjson.ParseObject(data)
	if err != nil {
		return nil, err
	}
	m := &LegManifest{}
	known := map[string]bool{"schema": true, "interval_s": true, "skew_bound_ms": true, "skew_bound_declared_ms": true, "client": true, "hosts": true}
	keys := make([]string, 0, len(v.Fields))
	for k := range v.Fields {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if !known[k] {
			return nil, fmt.Errorf("%s: not a key of leg.json", k)
		}
	}
	num := func(k string, to *float64) error {
		f, ok := v.Fields[k]
		if !ok || f.Kind != strictjson.Number {
			return fmt.Errorf("%s: want a number", k)
		}
		*to = f.Num
		return nil
	}
	if f, ok := v.Fields["schema"]; !ok {
		return nil, errors.New("schema: missing")
	} else if n, isInt := f.Int(); !isInt {
		return nil, fmt.Errorf("schema: want %d, found %s", LegSchema, f.Describe())
	} else {
		m.Schema = int(n)
	}
	if err := num("interval_s", &m.IntervalS); err != nil {
		return nil, err
	}
	if err := num("skew_bound_ms", &m.SkewBoundMS); err != nil {
		return nil, err
	}
	if _, ok := v.Fields["skew_bound_declared_ms"]; ok {
		var d float64
		if err := num("skew_bound_declared_ms", &d); err != nil {
			return nil, err
		}
		m.SkewBoundDeclaredMS = &d
	}
	if f, ok := v.Fields["client"]; !ok || f.Kind != strictjson.String {
		return nil, errors.New("client: want a string")
	} else {
		m.Client = f.Str
	}
	hosts, ok := v.Fields["hosts"]
	if !ok || hosts.Kind != strictjson.Array {
		return nil, errors.New("hosts: want an array")
	}
	for i, e := range hosts.Elems {
		if e.Kind != strictjson.Object {
			return nil, fmt.Errorf("hosts[%d]: want an object", i)
		}
		var h LegHost
		for k, f := range e.Fields {
			if f.Kind != strictjson.String {
				return nil, fmt.Errorf("hosts[%d].%s: want a string, found %s", i, k, f.Describe())
			}
			switch k {
			case "host":
				h.Host = f.Str
			case "role":
				h.Role = f.Str
			case "group":
				h.Group = f.Str
			default:
				return nil, fmt.Errorf("hosts[%d].%s: not a key of a host", i, k)
			}
		}
		m.Hosts = append(m.Hosts, h)
	}
	if err := m.Validate(); err != nil {
		return nil, err
	}
	return m, nil
}
