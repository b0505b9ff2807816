//go:build linux

// Command chronyfeed is scripts/chrony.sh's helper: it feeds a chronyd
// `refclock SOCK` zero offsets, so that chronyd steers the kernel clock by
// nothing yet marks it synchronised, and reads and restores the kernel's
// time state (adjtimex).
//
//	chronyfeed feed SOCKET        # a sample every 250 ms, until killed
//	chronyfeed status             # the kernel's state; exit 0 when synchronised
//	chronyfeed save FILE          # the kernel's status and frequency, into FILE
//	chronyfeed restore FILE       # unsynchronised again, with FILE's frequency
//
// A sample is chrony's struct sock_sample (refclock_sock.c): the system
// time of the measurement (struct timeval), the offset of true time from
// it (double, seconds: 0 here), pulse (0), leap (0), padding, and the
// magic 0x534f434b; 40 bytes in the machine's byte order.
package main

import (
	"encoding/binary"
	"fmt"
	"math"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// The kernel's adjtimex modes, status bits and states (linux/timex.h).
const (
	adjFrequency = 0x0002
	adjMaxError  = 0x0004
	adjEstError  = 0x0008
	adjStatus    = 0x0010

	staUnsync = 0x0040

	timeError = 5

	// phaseLimitUS is the kernel's NTP_PHASE_LIMIT (16 s): a maximum error
	// the kernel reaches by itself when nothing synchronises it, and then
	// marks the clock unsynchronised.
	phaseLimitUS = 16000000

	// sockMagic ends every sample, as chrony's SOCK_MAGIC.
	sockMagic = 0x534f434b

	// feedEvery is how often a sample is sent: several per chronyd poll
	// (poll -1, half a second) so its filter always has its two.
	feedEvery = 250 * time.Millisecond
)

func main() { os.Exit(run(os.Args[1:])) }

func run(args []string) int {
	if len(args) == 0 {
		return usage()
	}
	switch {
	case args[0] == "feed" && len(args) == 2:
		return feed(args[1])
	case args[0] == "status" && len(args) == 1:
		return status()
	case args[0] == "save" && len(args) == 2:
		return save(args[1])
	case args[0] == "restore" && len(args) == 2:
		return restore(args[1])
	}
	return usage()
}

func usage() int {
	fmt.Fprintln(os.Stderr, "clockgate: usage: chronyfeed feed SOCKET | status | save FILE | restore FILE (scripts/chrony.sh runs it)")
	return 2
}

// sample is one struct sock_sample at t with a zero offset.
func sample(t time.Time) []byte {
	b := make([]byte, 40)
	binary.NativeEndian.PutUint64(b[0:], uint64(t.Unix()))
	binary.NativeEndian.PutUint64(b[8:], uint64(t.Nanosecond()/1000))
	binary.NativeEndian.PutUint64(b[16:], math.Float64bits(0))
	// pulse, leap and padding stay 0.
	binary.NativeEndian.PutUint32(b[36:], sockMagic)
	return b
}

// feed sends a zero-offset sample to chronyd's socket every feedEvery,
// waiting for the socket to appear (chronyd creates it) and carrying on
// across chronyd's restarts.
func feed(path string) int {
	addr := &net.UnixAddr{Name: path, Net: "unixgram"}
	var conn *net.UnixConn
	for {
		if conn == nil {
			c, err := net.DialUnix("unixgram", nil, addr)
			if err == nil {
				conn = c
			}
		}
		if conn != nil {
			if _, err := conn.Write(sample(time.Now())); err != nil {
				conn.Close()
				conn = nil
			}
		}
		time.Sleep(feedEvery)
	}
}

// read returns the kernel's time state without changing it.
func read() (syscall.Timex, int, error) {
	var tx syscall.Timex
	state, err := syscall.Adjtimex(&tx)
	return tx, state, err
}

func status() int {
	tx, state, err := read()
	if err != nil {
		fmt.Fprintf(os.Stderr, "clockgate: adjtimex: %v\n", err)
		return 2
	}
	synced := state != timeError && tx.Status&staUnsync == 0
	fmt.Printf("synchronised=%t state=%d status=0x%x maxerror_us=%d esterror_us=%d freq_ppm=%.3f\n",
		synced, state, tx.Status, tx.Maxerror, tx.Esterror, float64(tx.Freq)/65536)
	if !synced {
		return 1
	}
	return 0
}

// save writes the kernel's status bits and frequency to file, before
// chronyd changes them.
func save(file string) int {
	tx, _, err := read()
	if err != nil {
		fmt.Fprintf(os.Stderr, "clockgate: adjtimex: %v\n", err)
		return 2
	}
	if err := os.WriteFile(file, fmt.Appendf(nil, "%d %d\n", tx.Status, tx.Freq), 0o644); err != nil {
		fmt.Fprintf(os.Stderr, "clockgate: %v\n", err)
		return 2
	}
	return 0
}

// restore gives the kernel back the frequency saved before chronyd ran,
// and marks the clock unsynchronised with the maximum error the kernel
// would reach by itself: the machine's own clock, as before.
func restore(file string) int {
	var tx syscall.Timex
	tx.Status = staUnsync
	if data, err := os.ReadFile(file); err == nil {
		f := strings.Fields(string(data))
		if len(f) == 2 {
			st, err1 := strconv.ParseInt(f[0], 10, 32)
			freq, err2 := strconv.ParseInt(f[1], 10, 64)
			if err1 == nil && err2 == nil {
				tx.Status = int32(st) | staUnsync
				tx.Freq = freq
				tx.Modes |= adjFrequency
			}
		}
	}
	tx.Modes |= adjStatus | adjMaxError | adjEstError
	tx.Maxerror, tx.Esterror = phaseLimitUS, phaseLimitUS
	if _, err := syscall.Adjtimex(&tx); err != nil {
		fmt.Fprintf(os.Stderr, "clockgate: adjtimex: %v (run as root)\n", err)
		return 2
	}
	return 0
}
