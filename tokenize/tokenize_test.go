package tokenize

import (
	"encoding/json"
	"errors"
	"os"
	"strings"
	"sync"
	"testing"
	"unicode"
	"unicode/utf8"
)

func mixedCorpus(tb testing.TB, size int) string {
	tb.Helper()
	b, err := os.ReadFile("testdata/mixed.txt")
	if err != nil {
		tb.Fatal(err)
	}
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		// Vary each copy a little so the text is not a pure repetition.
		sb.WriteString("\n# block ")
		sb.WriteString(strings.Repeat("x", i%7))
		sb.WriteString("\n")
		sb.Write(b)
	}
	s := sb.String()[:size]
	return strings.ToValidUTF8(s, "")
}

func TestKnownCounts(t *testing.T) {
	// Counts from tiktoken's own documentation and test suite.
	cases := []struct {
		enc  Encoding
		text string
		want int
	}{
		{Cl100kBase, "hello world", 2},
		{O200kBase, "hello world", 2},
		{Cl100kBase, "tiktoken is great!", 6},
		{Cl100kBase, "", 0},
		{Cl100kBase, "<|endoftext|>", 7},
	}
	for _, c := range cases {
		n, err := MustGet(c.enc).Count(c.text)
		if err != nil {
			t.Fatal(err)
		}
		if n != c.want {
			t.Errorf("%v %q: %d tokens, want %d", c.enc, c.text, n, c.want)
		}
	}
}

func TestParseEncoding(t *testing.T) {
	for _, s := range []string{"cl100k_base", "o200k_base"} {
		e, err := ParseEncoding(s)
		if err != nil || e.String() != s {
			t.Errorf("%s: %v %v", s, e, err)
		}
	}
	if _, err := ParseEncoding("p99"); !errors.Is(err, ErrUnknownEncoding) {
		t.Errorf("err = %v", err)
	}
	if _, err := Get(Encoding(9)); !errors.Is(err, ErrUnknownEncoding) {
		t.Errorf("err = %v", err)
	}
}

func TestLongPieceIsNotQuadratic(t *testing.T) {
	s := strings.Repeat("_", 20000)
	n, err := MustGet(Cl100kBase).Count(s)
	if err != nil || n != 313 {
		t.Fatalf("got %d %v, want 313", n, err)
	}
}

func TestEstimate(t *testing.T) {
	for _, c := range []struct{ chars, want int }{{0, 0}, {1, 1}, {4, 1}, {5, 2}, {8, 2}, {4803, 1201}} {
		if got := Estimate(c.chars); got != c.want {
			t.Errorf("Estimate(%d) = %d, want %d", c.chars, got, c.want)
		}
	}
	for _, c := range []struct{ in, want int }{{0, 0}, {1, 2}, {5, 6}, {10, 12}, {100, 120}, {101, 122}} {
		if got := WithSafety(c.in); got != c.want {
			t.Errorf("WithSafety(%d) = %d, want %d", c.in, got, c.want)
		}
	}
	if n := UTF16Len("a😀é"); n != 4 {
		t.Errorf("UTF16Len = %d", n)
	}
}

