package host

import (
	"os"
	"testing"
)

// BenchmarkRead is one host reading on this machine's /proc and /sys,
// the leg's own process being the test's: what each GPU tick adds.
func BenchmarkRead(b *testing.B) {
	r, _, err := NewReader(Dir("/"), []int{os.Getpid()}, 0)
	if err != nil {
		b.Skip(err)
	}
	r.Stop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := r.Read("2026-12-03T12:00:00.000Z"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkWalk is one walk of every process, beside the readings at
// most once a second.
func BenchmarkWalk(b *testing.B) {
	r, _, err := NewReader(Dir("/"), []int{os.Getpid()}, 0)
	if err != nil {
		b.Skip(err)
	}
	r.Stop()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		r.walk()
	}
}
