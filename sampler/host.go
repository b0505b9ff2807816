package sampler

import (
	"errors"
	"io/fs"
	"os"

	"github.com/clockgate/clockgate/clocks"
	"github.com/clockgate/clockgate/host"
)

// HostRootEnv names the environment variable that, where Config.HostRoot
// is "", sets the root under which the host is read: tests that expect a
// quiet host point it at a fixture tree (a shared machine's real /proc
// shows its steal and its other tenants).
const HostRootEnv = "CLOCKGATE_HOST_ROOT"

// hostStream writes a leg's host stream, PREFIX.host.jsonl (SPEC §12.2):
// the static identity, then one line per GPU tick, and folds it into the
// record's host block as it goes. A nil *hostStream writes nothing.
type hostStream struct {
	path     string
	f        *os.File
	r        *host.Reader
	fold     *clocks.HostFold
	line     []byte
	finished bool
}

// startHost opens the host stream and takes its base reading; nil, said
// in a status line, where the host cannot be read (the leg then has no
// host stream and its host is "not recorded").
func (s *Sampler) startHost() *hostStream {
	root := s.cfg.HostRoot
	if root == "" {
		root = os.Getenv(HostRootEnv)
	}
	if root == "" {
		root = "/"
	}
	path := clocks.HostStreamPath(s.paths[0])
	r, st, err := host.NewReader(host.Dir(root), s.rssRoots(), os.Getpid())
	if err != nil {
		s.cfg.Logf("no host stream: the host cannot be read under %s: %v", root, err)
		return nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o644)
	if err != nil {
		r.Stop()
		if errors.Is(err, fs.ErrExist) {
			err = existsErr(path)
		}
		s.cfg.Logf("no host stream: %v", err)
		return nil
	}
	h := &hostStream{path: path, f: f, r: r, fold: clocks.NewHostFold(st)}
	if _, err := f.Write(append(st.AppendJSON(nil), '\n')); err != nil {
		h.drop(s.cfg.Logf, err)
		return nil
	}
	return h
}

// read takes the host reading of the tick at t (busy: every GPU's sample
// busy) and appends it; a failure drops the host stream, said in a
// status line.
func (h *hostStream) read(t string, busy bool, logf func(string, ...any)) {
	if h == nil || h.f == nil {
		return
	}
	l, err := h.r.Read(t)
	if err == nil {
		h.line = append(l.AppendJSON(h.line[:0]), '\n')
		_, err = h.f.Write(h.line)
	}
	if err != nil {
		h.drop(logf, err)
		return
	}
	h.fold.Add(l, busy)
}

// drop ends a host stream that failed: it is removed, and the record
// carries no host block.
func (h *hostStream) drop(logf func(string, ...any), why error) {
	h.r.Stop()
	h.f.Close()
	os.Remove(h.path)
	h.f = nil
	logf("host stream %s dropped: %v; the leg's host is not recorded", h.path, why)
}

// finish closes the host stream and returns the host block it folds to;
// nil where there is none.
func (h *hostStream) finish(logf func(string, ...any)) *clocks.Host {
	if h == nil || h.f == nil {
		return nil
	}
	h.r.Stop()
	if err := h.f.Sync(); err != nil {
		h.drop(logf, err)
		return nil
	}
	if err := h.f.Close(); err != nil {
		os.Remove(h.path)
		h.f = nil
		logf("host stream %s dropped: %v", h.path, err)
		return nil
	}
	h.f, h.finished = nil, true
	return h.fold.Host()
}

// stop removes a host stream whose leg wrote no record.
func (h *hostStream) stop() {
	if h == nil || h.f == nil {
		return
	}
	h.r.Stop()
	h.f.Close()
	os.Remove(h.path)
	h.f = nil
}
