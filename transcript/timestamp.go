package transcript

import "time"

// parseISOMillis parses the ISO-8601 timestamps JavaScript's
// Date.prototype.toISOString writes ("2026-03-14T03:35:39.401Z") into Unix
// milliseconds without allocating. Other RFC 3339 forms (offsets, any
// number of fraction digits) go through the slow path. ok is false when s is
// not a timestamp.
func parseISOMillis(s []byte) (ms int64, ok bool) {
	// Fast path: YYYY-MM-DDTHH:MM:SS[.fff]Z
	if len(s) >= 20 && s[4] == '-' && s[7] == '-' && (s[10] == 'T' || s[10] == 't' || s[10] == ' ') &&
		s[13] == ':' && s[16] == ':' && (s[len(s)-1] == 'Z' || s[len(s)-1] == 'z') {
		year, ok1 := digits(s[0:4])
		mon, ok2 := digits(s[5:7])
		day, ok3 := digits(s[8:10])
		hh, ok4 := digits(s[11:13])
		mm, ok5 := digits(s[14:16])
		ss, ok6 := digits(s[17:19])
		frac := int64(0)
		okf := true
		rest := s[19 : len(s)-1]
		if len(rest) > 0 {
			if rest[0] != '.' || len(rest) < 2 {
				okf = false
			} else {
				scale := int64(100)
				for _, c := range rest[1:] {
					if c < '0' || c > '9' {
						okf = false
						break
					}
					frac += int64(c-'0') * scale
					scale /= 10
				}
			}
		}
		if ok1 && ok2 && ok3 && ok4 && ok5 && ok6 && okf && mon >= 1 && mon <= 12 && day >= 1 && day <= 31 &&
			hh < 24 && mm < 60 && ss < 61 {
			t := time.Date(int(year), time.Month(mon), int(day), int(hh), int(mm), int(ss), 0, time.UTC)
			return t.Unix()*1000 + frac, true
		}
	}
	// Slow path.
	t, err := time.Parse(time.RFC3339Nano, string(s))
	if err != nil {
		return 0, false
	}
	return t.UnixMilli(), true
}

func digits(b []byte) (int64, bool) {
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// isoLayout is JavaScript's toISOString for the years 0 to 9999.
const isoLayout = "2006-01-02T15:04:05.000Z"

// appendISOMillis appends ms as JavaScript's toISOString would: the
// digits written directly for the years 0 to 9999 (time.AppendFormat
// reads its layout on every call), through AppendFormat otherwise.
func appendISOMillis(dst []byte, ms int64) []byte {
	t := time.UnixMilli(ms).UTC()
	year, mon, day := t.Date()
	if year < 0 || year > 9999 {
		return t.AppendFormat(dst, isoLayout)
	}
	hh, mm, ss := t.Clock()
	milli := t.Nanosecond() / 1e6
	return append(dst,
		byte('0'+year/1000), byte('0'+year/100%10), byte('0'+year/10%10), byte('0'+year%10), '-',
		byte('0'+int(mon)/10), byte('0'+int(mon)%10), '-', byte('0'+day/10), byte('0'+day%10), 'T',
		byte('0'+hh/10), byte('0'+hh%10), ':', byte('0'+mm/10), byte('0'+mm%10), ':', byte('0'+ss/10), byte('0'+ss%10), '.',
		byte('0'+milli/100), byte('0'+milli/10%10), byte('0'+milli%10), 'Z')
}
