package sampler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"regexp"
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
	// GPU is the index passed to nvidia-smi -i.
	GPU int
	// QueryTimeout bounds one call, and the startup probe as a whole; zero
	// means DefaultQueryTimeout.
	QueryTimeout time.Duration
	// Logf, when not nil, receives status lines.
	Logf func(format string, args ...any)
}

// SMI reads one GPU with nvidia-smi --query-gpu=… --format=csv,noheader,nounits
// -i GPU, one call per reading. It never passes nvidia-smi anything else.
// Each call runs in a process group of its own, and the whole group is
// killed when the call times out or the sampler stops, so a wrapper's
// children never outlive a reading.
type SMI struct {
	path     string
	gpu      int
	timeout  time.Duration
	fields   []string
	throttle string
	dropped  []string
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
	if o.GPU < 0 {
		return nil, fmt.Errorf("GPU index %d is negative", o.GPU)
	}
	path := o.Path
	if path == "" {
		p, err := exec.LookPath("nvidia-smi")
		if err != nil {
			return nil, fmt.Errorf("nvidia-smi not found on PATH: %v", err)
		}
		path = p
	}
	s := &SMI{path: path, gpu: o.GPU, timeout: o.QueryTimeout}
	if s.timeout <= 0 {
		s.timeout = DefaultQueryTimeout
	}
	pctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	throttle := FieldEventReasons
	optional := OptionalQueryFields()
	for {
		fields := append(QueryFields(throttle), optional...)
		out, err := s.query(pctx, fields)
		var qe *queryError
		if errors.As(err, &qe) {
			if m := rejectedRE.FindStringSubmatch(qe.output); m != nil {
				switch f := m[1]; {
				case f == FieldEventReasons && throttle == FieldEventReasons:
					logf("nvidia-smi: the driver rejects %s; asking for %s", f, FieldThrottleReasons)
					throttle = FieldThrottleReasons
					continue
				case f == FieldThrottleReasons && throttle == FieldThrottleReasons:
					return nil, fmt.Errorf("nvidia-smi -i %d: the driver rejects both %s and %s, so the throttle bit set cannot be read; %s",
						s.gpu, FieldEventReasons, FieldThrottleReasons, smiDriverAdvice)
				case removeField(&optional, f):
					logf("nvidia-smi: optional field %s dropped: the driver does not know it", f)
					s.dropped = append(s.dropped, f)
					continue
				default:
					return nil, fmt.Errorf("%v; %s is a field every sample needs, and %s", qe, f, smiDriverAdvice)
				}
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
		return s, nil
	}
}

// smiDriverAdvice says what to do about a driver that cannot answer a field
// every sample needs.
const smiDriverAdvice = "clockgate cannot record clock evidence with this driver: update the NVIDIA driver, or record the leg on a GPU and driver that answer every field of the query in the README"

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
// first nRequired whose values are not numbers are dropped, and the rest of
// the line must parse whole. It returns the fields each reading will ask
// for.
func (s *SMI) probeOptional(fields []string, out []byte, nRequired int, logf func(string, ...any)) ([]string, error) {
	line, err := s.oneLine(out)
	if err != nil {
		return nil, err
	}
	cells := splitCSV(line)
	if len(cells) != len(fields) {
		_, err := ParseCSVLine(fields, line) // names the count
		return nil, s.explain(err)
	}
	var kept, keptCells []string
	for i, f := range fields {
		if i >= nRequired {
			if err := (&Reading{}).set(f, cells[i]); err != nil {
				logf("nvidia-smi: optional field %s dropped: %v", f, err)
				s.dropped = append(s.dropped, f)
				continue
			}
		}
		kept, keptCells = append(kept, f), append(keptCells, cells[i])
	}
	if _, err := s.parse(kept, []byte(strings.Join(keptCells, ", "))); err != nil {
		return nil, err
	}
	return kept, nil
}

// Name says which GPU is read and with which fields.
func (s *SMI) Name() string {
	n := fmt.Sprintf("nvidia-smi (%s) GPU %d, throttle field %s", s.path, s.gpu, s.throttle)
	if opt := s.fields[len(QueryFields(s.throttle)):]; len(opt) > 0 {
		n += ", optional " + strings.Join(opt, " ")
	}
	return n
}

// Fields returns the fields each reading queries, in order.
func (s *SMI) Fields() []string { return append([]string(nil), s.fields...) }

// ThrottleField returns the throttle spelling the driver accepted.
func (s *SMI) ThrottleField() string { return s.throttle }

// Dropped returns the optional fields the driver could not give numbers for.
func (s *SMI) Dropped() []string { return append([]string(nil), s.dropped...) }

// Read runs one query and turns its answer into a sample.
func (s *SMI) Read(ctx context.Context, t time.Time, bootID string) (*clocks.Sample, error) {
	out, err := s.query(ctx, s.fields)
	if err != nil {
		return nil, err
	}
	r, err := s.parse(s.fields, out)
	if err != nil {
		return nil, err
	}
	smp, err := r.Sample(t, bootID)
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi -i %d: %v", s.gpu, err)
	}
	return smp, nil
}

// Close does nothing: each reading is its own process.
func (s *SMI) Close() error { return nil }

// queryError is an nvidia-smi call that exited non-zero.
type queryError struct {
	gpu    int
	status int
	output string
}

func (e *queryError) Error() string {
	msg := e.output
	if len(msg) > 300 {
		msg = msg[:300] + "…"
	}
	return fmt.Sprintf("nvidia-smi -i %d exited with status %d: %q", e.gpu, e.status, msg)
}

// errTimedOut marks a call that did not answer within the query timeout.
var errTimedOut = errors.New("did not answer")

// queryWaitDelay is how long a finished call's output pipes may stay open
// after nvidia-smi exits (only a process it left behind holds them) before
// they are closed and its process group killed.
const queryWaitDelay = 100 * time.Millisecond

// query runs one nvidia-smi call in a process group of its own. When the
// call times out or ctx ends, the whole group is killed (a wrapper script's
// children with it); after any call, whatever is left in the group is
// killed too.
func (s *SMI) query(ctx context.Context, fields []string) ([]byte, error) {
	qctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd := exec.CommandContext(qctx, s.path,
		"--query-gpu="+strings.Join(fields, ","), "--format=csv,noheader,nounits", "-i", strconv.Itoa(s.gpu))
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
		limit := s.timeout
		if dl, ok := ctx.Deadline(); ok && dl.Sub(start) < limit {
			limit = dl.Sub(start).Round(time.Millisecond)
		}
		return nil, fmt.Errorf("nvidia-smi -i %d %w within %v; its process group was killed", s.gpu, errTimedOut, limit)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		text := strings.TrimSpace(strings.TrimSpace(stdout.String()) + "\n" + strings.TrimSpace(stderr.String()))
		return nil, &queryError{gpu: s.gpu, status: ee.ExitCode(), output: text}
	}
	if err != nil && !errors.Is(err, exec.ErrWaitDelay) {
		return nil, fmt.Errorf("nvidia-smi -i %d: %v", s.gpu, err)
	}
	return stdout.Bytes(), nil
}

