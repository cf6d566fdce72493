package provider

import (
	"bytes"
	"math"
	"strconv"

	"github.com/valyala/fastjson"
)

// Counts and indexes are JSON numbers, and a number is a number whatever
// its form: JavaScript reads 10.0, 1e3 and 1.5e1 as the integers 10, 1000
// and 15, and so do the readers here. A number that is no integer, or
// that an int64 cannot hold, reads 0, as anything else does.

// integralNumber reads the JSON number text s that is no plain int64: its
// value when s has a fraction or an exponent and that value is an integer
// in int64's range, else 0.
// Plain integers take intOf's loop; this is its rare path.
func integralNumber(s []byte) int64 {
	if bytes.IndexAny(s, ".eE") < 0 {
		return 0 // a plain integer past int64
	}
	f, err := strconv.ParseFloat(string(s), 64)
	if err != nil {
		return 0
	}
	return floatInt(f)
}

// floatInt is f when it is an integer within int64's range, else 0.
func floatInt(f float64) int64 {
	if f != math.Trunc(f) || f < -(1<<63) || f >= 1<<63 {
		return 0 // a fraction, NaN, an infinity or out of range
	}
	return int64(f)
}

// getInt is fastjson's GetInt64 that also reads an integer written with a
// fraction or an exponent (intOf's rule, for the parsed path).
func getInt(v *fastjson.Value, keys ...string) int64 {
	x := v.Get(keys...)
	if x == nil || x.Type() != fastjson.TypeNumber {
		return 0
	}
	if n := x.GetInt64(); n != 0 {
		return n
	}
	if x.GetFloat64() == 0 {
		return 0 // "0", "0.0": the common case costs no copy
	}
	// A form GetInt64 does not read ("1e3", "1.1e2"): read the text itself,
	// as fastjson's float reading is not exact.
	return integralNumber(x.MarshalTo(nil))
}
