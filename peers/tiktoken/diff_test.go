package tiktoken

import (
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	tiktoken "github.com/pkoukk/tiktoken-go"
	tiktoken_loader "github.com/pkoukk/tiktoken-go-loader"

	"github.com/ocbench/ocbench/tokenize"
)

// The tokenizer differential: ocbench's tokenize package (its own
// pre-tokenizer and merge over tiktoken-go/tokenizer's compiled-in
// vocabularies) must count exactly as
// pkoukk/tiktoken-go (with its offline loader, no network) on a mixed
// corpus: prose, Go code, non-Latin scripts, emoji, whitespace runs, long
// single pieces, digits and special-token text (counted as ordinary text).

var pkoukkOnce sync.Once

func pkoukk(tb testing.TB, name string) *tiktoken.Tiktoken {
	tb.Helper()
	pkoukkOnce.Do(func() { tiktoken.SetBpeLoader(tiktoken_loader.NewOfflineLoader()) })
	enc, err := tiktoken.GetEncoding(name)
	if err != nil {
		tb.Fatal(err)
	}
	return enc
}

// mixedCorpus returns size bytes of mixed text built from the tokenize
// package's corpus, with each copy varied.
func mixedCorpus(tb testing.TB, size int) string {
	tb.Helper()
	b, err := os.ReadFile("../../tokenize/testdata/mixed.txt")
	if err != nil {
		tb.Fatal(err)
	}
	var sb strings.Builder
	for i := 0; sb.Len() < size; i++ {
		sb.WriteString("\n# block ")
		sb.WriteString(strings.Repeat("x", i%7))
		sb.WriteString("\n")
		sb.Write(b)
	}
	return strings.ToValidUTF8(sb.String()[:size], "")
}

func diffSamples(tb testing.TB) []string {
	corpus := mixedCorpus(tb, 256<<10)
	samples := []string{
		"", " ", "\n", "hello world", "Hello, World!", "  leading and trailing  ",
		"tabs\tand\r\nCRLF\r\n\r\n", "1234567890123", "3.14159 2e10 0x1F",
		"<|endoftext|> <|fim_prefix|> <|endofprompt|>",
		"don't won't I'm we'll they'd IT'S", "ÀÉÎÕÜ çñ ß ẞ", "日本語のテキスト", "Русский текст", "العربية",
		"🙂🚀✨👩‍👩‍👧‍👦 flags 🇩🇪🇯🇵", "CamelCaseIdentifierWithNumbers123And_underscores",
		strings.Repeat("_", 5000), strings.Repeat("a", 3000), strings.Repeat(" ", 1000) + "x",
		strings.Repeat("\n", 50), "func main() {\n\tfmt.Println(\"hi\")\n}\n",
		"https://example.com/path?q=1&r=[2]#frag", "a/b/c//d///e", "ALL CAPS SHOUTING and lower",
	}
	// Slices of the corpus at odd offsets, so that boundaries fall anywhere.
	sizes := []int{1, 7, 64, 500, 3000, 20000}
	for i, off := 0, 0; off < len(corpus); i, off = i+1, off+sizes[i%len(sizes)]*3+11 {
		end := min(len(corpus), off+sizes[i%len(sizes)])
		samples = append(samples, strings.ToValidUTF8(corpus[off:end], ""))
	}
	return append(samples, corpus)
}

func TestTokenizeMatchesPkoukk(t *testing.T) {
	samples := diffSamples(t)
	for _, enc := range []tokenize.Encoding{tokenize.Cl100kBase, tokenize.O200kBase} {
		ours := tokenize.MustGet(enc)
		theirs := pkoukk(t, enc.String())
		total := 0
		for i, s := range samples {
			pids := theirs.EncodeOrdinary(s) // once: under -race it is most of the test's time
			want := len(pids)
			got, err := ours.Count(s)
			if err != nil {
				t.Fatal(err)
			}
			if got != want {
				t.Fatalf("%v sample %d (%d bytes, %q…): ocbench %d tokens, pkoukk %d", enc, i, len(s), s[:min(len(s), 40)], got, want)
			}
			if par, err := ours.CountParallel(s, 4); err != nil || par != want {
				t.Fatalf("%v sample %d: parallel count %d, pkoukk %d", enc, i, par, want)
			}
			ids, _ := ours.Encode(s)
			for j := range pids {
				if int(ids[j]) != pids[j] {
					t.Fatalf("%v sample %d: token %d is %d, pkoukk %d", enc, i, j, ids[j], pids[j])
				}
			}
			total += got
		}
		t.Logf("%v: %d samples, %d tokens, all equal", enc, len(samples), total)
	}
}

