package provider

import (
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
