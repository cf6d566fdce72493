package provider

import (
	"encoding/json"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/valyala/fastjson"
)

// A count or an index reads the same from both readers, whatever form
// its number takes, and 0 where it is no integer an int64 holds.
func TestIntegerForms(t *testing.T) {
	for _, c := range []struct {
		text string
		want int64
	}{
		{"7", 7}, {"-12", -12}, {"10.0", 10}, {"20.000", 20}, {"1e3", 1000},
		{"2E1", 20}, {"5E+1", 50}, {"1.5e1", 15}, {"-1e1", -10}, {"0.0", 0},
		{"0e5", 0}, {"1e-2", 0}, {"10.5", 0}, {"5e-324", 0},
		{"9223372036854775807", 1<<63 - 1}, {"9223372036854775808", 0},
		{"12345678901234567890", 0}, {"1e19", 0}, {"-9.223372036854775808e18", -1 << 63},
		{"1e400", 0}, {`"12"`, 0}, {"true", 0}, {"null", 0},
	} {
		b := []byte(c.text)
		if got := intOf(b, span{0, len(b)}); got != c.want {
			t.Errorf("intOf(%s) = %d, want %d", c.text, got, c.want)
		}
		v, err := fastjson.ParseBytes(b)
		if err != nil {
			t.Fatalf("%s: %v", c.text, err)
		}
		if got := getInt(v); got != c.want {
			t.Errorf("getInt(%s) = %d, want %d", c.text, got, c.want)
		}
	}
}

// FuzzIntegerForms holds intOf and getInt to one rule on any JSON number:
// a plain integer reads exactly when an int64 holds it, else 0; a number
// with a fraction or an exponent reads its (float64) value when that is an
// integer in int64's range, else 0.
func FuzzIntegerForms(f *testing.F) {
	for _, s := range []string{"0", "-0", "7", "10.0", "1e3", "1.5e1", "-1e1", "1e-2", "9223372036854775807", "9223372036854775808", "-9223372036854775808", "1e19", "123456789012345678901234"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := fastjson.Parse(s)
		if err != nil || v.Type() != fastjson.TypeNumber || s != strings.TrimSpace(s) || !json.Valid([]byte(s)) {
			return // fastjson also takes "+1" and such, which JSON is not
		}
		want := int64(0)
		if n, err := strconv.ParseInt(s, 10, 64); err == nil {
			want = n
		} else if !strings.ContainsAny(s, ".eE") {
			want = 0 // a plain integer past int64
		} else if fl, err := strconv.ParseFloat(s, 64); err == nil || errors.Is(err, strconv.ErrRange) {
			want = floatInt(fl)
		}
		b := []byte(s)
		if got := intOf(b, span{0, len(b)}); got != want {
			t.Errorf("intOf(%s) = %d, want %d", s, got, want)
		}
		if got := getInt(v); got != want {
			t.Errorf("getInt(%s) = %d, want %d", s, got, want)
		}
	})
}
