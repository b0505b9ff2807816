package report

import (
	"bytes"
	"errors"
	"sync"
)

// errStopped ends the pieces of a whole whose writing has failed.
var errStopped = errors.New("report: stopped")

// pieceBufs hold pieces between their rendering and their writing: a
// section of a large comparison is some hundreds of KiB, which would
// otherwise be grown anew for every one.
var pieceBufs = sync.Pool{New: func() any { return new(bytes.Buffer) }}

// inOrder renders the pieces of a whole on that many goroutines and gives
// them to emit in order. produce calls submit once per piece, in order,
// with what renders the piece into a buffer of its own; emit is given each
// piece in the order submitted, at most two per goroutine ahead of the one
// being emitted, so that the whole is never in memory and its bytes are
// the same on any number of goroutines. The first error (a piece's, emit's
// or produce's own) stops the pieces being asked for and is returned.
func inOrder(workers int, produce func(submit func(render func(b *bytes.Buffer) error) error) error, emit func(piece []byte) error) error {
	type result struct {
		b   *bytes.Buffer
		err error
	}
	workers = max(workers, 1)
	// pending holds, in order, where each piece will be.
	pending := make(chan chan result, 2*workers)
	jobs := make(chan func())
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for job := range jobs {
				job()
			}
		})
	}
	emitted := make(chan error, 1)
	go func() {
		var err error
		for at := range pending {
			r := <-at
			if err == nil {
				if err = r.err; err == nil {
					err = emit(r.b.Bytes())
				}
				if err != nil {
					close(stop)
				}
			}
			if r.b != nil {
				r.b.Reset()
				pieceBufs.Put(r.b)
			}
		}
		emitted <- err
	}()
	err := produce(func(render func(b *bytes.Buffer) error) error {
		at := make(chan result, 1)
		select {
		case pending <- at:
		case <-stop:
			return errStopped
		}
		job := func() {
			b := pieceBufs.Get().(*bytes.Buffer)
			at <- result{b, render(b)}
		}
		select {
		case jobs <- job:
			return nil
		case <-stop:
			at <- result{err: errStopped}
			return errStopped
		}
	})
	close(jobs)
	close(pending)
	wg.Wait()
	if eerr := <-emitted; eerr != nil {
		return eerr
	}
	return err
}