// BenchmarkPeersTokenize compares counting 1 MiB of mixed text:
// ocbench tokenize (own pre-tokenizer and merge) against pkoukk/tiktoken-go.
func BenchmarkPeersTokenize(b *testing.B) {
	text := mixedCorpus(b, 1<<20)
	for _, enc := range []tokenize.Encoding{tokenize.Cl100kBase, tokenize.O200kBase} {
		b.Run("mixed-1MiB/"+enc.String()+"/ocbench", func(b *testing.B) {
			c := tokenize.MustGet(enc)
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				if _, err := c.Count(text); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("mixed-1MiB/"+enc.String()+"/pkoukk", func(b *testing.B) {
			e := pkoukk(b, enc.String())
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				_ = e.EncodeOrdinary(text)
			}
		})
	}
}

// diffAlphabet is what random differential cases are made of: every kind of
// whitespace the split patterns treat differently (ASCII, CR/LF, Unicode
// spaces), letters of each case class o200k distinguishes (Lu, Ll, Lt, Lm,
// Lo), combining marks, numbers (Nd, Nl, No), punctuation, apostrophes and
// contractions in both cases, CJK, emoji with joiners, U+FFFD and invalid
// bytes.
var diffAlphabet = []string{
	" ", " ", " ", "  ", "\t", "\t\t", "\n", "\n", "\r", "\r\n", "\v", "\f",
	"\u00a0", "\u3000", "\u2028", "\u0085", "\u200b",
	"a", "b", "x", "the", "Hello", "WORLD", "é", "É", "ß", "ǅ", "ʰ", "ſ",
	"日", "本語", "ひ", "Ж", "ж", "ا", "\u0301", "\u0902", "\u20dd", "İ", "K",
	"0", "1", "42", "12345", "٣", "Ⅻ", "½",
	".", ",", "!", "?", "-", "_", "/", "//", "\\", "(", ")", "{", "}", "\"", "#", "=", "*",
	"'", "'", "’", "'s", "'S", "'t", "'re", "'RE", "'ve", "'m", "'ll", "'Ll", "'d", "'x",
	"🙂", "🚀", "👩\u200d👩\u200d👧", "🇩🇪", "\ufffd", "\xff", "\xe6\x97", "<|endoftext|>",
}

// randomDiffCase builds a short string of alphabet pieces.
func randomDiffCase(r *rand.Rand) string {
	var sb strings.Builder
	for n := 1 + r.IntN(24); n > 0; n-- {
		sb.WriteString(diffAlphabet[r.IntN(len(diffAlphabet))])
	}
	return sb.String()
}

// TestTokenizeRandomMatchesPkoukk compares token ids, counts and parallel
// counts on thousands of short random strings per encoding and on long
// texts of random lines (long enough for CountParallel to cut them); the
// benchmark input is TestAgree's.
func TestTokenizeRandomMatchesPkoukk(t *testing.T) {
	cases := 6000
	if testing.Short() {
		cases = 600
	}
	for _, enc := range []tokenize.Encoding{tokenize.Cl100kBase, tokenize.O200kBase} {
		ours := tokenize.MustGet(enc)
		theirs := pkoukk(t, enc.String())
		r := rand.New(rand.NewPCG(uint64(enc), 2026))
		inputs := make([]string, 0, cases+1)
		for range cases {
			inputs = append(inputs, randomDiffCase(r))
		}
		// Long texts of random lines: CountParallel cuts these into chunks.
		for range 2 {
			var sb strings.Builder
			for sb.Len() < 160<<10 {
				sb.WriteString(randomDiffCase(r))
				sb.WriteString("\n")
			}
			inputs = append(inputs, sb.String())
		}
		for _, s := range inputs {
			want := theirs.EncodeOrdinary(s)
			got, err := ours.Encode(s)
			if err != nil {
				t.Fatal(err)
			}
			if !sameIDs(got, want) {
				t.Fatalf("%v %q: ocbench %v, pkoukk %v", enc, clip(s), clipIDs(got), clipIDs(want))
			}
			if n, err := ours.Count(s); err != nil || n != len(want) {
				t.Fatalf("%v %q: Count %d %v, pkoukk %d", enc, clip(s), n, err, len(want))
			}
			if n, err := ours.CountParallel(s, 4); err != nil || n != len(want) {
				t.Fatalf("%v %q: CountParallel %d %v, pkoukk %d", enc, clip(s), n, err, len(want))
			}
		}
	}
}

func sameIDs(a []uint, b []int) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if int(a[i]) != b[i] {
			return false
		}
	}
	return true
}

func clip(s string) string { return s[:min(len(s), 200)] }

func clipIDs[T any](ids []T) []T { return ids[:min(len(ids), 60)] }
