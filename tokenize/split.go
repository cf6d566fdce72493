package tokenize

import (
	"unicode"
	"unicode/utf8"
)

// The pre-tokenizers: hand-written scanners that cut text into exactly the
// pieces tiktoken's split regular expressions produce, as a backtracking
// engine (regexp2, the engine of the reference Go ports) evaluates them:
// alternatives in order, greedy quantifiers, leftmost match, and the
// backtracking of \s*[\r\n]+ and \s+(?!\S). Invalid UTF-8 is read one byte
// at a time as U+FFFD, as a []rune conversion does.
//
// cl100k_base:
//
//	(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}|
//	 ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
//
// o200k_base:
//
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	[^\r\n\p{L}\p{N}]?[\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*(?i:'s|'t|'re|'ve|'m|'ll|'d)?|
//	\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+

// Character class flags. \s is unicode.IsSpace (split into fSpace and
// fCRLF), \p{L} fL, \p{N} fN; fUp is [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}] and
// fLow is [\p{Ll}\p{Lm}\p{Lo}\p{M}] (o200k's case classes).
const (
	fSpace uint8 = 1 << iota // \s other than \r and \n
	fCRLF                    // \r or \n
	fL                       // \p{L}
	fN                       // \p{N}
	fUp                      // Lu Lt Lm Lo M
	fLow                     // Ll Lm Lo M

	fWhite = fSpace | fCRLF
	// A character of [^\s\p{L}\p{N}] has none of these.
	fNotOther = fWhite | fL | fN
)

var asciiClass [utf8.RuneSelf]uint8

func init() {
	for r := rune(0); r < utf8.RuneSelf; r++ {
		asciiClass[r] = classify(r)
	}
}

// classify returns the class flags of r.
func classify(r rune) uint8 {
	switch {
	case r == '\r' || r == '\n':
		return fCRLF
	case unicode.IsSpace(r):
		return fSpace
	case unicode.IsLetter(r):
		switch {
		case unicode.Is(unicode.Ll, r):
			return fL | fLow
		case unicode.Is(unicode.Lu, r) || unicode.Is(unicode.Lt, r):
			return fL | fUp
		default: // Lm, Lo
			return fL | fUp | fLow
		}
	case unicode.IsMark(r):
		return fUp | fLow
	case unicode.IsNumber(r):
		return fN
	}
	return 0
}

// classAt returns the class of the character at s[i] and its width in
// bytes; an invalid byte is one U+FFFD (class 0).
func classAt(s string, i int) (uint8, int) {
	if c := s[i]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeRuneInString(s[i:])
	return classify(r), n
}

// classBefore returns the class and width of the character ending at s[i].
// It is only used inside runs of valid letters and marks.
func classBefore(s string, i int) (uint8, int) {
	if c := s[i-1]; c < utf8.RuneSelf {
		return asciiClass[c], 1
	}
	r, n := utf8.DecodeLastRuneInString(s[:i])
	return classify(r), n
}

// contraction returns the end of (?i:'s|'t|'re|'ve|'m|'ll|'d) at s[i], or
// -1. Only ASCII letters lower-case to these letters, so the case folding
// is exact on bytes.
func contraction(s string, i int) int {
	if i+1 >= len(s) || s[i] != '\'' {
		return -1
	}
	switch s[i+1] | 0x20 {
	case 's', 't', 'm', 'd':
		return i + 2
	case 'r', 'v':
		if i+2 < len(s) && s[i+2]|0x20 == 'e' {
			return i + 3
		}
	case 'l':
		if i+2 < len(s) && s[i+2]|0x20 == 'l' {
			return i + 3
		}
	}
	return -1
}

// runOf returns the end of the run of characters with any flag of mask
// starting at s[i].
func runOf(s string, i int, mask uint8) int {
	for i < len(s) {
		if c := s[i]; c < utf8.RuneSelf {
			if asciiClass[c]&mask == 0 {
				return i
			}
			i++
			continue
		}
		f, n := classAt(s, i)
		if f&mask == 0 {
			return i
		}
		i += n
	}
	return i
}

// whitespace implements \s*[\r\n]+|\s+(?!\S)|\s+ at s[i], a whitespace
// character.
func whitespace(s string, i int) int {
	j, lastNL, lastStart := i, -1, i
	for j < len(s) {
		f, n := classAt(s, j)
		if f&fWhite == 0 {
			break
		}
		if f&fCRLF != 0 {
			lastNL = j
		}
		lastStart = j
		j += n
	}
	if lastNL >= 0 {
		// \s* backs off to the last line break; [\r\n]+ takes it and
		// stops at the following non-break whitespace (or the run's end).
		return lastNL + 1
	}
	if j == len(s) || lastStart == i {
		// \s+(?!\S) at the end of the text, or \s+ for a single
		// character before a non-space.
		return j
	}
	// \s+(?!\S): leave the last whitespace character to the next piece.
	return lastStart
}

// punct implements ` ?[^\s\p{L}\p{N}]+` followed by a run of the bytes in
// tail ([\r\n]* or [\r\n/]*), or returns -1.
func punct(s string, i int, slash bool) int {
	j := i
	if s[j] == ' ' {
		j++
		if j == len(s) {
			return -1
		}
	}
	f, n := classAt(s, j)
	if f&fNotOther != 0 {
		return -1
	}
	j = runNotOther(s, j+n)
	for j < len(s) && (s[j] == '\r' || s[j] == '\n' || (slash && s[j] == '/')) {
		j++
	}
	return j
}

// runNotOther returns the end of the run of [^\s\p{L}\p{N}] at s[i].
func runNotOther(s string, i int) int {
	for i < len(s) {
		f, n := classAt(s, i)
		if f&fNotOther != 0 {
			return i
		}
		i += n
	}
	return i
}

// digits implements \p{N}{1,3} at s[i], a number.
func digits(s string, i, n int) int {
	j := i + n
	for k := 0; k < 2 && j < len(s); k++ {
		f, m := classAt(s, j)
		if f&fN == 0 {
			break
		}
		j += m
	}
	return j
}

// nextCl100k returns the end of the cl100k_base piece starting at s[i].
func nextCl100k(s string, i int) int {
	if s[i] == '\'' {
		if e := contraction(s, i); e >= 0 {
			return e
		}
	}
	f, n := classAt(s, i)
	switch {
	case f&fL != 0:
		return runOf(s, i+n, fL)
	case f&(fCRLF|fN) == 0 && i+n < len(s):
		// [^\r\n\p{L}\p{N}]\p{L}+
		if g, m := classAt(s, i+n); g&fL != 0 {
			return runOf(s, i+n+m, fL)
		}
	}
	if f&fN != 0 {
		return digits(s, i, n)
	}
	if e := punct(s, i, false); e >= 0 {
		return e
	}
	if f&fWhite != 0 {
		return whitespace(s, i)
	}
	// Unreachable: every character is a letter, number, space or other.
	return i + n
}

// o200kUpLow implements [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]*[\p{Ll}\p{Lm}\p{Lo}\p{M}]+
// at s[p] with its backtracking, and the optional contraction; -1 if it
// does not match.
func o200kUpLow(s string, p int) int {
	u := runOf(s, p, fUp)
	e := -1
	if u < len(s) {
		if f, _ := classAt(s, u); f&fLow != 0 {
			e = runOf(s, u, fLow)
		}
	}
	if e < 0 {
		// Give back upper-class characters one at a time until one of
		// them also is lower-class (Lm, Lo, M); the ones after it are
		// not, so the lower run is that single character.
		for q := u; q > p; {
			f, n := classBefore(s, q)
			q -= n
			if f&fLow != 0 {
				e = q + n
				break
			}
		}
		if e < 0 {
			return -1
		}
	}
	if c := contraction(s, e); c >= 0 {
		return c
	}
	return e
}

// o200kUpThenLow implements [\p{Lu}\p{Lt}\p{Lm}\p{Lo}\p{M}]+[\p{Ll}\p{Lm}\p{Lo}\p{M}]*
// at s[p] and the optional contraction; -1 if it does not match.
func o200kUpThenLow(s string, p int) int {
	if p >= len(s) {
		return -1
	}
	if f, _ := classAt(s, p); f&fUp == 0 {
		return -1
	}
	e := runOf(s, runOf(s, p, fUp), fLow)
	if c := contraction(s, e); c >= 0 {
		return c
	}
	return e
}

// nextO200k returns the end of the o200k_base piece starting at s[i].
func nextO200k(s string, i int) int {
	f, n := classAt(s, i)
	prefix := f&(fCRLF|fL|fN) == 0
	if f&(fUp|fLow) != 0 || prefix {
		if prefix && i+n < len(s) {
			if e := o200kUpLow(s, i+n); e >= 0 {
				return e
			}
		}
		if f&(fUp|fLow) != 0 {
			if e := o200kUpLow(s, i); e >= 0 {
				return e
			}
		}
		if prefix {
			if e := o200kUpThenLow(s, i+n); e >= 0 {
				return e
			}
		}
		if e := o200kUpThenLow(s, i); e >= 0 {
			return e
		}
	}
	if f&fN != 0 {
		return digits(s, i, n)
	}
	if e := punct(s, i, true); e >= 0 {
		return e
	}
	if f&fWhite != 0 {
		return whitespace(s, i)
	}
	return i + n
}
