package provider

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"
)

// validUTF8's short-fragment answers agree with utf8.Valid on every
// length around its word boundaries, with the non-ASCII byte anywhere.
func TestValidUTF8(t *testing.T) {
	cases := [][]byte{nil, {}, []byte("a"), []byte("café"), []byte("\xff"), []byte("abcdefg\xc3"), []byte("\xc3\xa9bcdefghijklmno"), []byte("— dash"), []byte("abcdefghijklmnop\xff")}
	r := rand.New(rand.NewPCG(1, 2))
	for n := 0; n <= 20; n++ {
		for range 200 {
			b := make([]byte, n)
			for i := range b {
				b[i] = byte('a' + r.IntN(26))
			}
			if n > 0 && r.IntN(2) == 0 {
				b[r.IntN(n)] = byte(0x80 + r.IntN(0x80)) // a lone continuation or lead byte
			}
			if n > 1 && r.IntN(4) == 0 {
				i := r.IntN(n - 1)
				b[i], b[i+1] = 0xc3, 0xa9 // é
			}
			cases = append(cases, b)
		}
	}
	for _, b := range cases {
		if got, want := validUTF8(b), utf8.Valid(b); got != want {
			t.Fatalf("validUTF8(%q) = %v, want %v", b, got, want)
		}
	}
}
