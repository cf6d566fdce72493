// Package redact removes secrets from text before it leaves the process
// or reaches a file: error messages, log lines, events, transcript
// entries, payload logs, proxied error bodies. It replaces with
// [REDACTED]:
//
//   - the literal values of configured secrets (API keys), wherever they
//     appear, also in their JSON-escaped (with and without HTML escaping,
//     ASCII-only, and doubly escaped) and URL-encoded forms, so that an
//     upstream echoing the key inside a JSON error body is caught;
//   - key-shaped tokens after a known prefix (sk-, sk_, xai-, gsk_, AIza,
//     ghp_, github_pat_, hf_, pk-; at least 16 characters after it) and the
//     credential after "Bearer " or "Basic " (at least 8 characters), which
//     catch keys that were not configured.
//
// It also classifies environment variable names that hold secrets
// (IsSecretEnvName), which the exec tool uses to scrub its environment and
// FromEnviron uses to collect the values to redact.
//
// The package depends on nothing but the standard library, so any layer
// may import it. It does not decide what to redact where (the callers do)
// and cannot redact a secret split across two separately redacted pieces
// (Writer holds back a tail for that in streams).
package redact

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"
)

// Marker replaces every redacted secret.
const Marker = "[REDACTED]"

// MinSecretLen is the shortest configured value redacted literally: a
// shorter "key" (a test's "k") would turn every occurrence of a common
// string into the marker. Key-shaped tokens are still caught by pattern.
const MinSecretLen = 8

// secretPrefixes start API-key-shaped tokens.
var secretPrefixes = [...]string{"sk-", "sk_", "xai-", "gsk_", "AIza", "ghp_", "github_pat_", "hf_", "pk-"}

// authSchemes precede a credential in an Authorization header.
var authSchemes = [...]string{"Bearer ", "bearer ", "Basic ", "basic "}

// Redactor redacts a fixed set of secrets plus the key-shaped patterns. It
// is immutable after New and safe for concurrent use. A nil *Redactor
// redacts the patterns only.
type Redactor struct {
	needles [][]byte // literal forms, longest first
	heads   []uint32 // the distinct first 4 bytes of the needles
	starts  startTable
	maxLen  int
	newline bool // a literal form contains '\n'
}

// startTable marks, for each byte, the secrets that may start with it:
// startLiteral a configured value's form, startPattern a key prefix or an
// authorization scheme (which must also start a word). index looks each
// byte up once; most bytes of a text are marked neither.
type startTable [256]uint8

const (
	startLiteral = 1 << iota
	startPattern
)

// patternStarts is the table of a Redactor without literals (and of nil).
var patternStarts = func() (t startTable) {
	for _, p := range secretPrefixes {
		t[p[0]] |= startPattern
	}
	for _, p := range authSchemes {
		t[p[0]] |= startPattern
	}
	return t
}()

// tokenBytes marks the bytes isTokenByte accepts.
var tokenBytes = func() (t [256]bool) {
	for c := range t {
		t[c] = c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.'
	}
	return t
}()

// New returns a Redactor for the given secret values. Empty values and
// values shorter than MinSecretLen are ignored; duplicates are merged.
func New(secrets ...string) *Redactor {
	r := &Redactor{starts: patternStarts}
	for _, s := range secrets {
		r.add(s)
	}
	slices.SortFunc(r.needles, func(a, b []byte) int { return len(b) - len(a) })
	for _, n := range r.needles {
		r.starts[n[0]] |= startLiteral
		if h := binary.LittleEndian.Uint32(n); !slices.Contains(r.heads, h) {
			r.heads = append(r.heads, h)
		}
		r.maxLen = max(r.maxLen, len(n))
		r.newline = r.newline || bytes.IndexByte(n, '\n') >= 0
	}
	for _, p := range secretPrefixes {
		r.maxLen = max(r.maxLen, len(p)+64)
	}
	return r
}

func (r *Redactor) add(s string) {
	if len(s) < MinSecretLen {
		return
	}
	forms := []string{s, url.QueryEscape(s), url.PathEscape(s)}
	// JSON-escaped once (Go's HTML-escaping default, plain, ASCII-only)
	// and twice (a JSON body quoted inside another JSON string).
	for _, once := range [...]string{jsonEscape(s, false, false), jsonEscape(s, true, false), jsonEscape(s, false, true)} {
		forms = append(forms, once, jsonEscape(once, false, false), jsonEscape(once, true, false))
	}
	for _, f := range forms {
		if !slices.ContainsFunc(r.needles, func(n []byte) bool { return string(n) == f }) {
			r.needles = append(r.needles, []byte(f))
		}
	}
}

