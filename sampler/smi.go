package sampler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// DefaultQueryTimeout bounds one reading, and the whole startup probe. A
// driver answers nvidia-smi in tens to hundreds of milliseconds; one that
// has not answered in 5 s is wedged (a GPU fallen off the bus, a driver
// being reloaded), and waiting longer only delays the refusal. A reading
// slower than the interval but inside this bound is taken, and the time it
// cost shows up as a gap between samples (clock.coverage past
// clocks.MaxGapIntervals intervals).
const DefaultQueryTimeout = 5 * time.Second

// SMIOptions configures the nvidia-smi backend.
type SMIOptions struct {
	// Path is the nvidia-smi executable; "" finds "nvidia-smi" on PATH.
	Path string
	// GPUs selects the GPUs to read; the zero Selection is GPU 0.
	GPUs Selection
	// QueryTimeout bounds one call, and the startup probe as a whole; zero
	// means DefaultQueryTimeout.
	QueryTimeout time.Duration
	// Logf, when not nil, receives status lines.
	Logf func(format string, args ...any)
}

// SMI reads its GPUs with nvidia-smi --query-gpu=… --format=csv,noheader,nounits
// -i GPUS, one call per reading for all of them (GPUS is a comma list, which
// nvidia-smi answers with one line per GPU). It never passes nvidia-smi
// anything else, except, where the selection needs the box's GPUs listed
// (all, UUIDs, CUDA_VISIBLE_DEVICES), one --query-gpu=index,uuid,name
// without -i at start. Each call runs in a process group of its own, and
// the whole group is killed when the call times out or the sampler stops,
// so a wrapper's children never outlive a reading.
type SMI struct {
	path string
	// probe is how long the probe's reading took (the call that answered).
	probe time.Duration
	// gpus are the GPUs read, sorted by index; ids is them as -i takes them.
	gpus     []int
	ids      string
	timeout  time.Duration
	fields   []string
	throttle string
	dropped  []string
	listed   []GPU
	// uuids are the GPUs' UUIDs by index, as the listing or the last whole
	// answer gave them, to name a GPU an answer leaves out.
	uuids map[int]string
}

// rejectedRE finds the field nvidia-smi names when it does not know one:
// `Field "clocks_event_reasons.active" is not a valid field to query.`
var rejectedRE = regexp.MustCompile(`Field "([^"]+)" is not a valid field to query`)

// NewSMI finds nvidia-smi and probes, once, what the driver can answer. The
// probe asks for every field at once, the optional ones
// (OptionalQueryFields) included, with the throttle bit set spelled
// clocks_event_reasons.active. A field the driver rejects by name is
// dropped from the query and the probe asked again: an optional field, or
// the newer throttle spelling, which gives way to
// clocks_throttle_reasons.active; a required field is a refusal. An optional
// field whose value is not a number is dropped; every required value must
// parse. The probe as a whole, retries included, must answer within the
// query timeout: a hung nvidia-smi is refused after one timeout.
func NewSMI(ctx context.Context, o SMIOptions) (*SMI, error) {
	logf := o.Logf
	if logf == nil {
		logf = func(string, ...any) {}
	}
	sel := o.GPUs
	if sel.Source == "" {
		sel = DefaultSelection()
	}
	path := o.Path
	if path == "" {
		p, err := exec.LookPath("nvidia-smi")
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi not found on PATH: %v", err)
		}
		path = p
	}
	s := &SMI{path: path, timeout: o.QueryTimeout, uuids: map[int]string{}}
	if s.timeout <= 0 {
		s.timeout = DefaultQueryTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	if sel.NeedsList() {
		listed, err := s.list(pctx)
		if err != nil {
			if errors.Is(err, errTimedOut) {
				return nil, fmt.Errorf("%v (the startup probe; nothing was sampled)", err)
			}
			return nil, err
		}
		s.listed = listed
		for _, g := range listed {
			s.uuids[g.Index] = g.UUID
		}
	}
	res, err := sel.Resolve(s.listed)
	if err != nil {
		return nil, err
	}
	s.gpus, s.ids = res.Indices, JoinIndices(res.Indices)
	throttle := FieldEventReasons
	optional := OptionalQueryFields()
	for {
		fields := append(QueryFields(throttle), optional...)
		began := time.Now()
		out, err := s.query(pctx, fields)
		s.probe = time.Since(began)
		var qe *queryError
		if errors.As(err, &qe) {
			if m := rejectedRE.FindStringSubmatch(qe.output); m != nil {
				switch f := m[1]; {
				case f == FieldEventReasons && throttle == FieldEventReasons:
					logf("nvidia-smi: the driver rejects %s; asking for %s", f, FieldThrottleReasons)
					throttle = FieldThrottleReasons
					continue
				case f == FieldThrottleReasons && throttle == FieldThrottleReasons:
					return nil, fmt.Errorf("%s: the driver rejects both %s and %s, so the throttle bit set cannot be read; %s",
						s.what(), FieldEventReasons, FieldThrottleReasons, smiDriverAdvice)
				case counterIndex(f) >= 0:
					// A driver that does not know one counter knows none.
					for _, c := range CounterFields {
						if removeField(&optional, c) {
							s.dropped = append(s.dropped, c)
						}
					}
					logf("nvidia-smi: optional fields clocks_event_reasons_counters.* dropped: the driver does not know %s", f)
					continue
				case removeField(&optional, f):
					logf("nvidia-smi: optional field %s dropped: the driver does not know it", f)
					s.dropped = append(s.dropped, f)
					continue
				default:
					return nil, fmt.Errorf("%v; %s is a field every sample needs, and %s", qe, f, smiDriverAdvice)
				}
			}
			if qe.status == smiNotFound && !sel.NeedsList() {
				return nil, selectErrf("%v: nvidia-smi knows no GPU by one of the indices %s; nvidia-smi -L lists the GPUs", qe, s.ids)
			}
		}
		if err != nil {
			if errors.Is(err, errTimedOut) {
				return nil, fmt.Errorf("%v (the startup probe; nothing was sampled)", err)
			}
			return nil, err
		}
		kept, err := s.probeOptional(fields, out, len(QueryFields(throttle)), logf)
		if err != nil {
			return nil, err
		}
		s.fields, s.throttle = kept, throttle
		logf("%v", res)
		return s, nil
	}
}

