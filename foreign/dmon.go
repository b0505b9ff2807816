package foreign

import (
	"fmt"
	"strings"
	"time"
)

// dmon reads `nvidia-smi dmon` output: a "#"-header naming the columns, a
// "#"-line of their units, then one whitespace-separated row per GPU per
// reading; `-o DT` (or TD) puts the date and time first. The header repeats
// every so many rows. "-" is a value the driver did not give.
type dmon struct{}

// dmonColumns are the columns nvidia-smi dmon prints and their units as
// its units line prints them (nvidia-smi(1), "dmon"; real output in
// testdata/foreign-real/dmon-*), with what each becomes.
var dmonColumns = map[string]struct {
	unit string
	role int
}{
	"Date": {"YYYYMMDD", roleTime}, "Time": {"HH:MM:SS", roleTime},
	"gpu": {"Idx", roleIndex}, "pwr": {"W", rolePower}, "gtemp": {"C", roleTemp}, "mtemp": {"C", roleIgnored},
	// sm is the percent of time a kernel ran: utilization.gpu.
	"sm": {"%", roleUtil}, "mem": {"%", roleIgnored}, "enc": {"%", roleIgnored}, "dec": {"%", roleIgnored},
	"jpg": {"%", roleIgnored}, "ofa": {"%", roleIgnored},
	"mclk": {"MHz", roleMem},
	// pclk is the processor (graphics) clock, which the driver runs as the SM clock.
	"pclk": {"MHz", roleSM},
	// pviol and tviol are a share of time and a flag, not reason bits: not read.
	"pviol": {"%", roleIgnored}, "tviol": {"bool", roleIgnored},
	"fb": {"MB", roleMemUsed}, "bar1": {"MB", roleIgnored}, "ccpm": {"MB", roleIgnored},
	"sbecc": {"errs", roleIgnored}, "dbecc": {"errs", roleIgnored}, "pci": {"errs", roleIgnored},
	"rxpci": {"MB/s", roleIgnored}, "txpci": {"MB/s", roleIgnored},
}

// fb (dmon -s m) is the frame buffer memory used: "MB" on the units line,
// counted in MiB as nvidia-smi counts memory.used (NVML's bytes over 2^20),
// so it is read as memory_used_mib.

func (dmon) Parse(in Input, o *Options, c *Collector) error {
	var names []string
	var nameCols, unitCols []int
	var namesLine, unitsLine int
	var fs []*field
	dateAt, timeAt := -1, -1
	rows := 0
	ticks := map[string]int{}
	ls := lines(in.Data)
	last := lastLine(ls)
	for i, text := range ls {
		ln := i + 1
		trimmed := strings.TrimSpace(text)
		if trimmed == "" {
			c.drop(in.Path, ln, "blank")
			continue
		}
		if strings.HasPrefix(trimmed, "#") {
			words, cols := fieldsWithCols(strings.Replace(text, "#", " ", 1))
			switch {
			case names == nil:
				names, nameCols, namesLine = words, cols, ln
			case unitsLine == 0 && namesLine == ln-1:
				unitsLine, unitCols = ln, cols
				if len(words) != len(names) {
					return refuse(in.Path, ln, 0, "the units line has %d columns, the header %d", len(words), len(names))
				}
				var err error
				if fs, dateAt, timeAt, err = dmonSetup(names, words, nameCols, unitCols, in.Path, namesLine, ln, o, c); err != nil {
					return err
				}
			case fs != nil && (equalWords(words, names) || equalWords(words, unitWords(fs, names))):
				c.drop(in.Path, ln, "repeated header")
			default:
				return refuse(in.Path, ln, strings.Index(text, "#")+1, "the header changes mid-file (first at line %d): %q", namesLine, trimmed)
			}
			continue
		}
		if fs == nil {
			return refuse(in.Path, ln, 0, "a row before dmon's header and units lines")
		}
		words, cols := fieldsWithCols(text)
		if why, err := torn(in.Path, ln, i == last, text, len(words), len(fs)); err != nil {
			return err
		} else if why != "" {
			c.drop(in.Path, ln, why)
			continue
		}
		r := &reading{path: in.Path, line: ln, src: fmt.Sprintf("%s:%d", in.Path, ln)}
		for k, f := range fs {
			if k == dateAt || k == timeAt {
				continue
			}
			if err := f.set(r, words[k], in.Path, ln, cols[k], o); err != nil {
				return err
			}
		}
		if dateAt >= 0 {
			if o.TZ == nil {
				return refuse(in.Path, ln, cols[dateAt], "%s %s is local time without a zone; pass --tz", words[dateAt], words[timeAt])
			}
			t, err := time.ParseInLocation("20060102 15:04:05", words[dateAt]+" "+words[timeAt], o.TZ)
			if err != nil {
				return refuse(in.Path, ln, cols[dateAt], "want a date YYYYMMDD and a time HH:MM:SS, found %q %q", words[dateAt], words[timeAt])
			}
			r.t, r.hasT, r.timeCol = t, true, cols[dateAt]
		}
		c.take(in.Path, ln, r, o, ticks)
		rows++
	}
	if fs == nil || rows == 0 {
		return refuse(in.Path, 0, 0, "no data rows")
	}
	return nil
}