// jsonEscape returns the body of s as a JSON string (no quotes): html
// escapes <, > and & as \u003c… (Go's encoding/json default), ascii
// escapes every non-ASCII rune as \uXXXX (Python's json.dumps default).
func jsonEscape(s string, html, ascii bool) string {
	var b strings.Builder
	for _, c := range s {
		switch {
		case c == '"':
			b.WriteString(`\"`)
		case c == '\\':
			b.WriteString(`\\`)
		case c == '\n':
			b.WriteString(`\n`)
		case c == '\r':
			b.WriteString(`\r`)
		case c == '\t':
			b.WriteString(`\t`)
		case c < 0x20, html && (c == '<' || c == '>' || c == '&'), c == 0x2028 || c == 0x2029:
			writeU(&b, c)
		case ascii && c > 0x7e:
			if c > 0xffff {
				r1, r2 := utf16Pair(c)
				writeU(&b, r1)
				writeU(&b, r2)
			} else {
				writeU(&b, c)
			}
		default:
			b.WriteRune(c)
		}
	}
	return b.String()
}

func writeU(b *strings.Builder, c rune) {
	h := strconv.FormatInt(int64(c), 16)
	b.WriteString(`\u`)
	b.WriteString(strings.Repeat("0", 4-len(h)))
	b.WriteString(h)
}

func utf16Pair(c rune) (rune, rune) {
	c -= 0x10000
	return 0xd800 + (c>>10)&0x3ff, 0xdc00 + c&0x3ff
}

func isTokenByte(c byte) bool { return tokenBytes[c] }

// match returns the length of the secret that starts s at position i of
// the whole text (atWord: the previous byte is not a token byte), or 0.
func (r *Redactor) match(s []byte, atWord bool) int {
	// Every form is at least MinSecretLen bytes long, so its first 4
	// bytes are one of heads: most candidates stop at that check.
	if r != nil && r.starts[s[0]]&startLiteral != 0 && len(s) >= MinSecretLen &&
		slices.Contains(r.heads, binary.LittleEndian.Uint32(s)) {
		for _, n := range r.needles {
			if bytes.HasPrefix(s, n) {
				return len(n)
			}
		}
	}
	if !atWord || len(s) < 2 {
		return 0
	}
	// The first two bytes rule out almost every word before a prefix is
	// compared whole.
	switch s[0] {
	case 'B', 'b':
		for _, p := range authSchemes {
			if p[0] == s[0] && p[1] == s[1] && bytes.HasPrefix(s, []byte(p)) {
				n := len(p)
				for n < len(s) && (isTokenByte(s[n]) || s[n] == '+' || s[n] == '/' || s[n] == '=') {
					n++
				}
				if n-len(p) >= 8 {
					return n
				}
				return 0
			}
		}
	case 's', 'x', 'g', 'A', 'h', 'p':
		for _, p := range secretPrefixes {
			if p[0] == s[0] && p[1] == s[1] && bytes.HasPrefix(s, []byte(p)) {
				n := len(p)
				for n < len(s) && isTokenByte(s[n]) {
					n++
				}
				if n-len(p) >= 16 {
					return n
				}
			}
		}
	}
	return 0
}

// index returns the position and length of the first secret in s, or -1.
func (r *Redactor) index(s []byte) (int, int) {
	starts := &patternStarts
	if r != nil {
		starts = &r.starts
	}
	// Fast path: 8 bytes at a time while none of them is marked (most of
	// a text without those letters, or not in Latin script). Past the
	// first run with a marked byte, the rest goes byte by byte: in prose,
	// where most runs have one, trying again would cost more than it saves.
	// 16 bytes a step, read through a pointer (i+16 <= len(s) bounds
	// them): the loop's own instructions and bounds checks are a fifth of
	// its cost otherwise. The last 8 to 15 go 8 at a time.
	i := 0
	if len(s) >= 8 {
		p := unsafe.Pointer(unsafe.SliceData(s))
		for ; i+16 <= len(s); i += 16 {
			w := (*[16]byte)(unsafe.Add(p, i))
			if starts[w[0]]|starts[w[1]]|starts[w[2]]|starts[w[3]]|starts[w[4]]|starts[w[5]]|starts[w[6]]|starts[w[7]]|
				starts[w[8]]|starts[w[9]]|starts[w[10]]|starts[w[11]]|starts[w[12]]|starts[w[13]]|starts[w[14]]|starts[w[15]] != 0 {
				break
			}
		}
		if i+8 <= len(s) {
			w := (*[8]byte)(unsafe.Add(p, i))
			if starts[w[0]]|starts[w[1]]|starts[w[2]]|starts[w[3]]|starts[w[4]]|starts[w[5]]|starts[w[6]]|starts[w[7]] == 0 {
				i += 8
			}
		}
	}
	for ; i < len(s); i++ {
		c := s[i]
		f := starts[c]
		if f == 0 {
			continue
		}
		// Reject here, without calling match, what match would reject
		// at its first test: a literal candidate whose first 4 bytes
		// start no form, a pattern candidate inside a word or whose first
		// 2 bytes start no key prefix or scheme.
		atWord := i == 0 || !tokenBytes[s[i-1]]
		lit := f&startLiteral != 0 && len(s)-i >= MinSecretLen && r.hasHead(s[i:])
		if !lit && (f&startPattern == 0 || !atWord || len(s)-i < 2 || !patternPairs.has(c, s[i+1])) {
			continue
		}
		if n := r.match(s[i:], atWord); n > 0 {
			return i, n
		}
	}
	return -1, 0
}