// ProbeLatency is how long the probe's reading took.
func (s *SMI) ProbeLatency() time.Duration { return s.probe }

// smiNotFound is nvidia-smi's exit status for "a query to find an object was
// unsuccessful" (nvidia-smi(1), RETURN VALUE), which an -i naming no GPU
// gives, printing "No devices were found".
const smiNotFound = 6

// list asks nvidia-smi for every GPU's index, UUID and name.
func (s *SMI) list(ctx context.Context) ([]GPU, error) {
	out, err := s.run(ctx, listFields, false)
	if err != nil {
		return nil, err
	}
	gpus, err := ParseGPUList(strings.Join(listFields, ", "), string(out))
	if err != nil {
		return nil, fmt.Errorf("%s: %v", listWhat, err)
	}
	return gpus, nil
}

// listWhat names the listing call in messages.
const listWhat = "nvidia-smi --query-gpu=index,uuid,name (listing the GPUs)"

// what names the reading call in messages: "nvidia-smi -i 0,1,2,3".
func (s *SMI) what() string { return "nvidia-smi -i " + s.ids }

// smiDriverAdvice says what to do about a driver that cannot answer a field
// every sample needs.
const smiDriverAdvice = "clockgate cannot record clock evidence with this driver: update the NVIDIA driver, or record the leg on a GPU and driver that answer every field of the query in docs/recording.md"

// removeField removes f from *fields and reports whether it was there.
func removeField(fields *[]string, f string) bool {
	for i, g := range *fields {
		if g == f {
			*fields = append((*fields)[:i:i], (*fields)[i+1:]...)
			return true
		}
	}
	return false
}

