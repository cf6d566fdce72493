package streamwrap

import (
	"strings"
	"sync"
	"unsafe"

	"github.com/ocbench/ocbench/llm"
)

// Allowlist is a set of tool names as the tools are registered, with the
// lookups OpenClaw's name resolution needs (exact, and unique
// case-insensitive). It is immutable once built and safe for concurrent use.
// A nil or empty Allowlist means "no allowlist".
type Allowlist struct {
	names []string

	// slow caches the slow-path resolutions of non-blank names (which do
	// not depend on the id), per requireAllowed: unknown names reach the
	// slow path on every stream. Bounded: dropped whole past slowCacheMax.
	mu   sync.Mutex
	slow [2]map[string]slowResult
}

type slowResult struct {
	name string
	ok   bool
}

const slowCacheMax = 4096

func (a *Allowlist) cached(name string, requireAllowed bool) (slowResult, bool) {
	i := 0
	if requireAllowed {
		i = 1
	}
	a.mu.Lock()
	r, ok := a.slow[i][name]
	a.mu.Unlock()
	return r, ok
}

func (a *Allowlist) remember(name string, requireAllowed bool, r slowResult) {
	i := 0
	if requireAllowed {
		i = 1
	}
	a.mu.Lock()
	if a.slow[i] == nil || len(a.slow[i]) >= slowCacheMax {
		a.slow[i] = make(map[string]slowResult)
	}
	a.slow[i][strings.Clone(name)] = slowResult{name: strings.Clone(r.name), ok: r.ok}
	a.mu.Unlock()
}

// NewAllowlist returns an allowlist of names; empty names are ignored.
func NewAllowlist(names ...string) *Allowlist {
	a := &Allowlist{names: make([]string, 0, len(names))}
	for _, n := range names {
		if n != "" {
			a.names = append(a.names, n)
		}
	}
	return a
}

// Len returns the number of names; zero for a nil Allowlist.
func (a *Allowlist) Len() int {
	if a == nil {
		return 0
	}
	return len(a.names)
}

// Names returns the names in registration order. The slice must not be
// modified.
func (a *Allowlist) Names() []string {
	if a == nil {
		return nil
	}
	return a.names
}

// Has reports whether name is in a exactly.
func (a *Allowlist) Has(name string) bool {
	if a == nil {
		return false
	}
	for _, n := range a.names {
		if n == name {
			return true
		}
	}
	return false
}

// fold returns the allowlist's spelling of the one name that equals name
// ignoring case; two or more such names give no match.
func (a *Allowlist) fold(name string) (string, bool) {
	if a == nil || name == "" {
		return "", false
	}
	found, hits := "", 0
	for _, n := range a.names {
		if len(n) == len(name) && strings.EqualFold(n, name) || len(n) != len(name) && foldEqualSlow(n, name) {
			if hits == 0 || n != found {
				hits++
			}
			found = n
		}
	}
	if hits == 1 {
		return found, true
	}
	return "", false
}