// hasHead reports whether the first 4 bytes of s (at least 4 long) are
// the first 4 of a literal form.
func (r *Redactor) hasHead(s []byte) bool {
	h := binary.LittleEndian.Uint32(s)
	for _, x := range r.heads {
		if x == h {
			return true
		}
	}
	return false
}

// pairSet is a set of byte pairs.
type pairSet [256 * 256 / 64]uint64

func (p *pairSet) add(a, b byte) {
	k := uint(a)<<8 | uint(b)
	p[k/64] |= 1 << (k % 64)
}

func (p *pairSet) has(a, b byte) bool {
	k := uint(a)<<8 | uint(b)
	return p[k/64]&(1<<(k%64)) != 0
}

// patternPairs holds the first two bytes of every key prefix and
// authorization scheme.
var patternPairs = func() (p pairSet) {
	for _, x := range secretPrefixes {
		p.add(x[0], x[1])
	}
	for _, x := range authSchemes {
		p.add(x[0], x[1])
	}
	return p
}()

// Append appends s to dst with every secret replaced by Marker.
func (r *Redactor) Append(dst, s []byte) []byte {
	for {
		i, n := r.index(s)
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, Marker...)
		s = s[i+n:]
	}
}

// unsafeBytes views s as bytes for reading only.
func unsafeBytes(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// minMatch is the length of the shortest text index can match: a
// literal form is at least MinSecretLen bytes long, a key prefix takes 16
// more bytes and an authorization scheme 8 more. Contains, String and
// Bytes answer a shorter text (a tool's "ok", an empty field) without
// scanning it, in the caller.
const minMatch = MinSecretLen

// Contains reports whether s holds a secret.
func (r *Redactor) Contains(s string) bool {
	if len(s) < minMatch {
		return false
	}
	i, _ := r.index(unsafeBytes(s))
	return i >= 0
}

// String returns s with every secret replaced by Marker; s itself (no
// allocation) when it holds none.
func (r *Redactor) String(s string) string {
	if len(s) < minMatch {
		return s
	}
	return r.redactString(s)
}

func (r *Redactor) redactString(s string) string {
	b := unsafeBytes(s)
	i, _ := r.index(b)
	if i < 0 {
		return s
	}
	out := make([]byte, 0, len(s))
	return string(r.Append(out, b))
}

// Bytes returns b with every secret replaced by Marker: b itself when it
// holds none, else a new slice.
func (r *Redactor) Bytes(b []byte) []byte {
	if len(b) < minMatch {
		return b
	}
	return r.redactBytes(b)
}

func (r *Redactor) redactBytes(b []byte) []byte {
	if i, _ := r.index(b); i < 0 {
		return b
	}
	return r.Append(make([]byte, 0, len(b)), b)
}

// Error is an error whose message was redacted. It unwraps to the
// original, so errors.Is and errors.As still match; code that prints the
// fields of an unwrapped error must redact them itself.
type Error struct {
	msg string
	err error
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }

// Error returns err with its message redacted: err itself when its message
// holds no secret, nil for nil.
func (r *Redactor) Error(err error) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	red := r.String(msg)
	if red == msg {
		return err
	}
	var re *Error
	if errors.As(err, &re) && re == err {
		return &Error{msg: red, err: re.err}
	}
	return &Error{msg: red, err: err}
}

// MaxSecretLen bounds the length of what the Redactor matches (the longest
// literal form, or a prefix token it still recognises as one piece):
// Writer holds back one byte less than this.
func (r *Redactor) MaxSecretLen() int {
	if r == nil {
		return New().maxLen
	}
	return r.maxLen
}

// IsSecretEnvName reports whether an environment variable of this name
// holds a secret: its name contains KEY, TOKEN, SECRET, PASSWORD, PASSWD,
// CREDENTIAL, PRIVATE or COOKIE, or ends in AUTH (any case). The
// exec tool leaves such variables out of a command's environment.
func IsSecretEnvName(name string) bool {
	u := strings.ToUpper(name)
	for _, w := range [...]string{"KEY", "TOKEN", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "PRIVATE", "COOKIE"} {
		if strings.Contains(u, w) {
			return true
		}
	}
	return strings.HasSuffix(u, "AUTH")
}

// FromEnviron returns the values of the secret variables of environ
// (KEY=value entries, as os.Environ gives them) that are long enough to be
// redacted literally.
func FromEnviron(environ []string) []string {
	var out []string
	for _, kv := range environ {
		k, v, ok := strings.Cut(kv, "=")
		if ok && len(v) >= MinSecretLen && IsSecretEnvName(k) && utf8.ValidString(v) {
			out = append(out, v)
		}
	}
	return out
}