func dmonSetup(names, units []string, nameCols, unitCols []int, path string, namesLine, unitsLine int, o *Options, c *Collector) ([]*field, int, int, error) {
	var fs []*field
	dateAt, timeAt := -1, -1
	for k, n := range names {
		spec, ok := dmonColumns[n]
		if !ok {
			return nil, 0, 0, refuse(path, namesLine, nameCols[k], "unknown dmon column %q", n)
		}
		if units[k] != spec.unit {
			return nil, 0, 0, refuse(path, unitsLine, unitCols[k], "dmon column %s in %q: dmon prints it in %q: contradicting units", n, units[k], spec.unit)
		}
		f := &field{name: n, col: nameCols[k], role: spec.role}
		switch n {
		case "Date":
			dateAt = k
		case "Time":
			timeAt = k
			f.role = roleIgnored
		}
		fs = append(fs, f)
	}
	if (dateAt >= 0) != (timeAt >= 0) {
		return nil, 0, 0, refuse(path, namesLine, 0, "dmon prints a date or a time alone (-o D or -o T): log -o DT so each row has both")
	}
	if dateAt < 0 {
		// Rows carry no time: --start and --interval time them.
		for _, f := range fs {
			if f.role == roleTime {
				f.role = roleIgnored
			}
		}
	}
	if err := setupFields(fs, path, namesLine, o, c, "pclk (dmon -s c)"); err != nil {
		return nil, 0, 0, err
	}
	if timeAt >= 0 {
		c.column("Time", "t")
	}
	if dateAt < 0 {
		c.coverage = fmt.Sprintf("dmon without -o DT: times are --start %s plus --interval %v per reading, not the source's", o.Start.UTC().Format(time.RFC3339), o.Interval)
	}
	for _, f := range fs {
		f.unit = "" // dmon prints bare values; the units line is checked above
	}
	return fs, dateAt, timeAt, nil
}

func unitWords(fs []*field, names []string) []string {
	out := make([]string, len(names))
	for k, n := range names {
		out[k] = dmonColumns[n].unit
	}
	return out
}

func equalWords(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// fieldsWithCols splits at runs of spaces, keeping each word's 1-based
// column.
func fieldsWithCols(s string) ([]string, []int) {
	var words []string
	var cols []int
	i := 0
	for i < len(s) {
		for i < len(s) && (s[i] == ' ' || s[i] == '\t') {
			i++
		}
		if i >= len(s) {
			break
		}
		start := i
		for i < len(s) && s[i] != ' ' && s[i] != '\t' {
			i++
		}
		words = append(words, s[start:i])
		cols = append(cols, start+1)
	}
	return words, cols
}