// foldEqualSlow compares with JavaScript's toLowerCase semantics where byte
// lengths differ (non-ASCII case pairs of different widths).
func foldEqualSlow(a, b string) bool {
	if isASCII(a) && isASCII(b) {
		return false
	}
	return strings.ToLower(a) == strings.ToLower(b)
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// b2s views b as a string without copying. The string must not outlive the
// next change of b.
func b2s(b []byte) string {
	if len(b) == 0 {
		return ""
	}
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// toLower returns s lowercased as JavaScript's toLowerCase does; it
// allocates only when s has an upper-case letter.
func toLower(s string) string {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x80 || 'A' <= c && c <= 'Z' {
			return strings.ToLower(s)
		}
	}
	return s
}

// NormalizeToolPolicyName is OpenClaw's normalizeToolPolicyName: it trims
// and lowercases name and applies the aliases bash→exec,
// apply-patch→apply_patch and cron→automations.
func NormalizeToolPolicyName(name string) string {
	n := toLower(trimSpace(name))
	switch n {
	case "bash":
		return "exec"
	case "apply-patch":
		return "apply_patch"
	case "cron":
		return "automations"
	}
	return n
}

// ResolveToolName is OpenClaw's resolveToolCallName (streamwrap.md §4.1):
// it maps a tool name as the model wrote it to the allowlist's spelling of
// a tool, inferring a blank name from the tool-call id.
//
// Without requireAllowed it never fails: an unresolved name comes back
// trimmed (a blank one unchanged). With requireAllowed an unresolved,
// ambiguous or blank name gives ok false. It allocates only on the slow
// paths (names that are not an exact or case-folded allowlist hit).
func ResolveToolName(raw, id string, allowed *Allowlist, requireAllowed bool) (name string, ok bool) {
	trimmed := trimSpace(raw)
	if trimmed == "" {
		if n, ok := inferToolNameFromID(id, allowed); ok {
			return n, true
		}
		if requireAllowed {
			return "", false
		}
		return raw, true
	}
	if allowed.Len() == 0 {
		return trimmed, true
	}
	// Fast path: exact, policy-normalized, then unique case-folded hits.
	if allowed.Has(raw) {
		return raw, true
	}
	norm := NormalizeToolPolicyName(trimmed)
	if allowed.Has(norm) {
		return norm, true
	}
	if n, ok := allowed.fold(raw); ok {
		return n, true
	}
	if n, ok := allowed.fold(norm); ok {
		return n, true
	}
	// Slow path, cached per allowlist.
	if r, ok := allowed.cached(trimmed, requireAllowed); ok {
		return r.name, r.ok
	}
	n, ok := resolveSlow(trimmed, allowed, requireAllowed)
	allowed.remember(trimmed, requireAllowed, slowResult{n, ok})
	return n, ok
}

func resolveSlow(trimmed string, allowed *Allowlist, requireAllowed bool) (string, bool) {
	if n, ok := inferToolNameFromID(trimmed, allowed); ok {
		return n, true
	}
	if isCounterShapedName(trimmed) {
		if requireAllowed {
			return "", false
		}
		return trimmed, true
	}
	if n, ok := resolveStructured(trimmed, allowed); ok {
		return n, true
	}
	if requireAllowed {
		return "", false
	}
	return trimmed, true
}

// isCounterShapedName reports whether name looks like a malformed counter:
// ^(functions?|tools?)[._-]? ... ending in digits, after / became '.'.
func isCounterShapedName(name string) bool {
	if name == "" {
		return false
	}
	last := name[len(name)-1]
	if last < '0' || last > '9' {
		return false
	}
	return stripToolPrefix(name) != name || hasToolPrefixWord(name)
}

// hasToolPrefixWord reports a bare "function", "functions", "tool" or
// "tools" start (the optional separator already absent).
func hasToolPrefixWord(s string) bool {
	l := len(s)
	for _, p := range [...]string{"functions", "function", "tools", "tool"} {
		if l >= len(p) && strings.EqualFold(s[:len(p)], p) {
			return true
		}
	}
	return false
}

// stripToolPrefix removes a leading functions?[._-]? or tools?[._-]?
// (case-insensitive). It returns s unchanged when there is none.
func stripToolPrefix(s string) string {
	for _, p := range [...]string{"functions", "function", "tools", "tool"} {
		if len(s) >= len(p) && strings.EqualFold(s[:len(p)], p) {
			r := s[len(p):]
			if r != "" && (r[0] == '.' || r[0] == '_' || r[0] == '-' || r[0] == '/') {
				r = r[1:]
			}
			return r
		}
	}
	return s
}

// structuredCandidates is buildStructuredToolNameCandidates.
func structuredCandidates(name string) []string {
	seeds := []string{name}
	if i := strings.IndexAny(name[min(1, len(name)):], "\"'<"); i >= 0 {
		if p := trimSpace(name[:i+1]); p != "" {
			seeds = append(seeds, p)
		}
	}
	var out []string
	for _, s := range seeds {
		out = append(out, s, NormalizeToolPolicyName(s))
	}
	for _, s := range seeds {
		d := strings.ReplaceAll(s, "/", ".")
		out = append(out, d, NormalizeToolPolicyName(d))
		for i := 0; i < len(d); i++ {
			if d[i] == '.' && i+1 < len(d) {
				suf := d[i+1:]
				out = append(out, suf, NormalizeToolPolicyName(suf))
			}
		}
	}
	return out
}

// resolveStructured resolves name through its structured candidates: the
// first exact allowlist hit wins, then the first unique case-folded one.
func resolveStructured(name string, allowed *Allowlist) (string, bool) {
	if name == "" || allowed.Len() == 0 {
		return "", false
	}
	cands := structuredCandidates(name)
	for _, c := range cands {
		if c != "" && allowed.Has(c) {
			return c, true
		}
	}
	for _, c := range cands {
		if n, ok := allowed.fold(c); ok {
			return n, true
		}
	}
	return "", false
}

// stripTrailingCounter removes a trailing [:._/-]\d+.
func stripTrailingCounter(s string) string {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	if i == len(s) || i == 0 {
		return s
	}
	switch s[i-1] {
	case ':', '.', '_', '/', '-':
		return s[:i-1]
	}
	return s
}

func stripTrailingDigits(s string) string {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	return s[:i]
}

// inferToolNameFromID is inferToolNameFromToolCallId: it resolves candidate
// tokens built from id through the structured candidates; two tokens that
// resolve to different allowed names make the result ambiguous (no name).
func inferToolNameFromID(id string, allowed *Allowlist) (string, bool) {
	id = trimSpace(id)
	if id == "" || allowed.Len() == 0 {
		return "", false
	}
	seeds := []string{id}
	if i := strings.IndexByte(id, ':'); i > 0 {
		seeds = append(seeds, id[:i])
	}
	found := ""
	for _, seed := range seeds {
		base := []string{seed, stripTrailingCounter(seed), stripTrailingDigits(seed)}
		var toks []string
		for _, t := range base {
			toks = append(toks, t)
		}
		for _, t := range base {
			if strings.Contains(t, "/") {
				toks = append(toks, strings.ReplaceAll(t, "/", "."))
			}
		}
		n := len(toks)
		for _, t := range toks[:n] {
			if s := stripToolPrefix(t); s != t {
				toks = append(toks, s)
			}
		}
		for _, t := range toks {
			if t == "" {
				continue
			}
			r, ok := resolveStructured(t, allowed)
			if !ok {
				continue
			}
			if found != "" && r != found {
				return "", false
			}
			found = r
		}
	}
	return found, found != ""
}

// resolveReplayToolName is resolveReplayToolCallName: the raw name must be
// at most 128 characters and the resolved one at most 64, non-blank and
// free of whitespace. completed calls resolve without the allowlist.
func resolveReplayToolName(raw, id string, allowed *Allowlist, completed bool) (string, bool) {
	// utf16Len counts at most 2 per byte (a lone lead byte of a 4-byte
	// rune; valid text never more than 1): a short name is not measured.
	if len(raw) > 64 && utf16Len(raw) > 128 {
		return "", false
	}
	a := allowed
	if completed {
		a = nil
	}
	n, ok := ResolveToolName(raw, id, a, a.Len() > 0)
	if !ok {
		return "", false
	}
	if trimSpace(n) == "" || len(n) > 32 && utf16Len(n) > 64 || hasJSSpace(n) {
		return "", false
	}
	return n, true
}

// hasJSSpace reports whether s holds a JavaScript space: bytes in
// '!'..'~' are none, so only a name with others is decoded.
func hasJSSpace(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i]-'!' > '~'-'!' {
			return strings.ContainsFunc(s[i:], llm.IsJSSpace)
		}
	}
	return false
}

// utf16Len returns the length of s in UTF-16 code units, JavaScript's
// String.length.
func utf16Len[T string | []byte](s T) int {
	n := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c < 0x80 || c >= 0xc0 && c < 0xf0:
			n++ // ASCII or the lead byte of a 2- or 3-byte rune
		case c >= 0xf0:
			n += 2 // a 4-byte rune is a surrogate pair
		}
	}
	return n
}