// probeOptional reads the probe's answer: the optional fields after the
// first nRequired whose values are not numbers, on any GPU, are dropped,
// and the rest of every line must parse whole. It returns the fields each
// reading will ask for.
func (s *SMI) probeOptional(fields []string, out []byte, nRequired int, logf func(string, ...any)) ([]string, error) {
	lines, err := s.lines(out)
	if err != nil {
		return nil, err
	}
	rows := make([][]string, len(lines))
	for n, line := range lines {
		rows[n] = splitCSV(line)
		if len(rows[n]) != len(fields) {
			_, err := ParseCSVLine(fields, line) // names the count
			return nil, s.explain(lineGPU(line), err)
		}
	}
	var kept []string
	var keep []int
	drop := make([]bool, len(fields))
	counterDropped := false
	for i, f := range fields {
		if i < nRequired {
			continue
		}
		for n, cells := range rows {
			if err := (&Reading{}).set(f, cells[i]); err != nil {
				if len(s.gpus) > 1 {
					logf("nvidia-smi: optional field %s dropped: GPU %s: %v", f, lineGPU(lines[n]), err)
				} else {
					logf("nvidia-smi: optional field %s dropped: %v", f, err)
				}
				drop[i] = true
				counterDropped = counterDropped || counterIndex(f) >= 0
				break
			}
		}
	}
	for i, f := range fields {
		if !drop[i] && counterDropped && counterIndex(f) >= 0 {
			// A sample carries the counters only when it has all five.
			logf("nvidia-smi: optional field %s dropped: the driver gives not every clock event counter", f)
			drop[i] = true
		}
		if drop[i] {
			s.dropped = append(s.dropped, f)
			continue
		}
		kept, keep = append(kept, f), append(keep, i)
	}
	var b strings.Builder
	for _, cells := range rows {
		for j, i := range keep {
			if j > 0 {
				b.WriteString(", ")
			}
			b.WriteString(cells[i])
		}
		b.WriteByte('\n')
	}
	if _, err := s.parse(kept, []byte(b.String())); err != nil {
		return nil, err
	}
	return kept, nil
}

// lineGPU returns the index a line of an answer starts with, as printed,
// or "?" when it has none.
func lineGPU(line string) string {
	cells := splitCSV(line)
	if r := (&Reading{}); r.set(FieldIndex, cells[0]) == nil {
		return strconv.Itoa(r.Index)
	}
	return "?"
}

// Name says which GPUs are read and with which fields.
func (s *SMI) Name() string {
	n := fmt.Sprintf("nvidia-smi (%s) %s, throttle field %s", s.path, gpusWord(s.gpus), s.throttle)
	if opt := s.fields[len(QueryFields(s.throttle)):]; len(opt) > 0 {
		n += ", optional " + strings.Join(opt, " ")
	}
	return n
}

// GPUs returns the indices of the GPUs read, sorted.
func (s *SMI) GPUs() []int { return append([]int(nil), s.gpus...) }

// Listed returns the GPUs the driver listed at start, nil when the
// selection needed no listing.
func (s *SMI) Listed() []GPU { return append([]GPU(nil), s.listed...) }

// Fields returns the fields each reading queries, in order.
func (s *SMI) Fields() []string { return append([]string(nil), s.fields...) }

// ThrottleField returns the throttle spelling the driver accepted.
func (s *SMI) ThrottleField() string { return s.throttle }

// Dropped returns the optional fields the driver could not give numbers for.
func (s *SMI) Dropped() []string { return append([]string(nil), s.dropped...) }

// Read runs one query for every GPU and turns its answer into one sample
// per GPU, sorted by index, all stamped t.
func (s *SMI) Read(ctx context.Context, t time.Time, bootID string) ([]*clocks.Sample, error) {
	out, err := s.query(ctx, s.fields)
	if err != nil {
		return nil, err
	}
	rs, err := s.parse(s.fields, out)
	if err != nil {
		return nil, err
	}
	samples := make([]*clocks.Sample, len(rs))
	for i, r := range rs {
		smp, err := r.Sample(t, bootID)
		if err != nil {
			return nil, fmt.Errorf("%s: %s%v", s.what(), s.gpuPrefix(r.Index), err)
		}
		samples[i] = smp
	}
	return samples, nil
}

// gpuPrefix is "GPU 2: " where several GPUs are read, "" for one: a
// single GPU's messages stay as they were.
func (s *SMI) gpuPrefix(gpu int) string {
	if len(s.gpus) == 1 {
		return ""
	}
	return fmt.Sprintf("GPU %d: ", gpu)
}

// Close does nothing: each reading is its own process.
func (s *SMI) Close() error { return nil }

// queryError is an nvidia-smi call that exited non-zero.
type queryError struct {
	what   string
	status int
	output string
}

func (e *queryError) Error() string {
	msg := e.output
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return fmt.Sprintf("%s exited with status %d: %q", e.what, e.status, msg)
}

// budgetSlack is how much of a budget may have passed before its first
// call started for the call's limit still to be printed as the timeout.
const budgetSlack = 50 * time.Millisecond

// errTimedOut marks a call that did not answer within the query timeout.
var errTimedOut = errors.New("did not answer")

// queryWaitDelay is how long a finished call's output pipes may stay open
// after nvidia-smi exits (only a process it left behind holds them) before
// they are closed and its process group killed.
const queryWaitDelay = 100 * time.Millisecond

