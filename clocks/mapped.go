package clocks

import (
	"errors"
	"fmt"
	"io"
	"os"
	"runtime/debug"
)

// mapMinBytes is the smallest stream read from a memory map rather than
// through read calls: below it, mapping costs more than copying.
var mapMinBytes int64 = 256 << 10

// errNotMapped says a file was not mapped; it is read the ordinary way.
var errNotMapped = errors.New("not mapped")

// foldFrom folds the stream r. A regular file large enough is read in
// place from a read-only memory map, which spares copying every byte into
// a buffer; anything else, or a file that cannot be mapped, is read
// through the pooled line reader. Both read the same lines the same way.
func (f *Fold) foldFrom(r io.Reader, path string) error {
	if file, ok := r.(*os.File); ok {
		data, unmap, err := mapFile(file, mapMinBytes)
		if err == nil {
			defer unmap()
			return f.foldMapped(data, path)
		}
	}
	return f.FoldStream(r, path)
}

// foldMapped folds a mapped stream. A file that shrinks while it is read
// makes its missing pages fault; the fault is this stream's error, not
// the process's end.
func (f *Fold) foldMapped(data []byte, path string) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if v := recover(); v != nil {
			if _, fault := v.(interface{ Addr() uintptr }); !fault {
				panic(v)
			}
			err = fmt.Errorf("%s: the file shrank while it was read (%d bytes when it was opened): was it still being written? Summarize it again once it is complete", path, len(data))
		}
	}()
	rd := readerPool.Get().(*Reader)
	defer readerPool.Put(rd)
	rd.reset(nil, path)
	rd.inPlace, rd.data = true, data
	defer rd.reset(nil, "")
	for rd.Scan() {
		f.AddRow(rd.Row(), rd.Line())
	}
	f.finish()
	return rd.Err()
}
