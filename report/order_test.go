package report

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand"
	"runtime"
	"testing"
	"time"
)

// TestInOrderKeepsOrder: pieces that take random times to render come out
// in the order they were submitted, on 1 to 8 goroutines.
func TestInOrderKeepsOrder(t *testing.T) {
	rng := rand.New(rand.NewSource(3))
	for workers := 1; workers <= 8; workers++ {
		const pieces = 200
		delays := make([]time.Duration, pieces)
		for i := range delays {
			delays[i] = time.Duration(rng.Intn(200)) * time.Microsecond
		}
		var got []string
		err := inOrder(workers, func(submit func(func(*bytes.Buffer) error) error) error {
			for i := range pieces {
				if err := submit(func(b *bytes.Buffer) error {
					time.Sleep(delays[i])
					fmt.Fprintf(b, "piece %d", i)
					return nil
				}); err != nil {
					return err
				}
			}
			return nil
		}, func(piece []byte) error {
			got = append(got, string(piece))
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != pieces {
			t.Fatalf("%d goroutines: %d pieces emitted of %d", workers, len(got), pieces)
		}
		for i, g := range got {
			if want := fmt.Sprintf("piece %d", i); g != want {
				t.Fatalf("%d goroutines: piece %d emitted is %q", workers, i, g)
			}
		}
	}
}

// TestInOrderStops: a piece that fails, an emit that fails, or a produce
// that fails ends the whole with that error; no piece after the failed one
// is emitted, the pieces stop being asked for long before the last, and
// no goroutine is left behind.
func TestInOrderStops(t *testing.T) {
	errPiece, errEmit, errProduce := errors.New("piece"), errors.New("emit"), errors.New("produce")
	goroutines := runtime.NumGoroutine()
	const pieces, bad = 5000, 20
	for workers := 1; workers <= 5; workers++ {
		for _, fail := range []error{errPiece, errEmit, errProduce} {
			submitted, emitted := 0, 0
			err := inOrder(workers, func(submit func(func(*bytes.Buffer) error) error) error {
				for i := range pieces {
					if fail == errProduce && i == bad {
						return errProduce
					}
					submitted++
					if err := submit(func(b *bytes.Buffer) error {
						if fail == errPiece && i == bad {
							return errPiece
						}
						b.WriteString("x")
						return nil
					}); err != nil {
						return err
					}
				}
				return nil
			}, func([]byte) error {
				if fail == errEmit && emitted == bad {
					return errEmit
				}
				emitted++
				return nil
			})
			if !errors.Is(err, fail) {
				t.Errorf("%d goroutines, %v failing: %v", workers, fail, err)
			}
			if emitted != bad {
				t.Errorf("%d goroutines, %v failing at piece %d: %d emitted", workers, fail, bad, emitted)
			}
			if submitted > bad+1+2*workers+workers {
				t.Errorf("%d goroutines, %v failing at piece %d: %d submitted", workers, fail, bad, submitted)
			}
		}
	}
	for i := 0; runtime.NumGoroutine() > goroutines && i < 100; i++ {
		time.Sleep(10 * time.Millisecond)
	}
	if n := runtime.NumGoroutine(); n > goroutines {
		t.Errorf("%d goroutines after the failed wholes, %d before", n, goroutines)
	}
}

// TestMarkdownSameOnAnyCores: report.md, its sections rendered on 1, 2 or
// 7 cores, is the sections rendered one after the other, byte for byte and
// section for section, on every scenario tree.
func TestMarkdownSameOnAnyCores(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	scenarioDocs(t, func(tree string, d *Document) {
		var want bytes.Buffer
		var spans []mdSpan
		if err := d.sections(func(section int, md []byte) error {
			spans = append(spans, mdSpan{section, len(md)})
			want.Write(md)
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		for _, procs := range []int{1, 2, 7} {
			runtime.GOMAXPROCS(procs)
			var got bytes.Buffer
			if err := d.Markdown(&got); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) || fmt.Sprint(d.spans) != fmt.Sprint(spans) {
				t.Fatalf("%s on %d cores: spans %v, want %v:\n%s", tree, procs, d.spans, spans, lineDiff(want.Bytes(), got.Bytes()))
			}
		}
	})
}