// query runs one reading call: fields for the GPUs read (-i GPUS).
func (s *SMI) query(ctx context.Context, fields []string) ([]byte, error) {
	return s.run(ctx, fields, true)
}

// run runs one nvidia-smi call in a process group of its own, with -i
// GPUS when withI, else for every GPU (the listing). When the call times
// out or ctx ends, the whole group is killed (a wrapper script's children
// with it); after any call, whatever is left in the group is killed too.
func (s *SMI) run(ctx context.Context, fields []string, withI bool) ([]byte, error) {
	args := []string{"--query-gpu=" + strings.Join(fields, ","), "--format=csv,noheader,nounits"}
	what := listWhat
	if withI {
		args = append(args, "-i", s.ids)
		what = s.what()
	}
	return runCall(ctx, s.timeout, what, s.path, args)
}

// runCall runs path with args in a process group of its own, bounded by
// timeout; what names the call in errors. When the call times out or ctx
// ends, the whole group is killed (a wrapper script's children with it);
// after any call, whatever is left in the group is killed too. A non-zero
// exit is a *queryError holding what the call printed.
func runCall(ctx context.Context, timeout time.Duration, what, path string, args []string) ([]byte, error) {
	qctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	cmd := exec.CommandContext(qctx, path, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = queryWaitDelay
	start := time.Now()
	err := cmd.Start()
	if err == nil {
		pgid := cmd.Process.Pid
		err = cmd.Wait()
		killGroup(pgid)
	}
	switch {
	case errors.Is(ctx.Err(), context.Canceled):
		return nil, ctx.Err() // the sampler stopped: not a reading
	case qctx.Err() == context.DeadlineExceeded:
		// The call's limit is the query timeout, or what was left of a
		// shorter budget (the startup probe's) when it started; a budget
		// the call started within a moment of is the timeout itself.
		limit := timeout
		if dl, ok := ctx.Deadline(); ok && dl.Sub(start) < limit-budgetSlack {
			limit = dl.Sub(start).Round(time.Millisecond)
		}
		return nil, fmt.Errorf("%s %w within %v; its process group was killed", what, errTimedOut, limit)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() && (ws.Signal() == syscall.SIGINT || ws.Signal() == syscall.SIGTERM) {
			// Not our kill (SIGKILL): a stop sent to the whole process
			// group, or to every process of a Slurm step, reached the call.
			return nil, fmt.Errorf("%s %w (%v)", what, errCallSignaled, ws.Signal())
		}
		text := strings.TrimSpace(strings.TrimSpace(stdout.String()) + "\n" + strings.TrimSpace(stderr.String()))
		return nil, &queryError{what: what, status: ee.ExitCode(), output: text}
	}
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return nil, fmt.Errorf("%s: %v", what, err)
	}
	return stdout.Bytes(), nil
}

// errCallSignaled says a call was ended by SIGINT or SIGTERM from outside
// the sampler: the stop that ends the window, when one follows (Run).
var errCallSignaled = errors.New("was ended by a stop signal")

// killGroup kills process group pgid; a group already gone is no error.
func killGroup(pgid int) error {
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// lines returns the lines an -i query answers: one per GPU read. An
// answer of any other number of lines is refused, naming the GPUs it left
// out and the lines it gave that are not theirs.
func (s *SMI) lines(out []byte) ([]string, error) {
	text := strings.TrimRight(string(out), "\r\n")
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("%s printed nothing", s.what())
	}
	lines := strings.Split(text, "\n")
	if len(lines) != len(s.gpus) {
		want := "one"
		if len(s.gpus) > 1 {
			want = fmt.Sprintf("%d, one per GPU", len(s.gpus))
		}
		msg := fmt.Sprintf("%s printed %s, want %s", s.what(), plural(len(lines), "line"), want)
		if why := s.account(lines); why != "" {
			msg += ": " + why
		}
		return nil, errors.New(msg)
	}
	return lines, nil
}