// killGroup kills process group pgid; a group already gone is no error.
func killGroup(pgid int) error {
	if err := syscall.Kill(-pgid, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	return nil
}

// oneLine returns the one line an -i query answers.
func (s *SMI) oneLine(out []byte) (string, error) {
	text := strings.TrimRight(string(out), "\r\n")
	if strings.TrimSpace(text) == "" {
		return "", fmt.Errorf("nvidia-smi -i %d printed nothing", s.gpu)
	}
	lines := strings.Split(text, "\n")
	if len(lines) != 1 {
		return "", fmt.Errorf("nvidia-smi -i %d printed %d lines, want one", s.gpu, len(lines))
	}
	return lines[0], nil
}

// parse reads the one line an -i query answers and checks it is this GPU's.
func (s *SMI) parse(fields []string, out []byte) (*Reading, error) {
	line, err := s.oneLine(out)
	if err != nil {
		return nil, err
	}
	r, err := ParseCSVLine(fields, line)
	if err != nil {
		return nil, s.explain(err)
	}
	if r.Index != s.gpu {
		return nil, fmt.Errorf("nvidia-smi -i %d answered for GPU %d", s.gpu, r.Index)
	}
	return r, nil
}

// explain names the GPU in a parse error and, when the driver cannot give
// a field every sample needs, says what is unsupported and what to do.
func (s *SMI) explain(err error) error {
	msg := fmt.Sprintf("nvidia-smi -i %d: %v", s.gpu, err)
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
