package multileg

import (
	"fmt"
	"strconv"
	"strings"
)

// maxHosts bounds the hosts one list may expand to: a typo such as
// node[1-100000] is refused rather than expanded.
const maxHosts = 65536

// ExpandHosts expands a host list as `scontrol show hostnames` does: names
// separated by commas, each possibly holding bracketed ranges
// (node[1-3,5], gpu[08-11] keeps the width of its zero-padded bounds,
// n[1-2]-ib[3-4] expands every bracket, leftmost slowest; text after the
// last bracket is refused, as Slurm 22.05 refuses it). Whitespace
// around names is dropped; an empty name, an unclosed bracket, a range
// whose end is below its start, or a name listed twice is an error.
func ExpandHosts(list string) ([]string, error) {
	var out []string
	seen := map[string]bool{}
	for _, item := range splitTop(list) {
		item = strings.TrimSpace(item)
		if item == "" {
			return nil, fmt.Errorf("host list %q: an empty name (two commas, or a comma at an end)", list)
		}
		names, err := expandOne(item)
		if err != nil {
			return nil, fmt.Errorf("host list %q: %v", list, err)
		}
		for _, n := range names {
			if seen[n] {
				return nil, fmt.Errorf("host list %q: %s listed twice", list, n)
			}
			seen[n] = true
			out = append(out, n)
			if len(out) > maxHosts {
				return nil, fmt.Errorf("host list %q: more than %d hosts", list, maxHosts)
			}
		}
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("host list %q names no host", list)
	}
	return out, nil
}

// splitTop splits at commas outside brackets.
func splitTop(s string) []string {
	var parts []string
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '[':
			depth++
		case ']':
			depth--
		case ',':
			if depth == 0 {
				parts = append(parts, s[start:i])
				start = i + 1
			}
		}
	}
	return append(parts, s[start:])
}

// expandOne expands one name's brackets, the leftmost varying slowest.
func expandOne(item string) ([]string, error) {
	open := strings.IndexByte(item, '[')
	if open < 0 {
		if strings.ContainsAny(item, "] \t") {
			return nil, fmt.Errorf("%q: not a host name", item)
		}
		return []string{item}, nil
	}
	end := strings.IndexByte(item[open:], ']')
	if end < 0 {
		return nil, fmt.Errorf("%q: '[' without ']'", item)
	}
	end += open
	prefix, body, rest := item[:open], item[open+1:end], item[end+1:]
	if strings.ContainsAny(prefix, "]") || strings.ContainsAny(body, "[") {
		return nil, fmt.Errorf("%q: brackets do not nest", item)
	}
	var mids []string
	for _, r := range strings.Split(body, ",") {
		lo, hi, isRange := strings.Cut(r, "-")
		if !isRange {
			hi = lo
		}
		a, errA := strconv.Atoi(lo)
		b, errB := strconv.Atoi(hi)
		if errA != nil || errB != nil || lo == "" || hi == "" || a < 0 {
			return nil, fmt.Errorf("%q: [%s]: want numbers or ranges of numbers (1-3,5)", item, body)
		}
		if b < a {
			return nil, fmt.Errorf("%q: range %s ends below its start", item, r)
		}
		if b-a >= maxHosts {
			return nil, fmt.Errorf("%q: range %s names more than %d hosts", item, r, maxHosts)
		}
		width := 0
		if len(lo) > 1 && lo[0] == '0' {
			width = len(lo)
		}
		for n := a; n <= b; n++ {
			mids = append(mids, fmt.Sprintf("%0*d", width, n))
		}
	}
	tails := []string{""}
	if rest != "" {
		// Slurm 22.05 refuses a suffix after the last bracket (a[1-2]b
		// is "Invalid hostlist"), and expands one before another.
		if !strings.Contains(rest, "[") {
			return nil, fmt.Errorf("%q: text after the last ']' (Slurm refuses it too)", item)
		}
		var err error
		if tails, err = expandOne(rest); err != nil {
			return nil, err
		}
	}
	var out []string
	for _, m := range mids {
		for _, t := range tails {
			out = append(out, prefix+m+t)
		}
		if len(out) > maxHosts {
			return nil, fmt.Errorf("%q: more than %d hosts", item, maxHosts)
		}
	}
	return out, nil
}
