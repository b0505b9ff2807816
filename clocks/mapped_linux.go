package clocks

import (
	"os"
	"syscall"
)

// mapFile maps the whole of file read-only when it is at least min bytes,
// its pages read in at once; unmap lets go of the mapping.
func mapFile(file *os.File, min int64) (data []byte, unmap func(), err error) {
	st, err := file.Stat()
	if err != nil || !st.Mode().IsRegular() || st.Size() < min || st.Size() != int64(int(st.Size())) {
		return nil, nil, errNotMapped
	}
	data, err = syscall.Mmap(int(file.Fd()), 0, int(st.Size()), syscall.PROT_READ, syscall.MAP_SHARED|syscall.MAP_POPULATE)
	if err != nil {
		return nil, nil, errNotMapped
	}
	return data, func() { syscall.Munmap(data) }, nil
}
