package tokenize

import (
	"math/rand/v2"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"
)

// The reference pre-tokenizer for the tests: Go's regexp engine with
// tiktoken's split patterns. Go's regexp prefers, among leftmost matches,
// the one a backtracking engine finds first, so it gives the same pieces as
// the backtracking engines of the reference ports for every alternative but
// \s+(?!\S), which RE2 cannot express; it is written as a capturing (\s+)
// and its backtracking (leave the last whitespace character before a
// non-space) is applied afterwards. \s is spelled out as unicode.IsSpace
// (checked by TestReferenceSpaceClass) and the case-insensitive contractions
// as ASCII pairs, since the reference ports do not fold ſ to s.
const (
	refSpace   = `\t\n\v\f\r\x{85}\p{Z}`
	refContr   = `'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD]`
	refUp      = `[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]`
	refLow     = `[\p{Ll}\p{Lm}\p{Lo}\p{M}]`
	refTailCl  = `|\p{N}{1,3}| ?[^` + refSpace + `\p{L}\p{N}]+[\r\n]*|[` + refSpace + `]*[\r\n]+|([` + refSpace + `]+)`
	refTailO2  = `|\p{N}{1,3}| ?[^` + refSpace + `\p{L}\p{N}]+[\r\n/]*|[` + refSpace + `]*[\r\n]+|([` + refSpace + `]+)`
	refPatCl   = `^(?:(?:` + refContr + `)|[^\r\n\p{L}\p{N}]?\p{L}+` + refTailCl + `)`
	refPatO200 = `^(?:[^\r\n\p{L}\p{N}]?` + refUp + `*` + refLow + `+(?:` + refContr + `)?|[^\r\n\p{L}\p{N}]?` + refUp + `+` + refLow + `*(?:` + refContr + `)?` + refTailO2 + `)`
)

var refSplit = map[Encoding]*regexp.Regexp{
	Cl100kBase: regexp.MustCompile(refPatCl),
	O200kBase:  regexp.MustCompile(refPatO200),
}

// refPieces returns the end offsets of the reference pieces of s.
func refPieces(enc Encoding, s string) []int {
	re := refSplit[enc]
	var ends []int
	for pos := 0; pos < len(s); {
		m := re.FindStringSubmatchIndex(s[pos:])
		if m == nil || m[1] == 0 {
			panic("reference pattern matched nothing at " + s[pos:])
		}
		end := pos + m[1]
		if m[2] >= 0 && end < len(s) {
			// \s+(?!\S) before a non-space: back off one character;
			// a single character is then \s+.
			if _, w := utf8.DecodeLastRuneInString(s[pos:end]); end-w > pos {
				end -= w
			}
		}
		ends = append(ends, end)
		pos = end
	}
	return ends
}

func ourPieces(c *Counter, s string) []int {
	var ends []int
	for i := 0; i < len(s); {
		i = c.next(s, i)
		ends = append(ends, i)
	}
	return ends
}

// checkSplit fails t when the pieces of s differ from the reference's.
func checkSplit(t *testing.T, enc Encoding, s string) {
	t.Helper()
	want := refPieces(enc, s)
	got := ourPieces(MustGet(enc), s)
	if !slices.Equal(got, want) {
		t.Fatalf("%v %q:\n got %q\nwant %q", enc, s, cutAt(s, got), cutAt(s, want))
	}
}

func cutAt(s string, ends []int) []string {
	var out []string
	start := 0
	for _, e := range ends {
		out = append(out, s[start:e])
		start = e
	}
	return out
}

func TestReferenceSpaceClass(t *testing.T) {
	re := regexp.MustCompile(`^[` + refSpace + `]$`)
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if r >= 0xd800 && r < 0xe000 {
			continue
		}
		if re.MatchString(string(r)) != unicode.IsSpace(r) {
			t.Fatalf("%U: reference \\s disagrees with unicode.IsSpace", r)
		}
	}
}

// splitAlphabet: every kind of whitespace, letters of each case class o200k
// distinguishes, marks, numbers, punctuation, apostrophes and contractions,
// CJK, emoji, U+FFFD and invalid bytes.
var splitAlphabet = []string{
	" ", " ", " ", "  ", "\t", "\t\t", "\n", "\n", "\r", "\r\n", "\v", "\f",
	"\u00a0", "\u3000", "\u2028", "\u0085", "\u200b", "\u1680",
	"a", "b", "x", "the", "Hello", "WORLD", "é", "É", "ß", "ǅ", "ʰ", "ſ",
	"日", "本語", "ひ", "Ж", "ж", "ا", "\u0301", "\u0902", "\u20dd", "İ", "K",
	"0", "1", "42", "12345", "٣", "Ⅻ", "½",
	".", ",", "!", "?", "-", "_", "/", "//", "\\", "(", ")", "{", "}", "\"", "#", "=", "*",
	"'", "'", "’", "'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'Ll", "'d", "'x", "'r", "'l",
	"🙂", "🚀", "👩\u200d👩\u200d👧", "🇩🇪", "\ufffd", "\xff", "\xe6\x97", "\xed\xa0\x80",
}

func randomSplitCase(r *rand.Rand) string {
	var sb strings.Builder
	for n := 1 + r.IntN(24); n > 0; n-- {
		sb.WriteString(splitAlphabet[r.IntN(len(splitAlphabet))])
	}
	return sb.String()
}

