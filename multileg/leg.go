// Package multileg is the directory form of a benchmark leg that spans several
// hosts (SPEC §12.3): DIR/leg.json, written once before sampling, names
// the hosts, their roles and groups, the interval and the skew bound;
// each host's sampler writes DIR/hosts/<host>.*; the client's marks go to
// DIR/points.jsonl; and Close writes the leg's memory record from the
// hosts' own once their samplers have stopped.
package multileg

import (
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/atomicfile"
	"github.com/clockgate/clockgate/strictjson"
)

// Schema is leg.json's schema version.
const Schema = 1

// DefaultSkewBound is the bound on two hosts' clock disagreement: the
// sampler's shortest interval, so that no sample can move across a point
// boundary by a whole interval at any allowed interval (SPEC §12.3).
const DefaultSkewBound = 100 * time.Millisecond

// The files of the directory form.
const (
	ManifestName = "leg.json"
	HostsDir     = "hosts"
	PointsName   = "points.jsonl"
)

// Host is one host of the leg.
type Host struct {
	Host  string `json:"host"`
	Role  string `json:"role,omitempty"`
	Group string `json:"group,omitempty"`
}

// Manifest is leg.json.
type Manifest struct {
	Schema      int     `json:"schema"`
	IntervalS   float64 `json:"interval_s"`
	SkewBoundMS float64 `json:"skew_bound_ms"`
	// SkewBoundDeclaredMS is a bound measured otherwise (PTP monitoring)
	// for hosts without chronyc; nil where none was declared.
	SkewBoundDeclaredMS *float64 `json:"skew_bound_declared_ms,omitempty"`
	Client              string   `json:"client"`
	Hosts               []Host   `json:"hosts"`
}

// ManifestPath is DIR/leg.json.
func ManifestPath(dir string) string { return filepath.Join(dir, ManifestName) }

// Prefix is the sampler's prefix of host's files: DIR/hosts/<host>.
func Prefix(dir, host string) string { return filepath.Join(dir, HostsDir, host) }

// MemoryPath is where host's sampler writes its memory record.
func MemoryPath(dir, host string) string { return Prefix(dir, host) + ".memory.json" }

// IsDir reports whether path is a leg in the directory form: a directory
// holding leg.json.
func IsDir(path string) bool {
	fi, err := os.Stat(ManifestPath(path))
	return err == nil && fi.Mode().IsRegular()
}

// Host returns the host named name, or false.
func (m *Manifest) Host(name string) (Host, bool) {
	for _, h := range m.Hosts {
		if h.Host == name {
			return h, true
		}
	}
	return Host{}, false
}

// Interval is the leg's sampling interval.
func (m *Manifest) Interval() time.Duration {
	return time.Duration(math.Round(m.IntervalS * float64(time.Second)))
}

// Roles parses --role NAME=HOSTS values against hosts: each host at most
// one role, every role's hosts among hosts. With roles, every host must
// have one, and its group is its role.
func Roles(hosts []string, roles []string) ([]Host, error) {
	out := make([]Host, len(hosts))
	at := map[string]int{}
	for i, h := range hosts {
		out[i].Host, at[h] = h, i
	}
	for _, r := range roles {
		name, list, ok := strings.Cut(r, "=")
		name = strings.TrimSpace(name)
		if !ok || name == "" || strings.TrimSpace(list) == "" {
			return nil, fmt.Errorf("--role %q: want NAME=HOSTS (prefill=node1, decode=node[2-3])", r)
		}
		names, err := ExpandHosts(list)
		if err != nil {
			return nil, fmt.Errorf("--role %q: %v", r, err)
		}
		for _, n := range names {
			i, ok := at[n]
			if !ok {
				return nil, fmt.Errorf("--role %q: %s is not among --hosts (%s)", r, n, strings.Join(hosts, ","))
			}
			if out[i].Role != "" {
				return nil, fmt.Errorf("--role %q: %s already has role %s", r, n, out[i].Role)
			}
			out[i].Role, out[i].Group = name, name
		}
	}
	if len(roles) > 0 {
		for _, h := range out {
			if h.Role == "" {
				return nil, fmt.Errorf("%s has no --role: where roles are given, every host has one", h.Host)
			}
		}
	}
	return out, nil
}

// Write writes DIR/leg.json once, atomically, creating DIR; an existing
// leg.json is refused (atomicfile.ErrExists), never rewritten.
func Write(dir string, m *Manifest) error {
	if err := m.validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfile.WriteNew(ManifestPath(dir), m.JSON(), 0o644)
}

// JSON is the manifest as written, keys in SPEC §12.3's order.
func (m *Manifest) JSON() []byte {
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

func (m *Manifest) validate() error {
	switch {
	case m.Schema != Schema:
		return fmt.Errorf("schema: want %d, found %d", Schema, m.Schema)
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

// Load reads DIR/leg.json strictly: every key known and typed.
func Load(dir string) (*Manifest, error) {
	path := ManifestPath(dir)
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %v", path, err)
	}
	return m, nil
}

// Parse reads leg.json's bytes strictly.
func Parse(data []byte) (*Manifest, error) {
	v, err := strictjson.ParseObject(data)
	if err != nil {
		return nil, err
	}
	m := &Manifest{}
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
		return nil, fmt.Errorf("schema: want %d, found %s", Schema, f.Describe())
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
		var h Host
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
	if err := m.validate(); err != nil {
		return nil, err
	}
	return m, nil
}
