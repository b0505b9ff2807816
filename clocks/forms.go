package clocks

// The sampler's own forms, read without allocating: a throttle bit set and
// a time stamp.

func hexBits(s []byte, out *uint64) bool {
	if len(s) < 3 || len(s) > 18 || s[0] != '0' || (s[1] != 'x' && s[1] != 'X') {
		return false
	}
	var n uint64
	for _, ch := range s[2:] {
		var d byte
		switch {
		case ch >= '0' && ch <= '9':
			d = ch - '0'
		case ch >= 'a' && ch <= 'f':
			d = ch - 'a' + 10
		case ch >= 'A' && ch <= 'F':
			d = ch - 'A' + 10
		default:
			return false
		}
		n = n<<4 | uint64(d)
	}
	*out = n
	return true
}

// canonicalTime is a time validTime accepts, as Unix seconds and
// nanoseconds, for every year it accepts.
func canonicalTime(t []byte) (sec, nsec int64) {
	d := func(i, j int) int64 {
		n := int64(0)
		for _, c := range t[i:j] {
			n = n*10 + int64(c-'0')
		}
		return n
	}
	// Days from the civil date (proleptic Gregorian), as in Howard
	// Hinnant's days_from_civil, with floor division for year 0.
	y, m, day := d(0, 4), d(5, 7), d(8, 10)
	if m <= 2 {
		y--
	}
	era := y / 400
	if y < 0 {
		era = (y - 399) / 400
	}
	yoe := y - era*400
	mp := (m + 9) % 12
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	days := era*146097 + doe - 719468
	return days*86400 + d(11, 13)*3600 + d(14, 16)*60 + d(17, 19), d(20, 23) * 1e6
}

// validTime accepts exactly the sampler's form, 2026-08-12T10:15:03.123Z,
// with every field in range; anything else goes to time.Parse.
func validTime(t []byte) bool {
	if len(t) != 24 || t[4] != '-' || t[7] != '-' || t[10] != 'T' || t[13] != ':' || t[16] != ':' || t[19] != '.' || t[23] != 'Z' {
		return false
	}
	num := func(i, j int) int {
		n := 0
		for k := i; k < j; k++ {
			if t[k] < '0' || t[k] > '9' {
				return -1
			}
			n = n*10 + int(t[k]-'0')
		}
		return n
	}
	y, mo, d, h, mi, s, ms := num(0, 4), num(5, 7), num(8, 10), num(11, 13), num(14, 16), num(17, 19), num(20, 23)
	if y < 0 || mo < 1 || mo > 12 || d < 1 || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 || ms < 0 {
		return false
	}
	days := [13]int{0, 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31}[mo]
	if mo == 2 && y%4 == 0 && (y%100 != 0 || y%400 == 0) {
		days = 29
	}
	return d <= days
}
