package sampler

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/clockgate/clockgate/clocks"
)

// DefaultQueryTimeout bounds one nvidia-smi call. A driver that does not
// answer within it is refused, not waited on.
const DefaultQueryTimeout = 10 * time.Second

// SMIOptions configures the nvidia-smi backend.
type SMIOptions struct {
	// Path is the nvidia-smi executable; "" finds "nvidia-smi" on PATH.
	Path string
	// GPU is the index passed to nvidia-smi -i.
	GPU int
	// QueryTimeout bounds one call; zero means DefaultQueryTimeout.
	QueryTimeout time.Duration
	// Logf, when not nil, receives status lines.
	Logf func(format string, args ...any)
}

// SMI reads one GPU with nvidia-smi --query-gpu=… --format=csv,noheader,nounits
// -i GPU, one call per reading. It never passes nvidia-smi anything else.
type SMI struct {
	path     string
	gpu      int
	timeout  time.Duration
	fields   []string
	throttle string
	dropped  []string
}

// NewSMI finds nvidia-smi and probes, once, what the driver can answer: each
// optional field (OptionalQueryFields) is kept only if the driver
// gives a number for it; then the whole query is tried with the throttle
// bit set spelled clocks_event_reasons.active and, if the driver rejects
// that field, clocks_throttle_reasons.active. The probe's answer must parse
// whole; any other failure is a refusal.
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
	var optional []string
	for _, f := range OptionalQueryFields() {
		fields := []string{FieldIndex, f}
		out, err := s.query(ctx, fields)
		if err == nil {
			_, err = s.parse(fields, out)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			logf("nvidia-smi: optional field %s dropped: %v", f, err)
			s.dropped = append(s.dropped, f)
			continue
		}
		optional = append(optional, f)
	}
	for _, spelling := range []string{FieldEventReasons, FieldThrottleReasons} {
		fields := append(QueryFields(spelling), optional...)
		out, err := s.query(ctx, fields)
		var qe *queryError
		if errors.As(err, &qe) && qe.rejects(spelling) {
			logf("nvidia-smi: the driver rejects %s", spelling)
			continue
		}
		if err != nil {
			return nil, err
		}
		if _, err := s.parse(fields, out); err != nil {
			return nil, err
		}
		s.fields, s.throttle = fields, spelling
		return s, nil
	}
	return nil, fmt.Errorf("nvidia-smi -i %d: the driver rejects both %s and %s", s.gpu, FieldEventReasons, FieldThrottleReasons)
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

// rejects reports whether nvidia-smi refused field as unknown, as in
// `Field "clocks_event_reasons.active" is not a valid field to query.`
func (e *queryError) rejects(field string) bool {
	return strings.Contains(e.output, `"`+field+`" is not a valid field`)
}

func (s *SMI) query(ctx context.Context, fields []string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, s.timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.path,
		"--query-gpu="+strings.Join(fields, ","), "--format=csv,noheader,nounits", "-i", strconv.Itoa(s.gpu))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	cmd.WaitDelay = time.Second
	err := cmd.Run()
	if ctx.Err() == context.DeadlineExceeded {
		return nil, fmt.Errorf("nvidia-smi -i %d did not answer within %v", s.gpu, s.timeout)
	}
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		text := strings.TrimSpace(strings.TrimSpace(stdout.String()) + "\n" + strings.TrimSpace(stderr.String()))
		return nil, &queryError{gpu: s.gpu, status: ee.ExitCode(), output: text}
	}
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi -i %d: %v", s.gpu, err)
	}
	return stdout.Bytes(), nil
}

// parse reads the one line an -i query answers and checks it is this GPU's.
func (s *SMI) parse(fields []string, out []byte) (*Reading, error) {
	text := strings.TrimRight(string(out), "\r\n")
	if strings.TrimSpace(text) == "" {
		return nil, fmt.Errorf("nvidia-smi -i %d printed nothing", s.gpu)
	}
	lines := strings.Split(text, "\n")
	if len(lines) != 1 {
		return nil, fmt.Errorf("nvidia-smi -i %d printed %d lines, want one", s.gpu, len(lines))
	}
	r, err := ParseCSVLine(fields, lines[0])
	if err != nil {
		return nil, fmt.Errorf("nvidia-smi -i %d: %v", s.gpu, err)
	}
	if r.Index != s.gpu {
		return nil, fmt.Errorf("nvidia-smi -i %d answered for GPU %d", s.gpu, r.Index)
	}
	return r, nil
}
