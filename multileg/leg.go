// Package multileg is the directory form of a benchmark leg that spans several
// hosts (SPEC §12.3): DIR/leg.json, written once before sampling, names
// the hosts, their roles and groups, the interval and the skew bound;
// each host's sampler writes DIR/hosts/<host>.*; the client's marks go to
// DIR/points.jsonl; and Close writes the leg's memory record from the
// hosts' own once their samplers have stopped.
package multileg

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/clockgate/clockgate/atomicfile"
	"github.com/clockgate/clockgate/clocks"
)

// Schema is leg.json's schema version.
const Schema = clocks.LegSchema

// Host is one host of the leg; Manifest is leg.json (package clocks
// reads it to judge the leg).
type (
	Host     = clocks.LegHost
	Manifest = clocks.LegManifest
)

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
	if err := m.Validate(); err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return atomicfile.WriteNew(ManifestPath(dir), m.JSON(), 0o644)
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
func Parse(data []byte) (*Manifest, error) { return clocks.ParseLegManifest(data) }