// TestEstimateTokensCases runs every estimateTokens case of the spec.
func TestEstimateTokensCases(t *testing.T) {
	raw, err := os.ReadFile("../testdata/spec/prompt-cases.json")
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		EstimateTokens []struct {
			Input    json.RawMessage `json:"input"`
			Expected int             `json:"expected"`
		} `json:"estimateTokens"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.EstimateTokens) == 0 {
		t.Fatal("no cases")
	}
	for i, c := range doc.EstimateTokens {
		got, err := EstimateMessageJSON(c.Input)
		if err != nil {
			t.Fatalf("case %d: %v", i, err)
		}
		if got != c.Expected {
			t.Errorf("case %d %s: %d, want %d", i, c.Input, got, c.Expected)
		}
	}
	if _, err := EstimateMessageJSON([]byte(`[1]`)); !errors.Is(err, ErrEstimateInput) {
		t.Errorf("array: %v", err)
	}
	if _, err := EstimateMessageJSON([]byte(`{"role":`)); !errors.Is(err, ErrEstimateInput) {
		t.Errorf("truncated: %v", err)
	}
	if n, _ := EstimateMessageJSON([]byte(`{"role":"system","content":"a long system prompt"}`)); n != 0 {
		t.Errorf("system counts %d, want 0 (pi quirk)", n)
	}
}

func TestCache(t *testing.T) {
	c := NewCache(MustGet(O200kBase), 32)
	text := mixedCorpus(t, 4096)
	want, _ := c.Counter().Count(text)
	for i := 0; i < 3; i++ {
		got, err := c.Count(text)
		if err != nil || got != want {
			t.Fatalf("got %d %v want %d", got, err, want)
		}
	}
	st := c.Stats()
	if st.Hits != 2 || st.Misses != 1 {
		t.Fatalf("stats %+v", st)
	}
	// Bounded: many distinct texts never exceed the bound.
	for i := 0; i < 500; i++ {
		if _, err := c.Count(strings.Repeat("a ", i)); err != nil {
			t.Fatal(err)
		}
	}
	if st := c.Stats(); st.Entries > 32 || st.Resets == 0 {
		t.Fatalf("unbounded: %+v", st)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if _, err := c.Count(text); err != nil {
			t.Fatal(err)
		}
	})
	if allocs != 0 {
		t.Fatalf("cached count allocates %v", allocs)
	}
}

func TestCacheConcurrent(t *testing.T) {
	c := NewCache(MustGet(Cl100kBase), 64)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func(g int) {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				s := strings.Repeat(" word", (i+g)%40)
				n, err := c.Count(s)
				if err != nil || n != (i+g)%40 {
					t.Errorf("%q: %d %v", s, n, err)
					return
				}
			}
		}(g)
	}
	wg.Wait()
}

// FuzzCount is differential: the pieces of both pre-tokenizers must equal
// those of the reference (Go's regexp with tiktoken's split patterns, see
// split_test.go), the count must equal the sum over those pieces, and the
// cache and Encode must agree with Count.
func FuzzCount(f *testing.F) {
	f.Add("hello world")
	f.Add("\xff\xfe invalid utf8")
	f.Add(strings.Repeat(" ", 100) + "x")
	f.Add("x\n\t\n\t\n")
	f.Add("x \t\t\n\t\t\n")
	f.Add("It'S ǅungla\u0301 \u3000\u3000 12345 ’'ll")
	caches := map[Encoding]*Cache{}
	for _, enc := range []Encoding{Cl100kBase, O200kBase} {
		caches[enc] = NewCache(MustGet(enc), 64)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for enc, cache := range caches {
			c := cache.Counter()
			checkSplit(t, enc, s)
			want := 0
			start := 0
			for _, e := range refPieces(enc, s) {
				want += c.piece(s[start:e], nil)
				start = e
			}
			n, err := c.Count(s)
			if err != nil || n != want {
				t.Fatalf("%v: Count %d %v, reference pieces give %d", enc, n, err, want)
			}
			if m, _ := cache.Count(s); m != n {
				t.Fatalf("%v: cache %d != %d", enc, m, n)
			}
			if ids, _ := c.Encode(s); len(ids) != n {
				t.Fatalf("%v: Encode gives %d ids, Count %d", enc, len(ids), n)
			}
			if len(s) > 0 && n == 0 {
				t.Fatalf("non-empty text counted 0 tokens")
			}
			if utf8.ValidString(s) && n > len(s) {
				t.Fatalf("%d tokens for %d bytes", n, len(s))
			}
		}
	})
}

func TestCountParallelExact(t *testing.T) {
	text := mixedCorpus(t, 200<<10)
	for _, enc := range []Encoding{Cl100kBase, O200kBase} {
		c := MustGet(enc)
		want, _ := c.Count(text)
		for _, w := range []int{0, 3} {
			got, err := c.CountParallel(text, w)
			if err != nil || got != want {
				t.Fatalf("%v workers=%d: %d %v, want %d", enc, w, got, err, want)
			}
		}
	}
	// Every cut is after '\n' and before a letter, and nothing is lost.
	chunks := splitForCount(text, 10000)
	if strings.Join(chunks, "") != text || len(chunks) < 10 {
		t.Fatalf("%d chunks", len(chunks))
	}
	for _, ch := range chunks[1:] {
		if r := []rune(ch[:4])[0]; !unicode.IsLetter(r) {
			t.Fatalf("chunk starts with %q", r)
		}
	}
}

// FuzzCountParallel: counting the chunks CountParallel cuts gives the count
// of the whole text, for both encodings.
func FuzzCountParallel(f *testing.F) {
	f.Add("a\nb\nc d\n\n  e\nf", 2)
	f.Add("x\n\u00e9t\u00e9\n\tTab\nZ", 1)
	f.Add("x \t\t\n\t\t\nab\n\u0301c\n'sd\r\nE", 1)
	f.Fuzz(func(t *testing.T, s string, size int) {
		size = 1 + abs(size)%64
		for _, enc := range []Encoding{Cl100kBase, O200kBase} {
			c := MustGet(enc)
			want, err := c.Count(s)
			if err != nil {
				t.Fatal(err)
			}
			sum := 0
			for _, ch := range splitForCount(s, size) {
				n, _ := c.Count(ch)
				sum += n
			}
			if sum != want {
				t.Fatalf("%v: split count %d != %d for %q", enc, sum, want, s)
			}
		}
	})
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// TestNoPeerInLibraryGraph: the reference tokenizer is only compared with
// in the separate peers module; the library's go.mod never names it.
func TestNoPeerInLibraryGraph(t *testing.T) {
	b, err := os.ReadFile("../go.mod")
	if err != nil {
		t.Fatal(err)
	}
	// The loader (pkoukk/tiktoken-go-loader: the vocabulary files as
	// go:embed data) is linked; the tokenizer compared against is not.
	if strings.Contains(string(b), "pkoukk/tiktoken-go ") {
		t.Fatal("pkoukk/tiktoken-go entered the library's go.mod")
	}
}

// FuzzEstimateMessageJSON: any input gives an estimate or ErrEstimateInput.
func FuzzEstimateMessageJSON(f *testing.F) {
	f.Add([]byte(`{"role":"user","content":"abcd","timestamp":1}`))
	f.Add([]byte(`{"role":"assistant","content":[{"type":"toolCall","id":"x","name":"read","arguments":{"path":"a"}}]}`))
	f.Add([]byte(`{"role":"toolResult","content":[{"type":"text","text":"xyz"},{"type":"image","data":"","mimeType":"image/png"}]}`))
	f.Add([]byte(`{"role":"compactionSummary","summary":"xxxxxxxxxx"}`))
	f.Add([]byte(`[`))
	f.Fuzz(func(t *testing.T, b []byte) {
		n, err := EstimateMessageJSON(b)
		if err != nil {
			if !errors.Is(err, ErrEstimateInput) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if n < 0 || n > len(b)+ImageChars*len(b) {
			t.Fatalf("estimate %d for %d bytes", n, len(b))
		}
	})
}

// utf16LenRunes is UTF16Len the plain way, rune by rune (a surrogate's
// three-byte form is one rune).
func utf16LenRunes(s string) int {
	n := 0
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		if size == 1 && i+3 <= len(s) && s[i] == 0xED && s[i+1] >= 0xA0 && s[i+1] <= 0xBF && s[i+2] >= 0x80 && s[i+2] <= 0xBF {
			size = 3
		}
		n++
		if r >= 0x10000 {
			n++
		}
		i += size
	}
	return n
}

// FuzzUTF16Len holds the word-at-a-time count to the rune-by-rune one,
// invalid bytes and runes across a word boundary included.
func FuzzUTF16Len(f *testing.F) {
	for _, s := range []string{"", "a", "abcdefgh", "abcdefgh😀", "abcdefg😀h", "é", "\xff\xfeabcdefghij", "abcdefg\xe2\x82", "😀😀😀", "abcdefghabcdefgh\xed\xa0\x80"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := UTF16Len(s), utf16LenRunes(s); got != want {
			t.Fatalf("UTF16Len(%q) = %d, want %d", s, got, want)
		}
		if got, want := UTF16LenBytes([]byte(s)), utf16LenRunes(s); got != want {
			t.Fatalf("UTF16LenBytes(%q) = %d, want %d", s, got, want)
		}
	})
}

// TestEstimateLoneSurrogates: a lone surrogate escape in a transcript is one
// UTF-16 unit, as JSON.parse gives it (fastjson alone reads it as its six
// characters); a pair is two.
func TestEstimateLoneSurrogates(t *testing.T) {
	lone := `{"role":"user","content":"` + strings.Repeat(`\ud800`, 8) + `"}`
	pair := `{"role":"user","content":"` + strings.Repeat(`\ud83d\ude00`, 8) + `"}`
	if n, err := EstimateMessageJSON([]byte(lone)); err != nil || n != 2 {
		t.Errorf("8 lone surrogates: %d tokens (%v), want 2", n, err)
	}
	if n, err := EstimateMessageJSON([]byte(pair)); err != nil || n != 4 {
		t.Errorf("8 pairs: %d tokens (%v), want 4", n, err)
	}
}