// TestSplitMatchesReference compares the pre-tokenizers with the reference
// on random short strings and on the mixed corpus.
func TestSplitMatchesReference(t *testing.T) {
	n := 20000
	if testing.Short() {
		n = 2000
	}
	corpus := mixedCorpus(t, 64<<10)
	for _, enc := range []Encoding{Cl100kBase, O200kBase} {
		r := rand.New(rand.NewPCG(uint64(enc), 7))
		for range n {
			checkSplit(t, enc, randomSplitCase(r))
		}
		checkSplit(t, enc, corpus)
	}
}

// quadraticMerge is byte-pair merging exactly as tiktoken writes it, for
// checking the heap merge on long pieces.
func quadraticMerge(c *Counter, p string) []uint {
	bounds := make([]int, len(p)+1)
	for i := range bounds {
		bounds[i] = i
	}
	for {
		best, at := uint32(noRank), -1
		for i := 0; i+2 < len(bounds); i++ {
			if r := c.rank(p[bounds[i]:bounds[i+2]]); r < best {
				best, at = r, i
			}
		}
		if at < 0 {
			break
		}
		bounds = slices.Delete(bounds, at+1, at+2)
	}
	var ids []uint
	for i := 0; i+1 < len(bounds); i++ {
		ids = append(ids, uint(c.rank(p[bounds[i]:bounds[i+1]])))
	}
	return ids
}

func TestMergeLargeEqualsQuadratic(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for _, enc := range []Encoding{Cl100kBase, O200kBase} {
		c := MustGet(enc)
		for i := range 300 {
			var p string
			switch i % 3 {
			case 0: // a long letter run
				p = strings.Repeat(string(rune('a'+r.IntN(26))), 1+r.IntN(300))
			case 1: // random letters
				b := make([]byte, 1+r.IntN(400))
				for j := range b {
					b[j] = byte('a' + r.IntN(26))
				}
				p = string(b)
			default: // random bytes, merged as they are
				b := make([]byte, 1+r.IntN(200))
				for j := range b {
					b[j] = byte(r.IntN(256))
				}
				p = string(b)
			}
			var got []uint
			c.mergeLarge(p, &got)
			if want := quadraticMerge(c, p); !slices.Equal(got, want) {
				t.Fatalf("%v %q: heap merge %v, tiktoken merge %v", enc, p, got, want)
			}
			if len(p) <= smallPiece {
				var small []uint
				if n := c.mergeSmall(p, &small); n != len(small) || !slices.Equal(small, got) {
					t.Fatalf("%v %q: small merge %v, heap %v", enc, p, small, got)
				}
			}
		}
	}
}

// TestWhitespaceEdgeCases pins token ids on the whitespace and line-break
// runs where backtracking decides the pieces (\s*[\r\n]+, \s+(?!\S)), on
// Unicode spaces, contractions and marks. The ids are pkoukk/tiktoken-go's.
func TestWhitespaceEdgeCases(t *testing.T) {
	cases := []struct {
		text         string
		cl100k, o200 []uint
	}{
		{"x\n\t\n\t\n", []uint{87, 198, 11367}, []uint{87, 198, 19782}},
		{"x \t\t\n\t\t\n", []uint{87, 220, 18869}, []uint{87, 220, 34055}},
		{"a\u00a0\u00a0b", []uint{64, 4194, 4194, 65}, []uint{64, 5310, 5310, 65}},
		{"\r\n\r\n  \n", []uint{881, 2355}, []uint{1414, 4066}},
		{"ab  \t", []uint{370, 19827}, []uint{378, 45469}},
		{"x\u3000\u3000y", []uint{87, 23249, 23249, 88}, []uint{87, 1397, 1397, 88}},
		{"it's", []uint{275, 596}, []uint{64190}},
		{"it'ſ", []uint{275, 6, 129, 123}, []uint{278, 6, 70067}},
		{"it'K", []uint{275, 6, 42}, []uint{278, 6, 42}},
		{"é\u0301", []uint{978, 54939}, []uint{377, 13430}},
		{"ǅungla", []uint{131, 227, 2234, 4355}, []uint{131, 227, 988, 1675}},
	}
	for _, tc := range cases {
		for _, e := range []struct {
			enc  Encoding
			want []uint
		}{{Cl100kBase, tc.cl100k}, {O200kBase, tc.o200}} {
			c := MustGet(e.enc)
			got, err := c.Encode(tc.text)
			if err != nil || !slices.Equal(got, e.want) {
				t.Errorf("%v %q: %v %v, want %v", e.enc, tc.text, got, err, e.want)
			}
			if n, _ := c.Count(tc.text); n != len(e.want) {
				t.Errorf("%v %q: Count %d, want %d", e.enc, tc.text, n, len(e.want))
			}
		}
	}
}

// TestCountAllocatesNothing: counting valid text allocates nothing, long
// pieces included (their merge memory is pooled), from a string or bytes.
func TestCountAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("sync.Pool drops items under the race detector")
	}
	text := mixedCorpus(t, 32<<10) + strings.Repeat("z", 5000) + strings.Repeat(" ", 300) + "x"
	for _, enc := range []Encoding{Cl100kBase, O200kBase} {
		c := MustGet(enc)
		want, _ := c.Count(text)
		b := []byte(text)
		allocs := testing.AllocsPerRun(20, func() {
			if n, err := c.Count(text); err != nil || n != want {
				t.Fatal(n, err)
			}
			if n, err := c.CountBytes(b); err != nil || n != want {
				t.Fatal(n, err)
			}
		})
		if allocs != 0 {
			t.Fatalf("%v: Count allocates %v times per call", enc, allocs)
		}
	}
}