// account says how an answer's lines differ from one per GPU read: the
// GPUs with no line (named with their UUIDs where known), those with
// several, the lines for GPUs not asked for, and lines whose index cannot
// be read.
func (s *SMI) account(lines []string) string {
	count := map[int]int{}
	unreadable := 0
	for _, line := range lines {
		r := &Reading{}
		if r.set(FieldIndex, splitCSV(line)[0]) != nil {
			unreadable++
			continue
		}
		count[r.Index]++
	}
	var parts []string
	if missing := s.missing(count); missing != "" {
		parts = append(parts, "no line for "+missing)
	}
	asked := map[int]bool{}
	for _, g := range s.gpus {
		asked[g] = true
		if n := count[g]; n > 1 {
			parts = append(parts, fmt.Sprintf("%d lines for GPU %d", n, g))
		}
	}
	var other []int
	for g := range count {
		if !asked[g] {
			other = append(other, g)
		}
	}
	sort.Ints(other)
	for _, g := range other {
		parts = append(parts, fmt.Sprintf("%s for GPU %d, which it was not asked for", lineCount(count[g]), g))
	}
	if unreadable > 0 {
		parts = append(parts, lineCount(unreadable)+" without a GPU index")
	}
	return strings.Join(parts, "; ")
}

// missing names the GPUs read that count, lines by GPU index, has none
// for: "GPU 2 (GPU-7f3a…), GPU 3 (GPU-…)"; "" when none is missing.
func (s *SMI) missing(count map[int]int) string {
	var names []string
	for _, g := range s.gpus {
		if count[g] == 0 {
			names = append(names, s.gpuName(g))
		}
	}
	return strings.Join(names, ", ")
}

// gpuName names GPU g for messages: "GPU 2 (GPU-7f3a…)", or "GPU 2" when
// its UUID is not known yet.
func (s *SMI) gpuName(g int) string {
	if u := s.uuids[g]; u != "" {
		return fmt.Sprintf("GPU %d (%s)", g, u)
	}
	return fmt.Sprintf("GPU %d", g)
}

// plural is "1 line", "3 lines".
func plural(n int, noun string) string {
	if n == 1 {
		return fmt.Sprintf("%d %s", n, noun)
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// lineCount is "a line", "3 lines".
func lineCount(n int) string {
	if n == 1 {
		return "a line"
	}
	return plural(n, "line")
}

// parse reads the lines an -i query answers and checks that every GPU read
// answered exactly once and no other did. The readings come back in the
// order of s.gpus (sorted by index).
func (s *SMI) parse(fields []string, out []byte) ([]*Reading, error) {
	lines, err := s.lines(out)
	if err != nil {
		return nil, err
	}
	pos := make(map[int]int, len(s.gpus))
	for i, g := range s.gpus {
		pos[g] = i
	}
	rs := make([]*Reading, len(s.gpus))
	count := make(map[int]int, len(s.gpus))
	for _, line := range lines {
		r, err := ParseCSVLine(fields, line)
		if err != nil {
			return nil, s.explain(lineGPU(line), err)
		}
		i, ok := pos[r.Index]
		switch {
		case !ok && len(s.gpus) == 1:
			return nil, fmt.Errorf("%s answered for GPU %d", s.what(), r.Index)
		case !ok:
			return nil, fmt.Errorf("%s answered for GPU %d, which it was not asked for", s.what(), r.Index)
		case rs[i] != nil:
			for _, line := range lines {
				if r := (&Reading{}); r.set(FieldIndex, splitCSV(line)[0]) == nil {
					count[r.Index]++
				}
			}
			return nil, fmt.Errorf("%s answered twice for GPU %d and not for %s", s.what(), r.Index, s.missing(count))
		}
		rs[i] = r
	}
	for _, r := range rs {
		s.uuids[r.Index] = r.UUID
	}
	return rs, nil
}

// explain names the GPU in a parse error (gpu as lineGPU gives it) and,
// when the driver cannot give a field every sample needs, says what is
// unsupported and what to do.
func (s *SMI) explain(gpu string, err error) error {
	msg := fmt.Sprintf("%s: %v", s.what(), err)
	if len(s.gpus) > 1 && gpu != "?" {
		msg = fmt.Sprintf("%s: GPU %s: %v", s.what(), gpu, err)
	}
	var ve *valueError
	if errors.As(err, &ve) && !isOptional(ve.field) {
		switch {
		case ve.raw == "[Insufficient Permissions]":
			msg += "; run clockgate as a user the driver lets read it"
		case ve.field == FieldUtilizationGPU && (ve.raw == "[N/A]" || ve.raw == "N/A" || ve.raw == "[Not Supported]"):
			msg += "; this GPU reports no utilization, as a MIG-enabled GPU does: " + migAdvice
		case ve.raw == "[N/A]" || ve.raw == "N/A" || ve.raw == "[Not Supported]":
			msg += fmt.Sprintf("; the driver cannot give %s, which every sample needs: %s", ve.field, smiDriverAdvice)
		}
	}
	return errors.New(msg)
}
